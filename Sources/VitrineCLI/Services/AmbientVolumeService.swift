import Audio
import Config
import Logging
import MediaTime
import Scheduling
import ServiceLifecycle
import ShowRunner

/// The ambient volume as a service (`[audio.ambient]`): four times a second it measures the room
/// in the speaker's gaps and sets the master volume; on shutdown it closes the microphone. It is
/// started after the sound output, so it stops before it.
struct AmbientVolumeService: Service, CustomStringConvertible {
    let ambient: AmbientVolume
    let interval: Duration

    var description: String { "ambient volume from \(ambient.monitor.configuration.deviceName)" }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                ambient.tick()
                try? await Task.sleep(for: interval)
            }
        }
        ambient.monitor.stop()
    }

    /// The ambient volume the configuration asks for, on `output`: its microphone opened (or waited
    /// for: a missing microphone leaves the volume where it starts), its quiet hours in the table's
    /// time zone, else `zone` (the schedule's). `nil`, logged, when the microphone cannot be used at all.
    static func make(_ settings: Configuration.Ambient, output: ALSAOutput, initialVolume: Double?, zone: ZoneInfo,
                     clock: ShowClock, logger: Logger) -> AmbientVolumeService? {
        let monitor: AudioLevelMonitor
        do {
            monitor = try AudioLevelMonitor(configuration: AudioCaptureConfiguration(deviceName: settings.device), waitsForDevice: true)
        } catch {
            logger.error("the ambient volume is off: \(error)")
            return nil
        }
        let quietZone = settings.timeZone.flatMap { try? ZoneInfo(identifier: $0) } ?? zone
        let controllerSettings = AmbientVolumeController.Settings(
            levelRange: Float(settings.levelRange.lowerBound)...Float(settings.levelRange.upperBound),
            volumeRange: Float(settings.volumeRange.lowerBound)...Float(settings.volumeRange.upperBound),
            maximumChangePerSecond: Float(settings.maximumChangePerSecond), timeConstant: settings.timeConstant,
            quietHours: settings.quietHours.map { .init(start: $0.start, end: $0.end, volume: Float($0.volume)) },
            initialVolume: initialVolume.map(Float.init))
        let ambient = AmbientVolume(output: output, monitor: monitor, settings: controllerSettings) {
            quietZone.localDateTime(at: clock.now()).time.secondsIntoDay
        }
        logger.info("ambient volume from \(settings.device): room \(settings.levelRange) dBFS → volume \(settings.volumeRange)",
                    metadata: ["quiet_hours": "\(settings.quietHours.map { "\($0.start)-\($0.end) s, at most \($0.volume)" } ?? "none")",
                               "time_zone": "\(quietZone)"])
        return AmbientVolumeService(ambient: ambient, interval: .milliseconds(250))
    }
}
