import Foundation
import MediaTime
import Testing
@testable import Audio

/// The ambient volume's decisions on a clock the test steps: scripted rooms, speaker gaps, quiet hours.
@Suite("AmbientVolumeController")
struct AmbientVolumeControllerTests {
    static let settings = AmbientVolumeController.Settings(
        levelRange: -60 ... -30, volumeRange: 0.2...1, maximumChangePerSecond: 0.1, timeConstant: 5, settleTime: 0.5, initialVolume: 0.6)

    /// A room at `level` dBFS (RMS) over `window` ending at `end`.
    static func room(_ level: Double, endingAt end: MediaTime, window: MediaTime = .fromSeconds(0.25)) -> CapturedLevel {
        CapturedLevel(start: end - window, end: end, meanSquare: pow(10, level / 10), frameCount: 12_000)
    }

    /// Steps `controller` every 250 ms from `clock`'s time for `seconds`, with the room at `level`
    /// and the speaker silent since `silentSince` (`nil`: sounding). Returns each step's volume.
    static func run(_ controller: inout AmbientVolumeController, clock: ManualClock, seconds: Double, level: Double,
                    silentSince: MediaTime?, at secondsIntoDay: Int = 12 * 3_600) -> [Float] {
        var volumes: [Float] = []
        for _ in 0..<Int(seconds * 4) {
            clock.advance(by: .fromSeconds(0.25))
            let now = clock.now()
            _ = controller.step(.init(now: now, room: room(level, endingAt: now), speakerSilentSince: silentSince,
                                      localSecondsIntoDay: secondsIntoDay))
            volumes.append(controller.volume)
        }
        return volumes
    }

    @Test("a scripted loud then quiet room: the volume climbs to the top, then falls to the bottom, never faster than allowed")
    func loudThenQuiet() {
        let clock = ManualClock(start: .fromSeconds(100))
        var controller = AmbientVolumeController(settings: Self.settings)
        #expect(controller.step(.init(now: clock.now(), room: nil, speakerSilentSince: .zero, localSecondsIntoDay: 0)) == nil)
        #expect(controller.volume == 0.6)
        #expect(controller.phase == .waitingForGap)

        let loud = Self.run(&controller, clock: clock, seconds: 20, level: -25, silentSince: .zero)
        #expect(controller.phase == .measuring)
        #expect(abs(controller.roomLevel! - (-25)) < 0.01)
        #expect(loud.last == 1)
        // 0.1 per second: from 0.6 to 1 takes 4 s, not one step.
        #expect(loud[3] < 0.75)
        let quiet = Self.run(&controller, clock: clock, seconds: 60, level: -70, silentSince: .zero)
        #expect(abs(quiet.last! - 0.2) < 0.001)
        let steps = zip([loud.last!] + quiet, quiet).map { abs($1 - $0) }
        #expect(steps.allSatisfy { $0 <= 0.025 + 1e-6 }, "a step moved more than 0.1/s × 0.25 s")
    }

    @Test("the room's average follows a change with the time constant: 63 % of the way (in power) after one time constant")
    func timeConstant() {
        let clock = ManualClock(start: .fromSeconds(10))
        var controller = AmbientVolumeController(settings: Self.settings)
        _ = Self.run(&controller, clock: clock, seconds: 1, level: -60, silentSince: .zero)
        _ = Self.run(&controller, clock: clock, seconds: 5, level: -40, silentSince: .zero)
        let low = pow(10, -60 / 10.0), high = pow(10, -40 / 10.0)
        let expected = 10 * log10(low + (1 - exp(-1)) * (high - low))
        #expect(abs(Double(controller.roomLevel!) - expected) < 0.05, "room \(controller.roomLevel!) dBFS, expected \(expected)")
    }

    @Test("what the microphone hears while the speaker plays, or less than the settle time after it stopped, is not measured")
    func measuresOnlyInGaps() {
        let clock = ManualClock(start: .fromSeconds(50))
        var controller = AmbientVolumeController(settings: Self.settings)
        _ = Self.run(&controller, clock: clock, seconds: 10, level: -20, silentSince: nil)
        #expect(controller.roomLevel == nil)
        #expect(controller.volume == 0.6)
        #expect(controller.phase == .waitingForGap)
        // Silent for 0.4 s before each window: the room still rings with the last sound.
        for _ in 0..<20 {
            clock.advance(by: .fromSeconds(0.25))
            let now = clock.now()
            _ = controller.step(.init(now: now, room: Self.room(-20, endingAt: now), speakerSilentSince: now - .fromSeconds(0.65),
                                      localSecondsIntoDay: 0))
        }
        #expect(controller.roomLevel == nil)
        // Silent long enough: measured.
        let silence = clock.now()
        _ = Self.run(&controller, clock: clock, seconds: 2, level: -45, silentSince: silence)
        #expect(controller.roomLevel.map { abs($0 - (-45)) < 0.01 } == true)
        // The speaker plays again, the room is loud: the measurement holds.
        _ = Self.run(&controller, clock: clock, seconds: 10, level: -10, silentSince: nil)
        #expect(controller.phase == .holding)
        #expect(controller.roomLevel.map { abs($0 - (-45)) < 0.01 } == true)
        #expect(abs(controller.target - 0.6) < 0.001)
    }

    @Test("quiet hours cap the volume, across midnight, and a start inside them is quiet at once")
    func quietHours() {
        var settings = Self.settings
        settings.quietHours = .init(start: 22 * 3_600, end: 7 * 3_600, volume: 0.3)
        #expect(settings.quietHours!.contains(23 * 3_600))
        #expect(settings.quietHours!.contains(3 * 3_600))
        #expect(!settings.quietHours!.contains(7 * 3_600))
        #expect(!settings.quietHours!.contains(12 * 3_600))

        let clock = ManualClock(start: .fromSeconds(1_000))
        var controller = AmbientVolumeController(settings: settings)
        // Started at 23:00: the first step sets the capped volume outright.
        #expect(controller.step(.init(now: clock.now(), room: nil, speakerSilentSince: nil, localSecondsIntoDay: 23 * 3_600)) == 0.3)
        #expect(controller.isQuiet)
        let night = Self.run(&controller, clock: clock, seconds: 30, level: -20, silentSince: .zero, at: 23 * 3_600)
        #expect(night.allSatisfy { $0 <= 0.3 })
        // 07:00: the loud room's volume comes back at the allowed speed.
        let morning = Self.run(&controller, clock: clock, seconds: 10, level: -20, silentSince: .zero, at: 7 * 3_600)
        #expect(!controller.isQuiet)
        #expect(abs(morning.last! - 1) < 0.001)
        #expect(morning[0] <= 0.3 + 0.025 + 1e-6)
    }

    @Test("the level range maps linearly onto the volume range, clamped outside it")
    func mapping() {
        for (level, volume) in [(-80.0, Float(0.2)), (-60, 0.2), (-45, 0.6), (-30, 1), (-5, 1)] {
            let clock = ManualClock(start: .fromSeconds(5))
            var controller = AmbientVolumeController(settings: Self.settings)
            _ = Self.run(&controller, clock: clock, seconds: 1, level: level, silentSince: .zero)
            #expect(abs(controller.target - volume) < 0.001, "room \(level) dBFS: target \(controller.target), expected \(volume)")
        }
    }
}

extension MediaTime {
    static func fromSeconds(_ seconds: Double) -> MediaTime { MediaTime(seconds: seconds, preferredTimescale: 1_000_000) }
}
