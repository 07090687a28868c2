public import MediaTime
import Logging
import Threading

/// The volume that follows the room: a level monitor on a microphone, the output's own knowledge of
/// when its speaker is silent, and an ``AmbientVolumeController`` deciding the output's master volume.
///
/// Call ``tick()`` a few times a second (the command line's service does, every 250 ms): each tick
/// takes the room's level since the last one from the monitor, asks the output since when it has
/// been silent, steps the controller and sets ``ALSAOutput/masterVolume`` when it moved. Ticks may
/// come from any thread, one at a time.
public final class AmbientVolume: Sendable {
    public let output: ALSAOutput
    public let monitor: AudioLevelMonitor
    private let clock: any HostClock
    private let localSecondsIntoDay: @Sendable () -> Int
    private let controller: LockedValue<Steering>

    /// The controller and what was last logged of it.
    private struct Steering {
        var controller: AmbientVolumeController
        var loggedTarget: Float?
        var loggedQuiet = false
    }
    private static let logger = Logger(label: "vitrine.audio.ambient")

    /// What the controller decided last, for logs and status pages.
    public struct Status: Sendable, Hashable, CustomStringConvertible {
        public var phase: AmbientVolumeController.Phase
        /// The room's averaged level (dBFS), or `nil` before the first measurement.
        public var roomLevel: Float?
        public var volume: Float
        public var target: Float
        public var isQuiet: Bool

        public var description: String {
            let room = roomLevel.map { "room \(Self.format($0)) dBFS" } ?? "room not measured yet"
            return "\(room), volume \(Self.format(volume)) → \(Self.format(target))\(isQuiet ? " (quiet hours)" : ""), \(phase)"
        }

        static func format(_ value: Float) -> String {
            let rounded = (value * 100).rounded() / 100
            return "\(rounded)"
        }
    }

    /// Drives `output`'s master volume from `monitor`'s room level with `settings`.
    /// `localSecondsIntoDay` gives the local time of day for the quiet hours; `clock` the host time of each tick.
    public init(output: ALSAOutput, monitor: AudioLevelMonitor, settings: AmbientVolumeController.Settings,
                clock: any HostClock = MonotonicClock(), localSecondsIntoDay: @escaping @Sendable () -> Int) {
        self.output = output
        self.monitor = monitor
        self.clock = clock
        self.localSecondsIntoDay = localSecondsIntoDay
        controller = LockedValue(Steering(controller: AmbientVolumeController(settings: settings)))
        output.tracksSilence = true
        // The volume is right from the start: the initial one, or the quiet hours' cap.
        output.masterVolume = tick().volume
    }

    /// One step: measure, decide, set the master volume. Returns the status after it.
    @discardableResult
    public func tick() -> Status {
        let observation = AmbientVolumeController.Observation(
            now: clock.now(), room: monitor.takeLevel(), speakerSilentSince: output.heardSilenceStart(),
            localSecondsIntoDay: localSecondsIntoDay())
        let (volume, status, isNews) = controller.withLock { steering in
            let volume = steering.controller.step(observation)
            let status = Self.status(steering.controller)
            // The log says where the volume is heading when that moved noticeably, and when the quiet hours begin or end.
            let isNews = (steering.loggedTarget.map { abs($0 - status.target) >= 0.05 } ?? true) || steering.loggedQuiet != status.isQuiet
            if isNews {
                steering.loggedTarget = status.target
                steering.loggedQuiet = status.isQuiet
            }
            return (volume, status, isNews)
        }
        if let volume { output.masterVolume = volume }
        if isNews { Self.logger.info("ambient volume: \(status)") }
        return status
    }

    /// The controller's state now.
    public var status: Status { controller.withLock { Self.status($0.controller) } }

    private static func status(_ controller: AmbientVolumeController) -> Status {
        Status(phase: controller.phase, roomLevel: controller.roomLevel, volume: controller.volume, target: controller.target,
               isQuiet: controller.isQuiet)
    }
}
