import Foundation
import MediaSinks
import MediaTime
import Testing
@testable import Audio

/// The ambient volume with real alsa-lib on both sides: the output plays into the file plugin, the
/// room comes from a file through the file plugin's `infile`.
@Suite("AmbientVolume", .serialized)
struct AmbientVolumeTests {
    static let settings = AmbientVolumeController.Settings(
        levelRange: -60 ... -30, volumeRange: 0.2...1, maximumChangePerSecond: 2, timeConstant: 0.3, settleTime: 0.3, initialVolume: 0.5)

    /// Ticks `ambient` every 100 ms until `condition` holds (or `timeout` passes).
    func tick(_ ambient: AmbientVolume, timeout: Duration = .seconds(20), until condition: (AmbientVolume.Status) -> Bool) async throws -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while clock.now < deadline {
            if condition(ambient.tick()) { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    @Test("a scripted loud, then quiet room raises the master volume to the top, then lowers it to the bottom")
    func loudThenQuietRoom() async throws {
        let directory = try TemporaryDirectory()
        // 4 s of noise at about −15 dBFS RMS, then 60 s of noise at about −75 dBFS.
        let room = noise(frames: 48_000 * 4, channels: 1, amplitude: 0.3) + noise(frames: 48_000 * 60, channels: 1, amplitude: 0.0003, seed: 5)
        let source = try CaptureSource(room, in: directory)
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: directory.path("out.wav"))))
        try output.start()
        defer { output.stop() }
        let monitor = try AudioLevelMonitor(configuration: source.configuration)
        defer { monitor.stop() }
        #expect(monitor.deviceFormat.channelCount == 1)
        let ambient = AmbientVolume(output: output, monitor: monitor, settings: Self.settings) { 12 * 3_600 }
        #expect(output.masterVolume == 0.5)

        #expect(try await tick(ambient) { $0.volume == 1 }, "\(ambient.status)")
        #expect(output.masterVolume == 1)
        #expect(ambient.status.roomLevel.map { $0 > -30 } == true, "\(ambient.status)")
        #expect(try await tick(ambient) { $0.volume == 0.2 }, "\(ambient.status)")
        #expect(output.masterVolume == 0.2)
        #expect(ambient.status.roomLevel.map { $0 < -60 } == true, "\(ambient.status)")
    }

    @Test("while the output plays, a loud room does not raise the volume; once it is silent, it does")
    func measuresOnlyWhileTheSpeakerIsSilent() async throws {
        let directory = try TemporaryDirectory()
        let source = try CaptureSource(noise(frames: 48_000 * 60, channels: 1, amplitude: 0.3), in: directory)
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: directory.path("out.wav")),
            inputQueueFrames: 48_000 * 30))
        let input = output.makeInput(label: "soundtrack")
        // 3 s of tone: the speaker sounds.
        for buffer in audioBuffers(sine(frequency: 440, amplitude: 0.3, frames: 48_000 * 3), format: output.format) { _ = input.enqueue(buffer) }
        try output.start()
        defer { output.stop() }
        let monitor = try AudioLevelMonitor(configuration: source.configuration)
        defer { monitor.stop() }
        let ambient = AmbientVolume(output: output, monitor: monitor, settings: Self.settings) { 12 * 3_600 }

        // While the tone plays: nothing measured, the volume where it started.
        var ticks = 0
        while output.deviceTime.seconds < 2.8 {
            let status = ambient.tick()
            #expect(status.roomLevel == nil, "measured while the speaker played: \(status)")
            #expect(status.volume == 0.5)
            ticks += 1
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(ticks >= 5)
        // The tone ends; after the settle time the loud room is measured.
        #expect(try await tick(ambient) { $0.volume == 1 }, "\(ambient.status)")
        #expect(output.deviceTime.seconds >= 3.3, "measured before the tone had ended and settled")
        input.close()
    }
}
