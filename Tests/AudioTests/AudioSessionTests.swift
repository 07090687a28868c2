import Foundation
import MediaTime
import Testing
@testable import Audio

@Suite("AudioSession: interruptions")
struct AudioSessionTests {
    @Test("with the pause policy the music pauses for the interruption and resumes where it stopped")
    func pausePolicy() async throws {
        let directory = try TemporaryDirectory()
        let music = directory.path("music.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5|0.5:s=48000:d=5", music])
        let file = directory.path("session.wav")
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file)))
        let session = AudioSession(policy: .pause, resumesAfterInterruption: true)
        let bed = try AudioPlayer(contentsOf: music, output: output)
        session.register(bed)
        let events = session.interruptions
        var iterator = events.makeAsyncIterator()
        bed.play()
        try output.start()
        _ = try await waitUntil { output.deviceTime.seconds > 0.2 }

        session.beginInterruption()
        #expect(await iterator.next() == .began)
        // What was already written plays out, then the position holds.
        let settled = output.deviceTime + MediaTime(value: 2, timescale: 10)
        _ = try await waitUntil { output.deviceTime > settled }
        let pausedAt = bed.currentTime
        let resumeAfter = output.deviceTime + MediaTime(value: 2, timescale: 10)
        _ = try await waitUntil { output.deviceTime > resumeAfter }
        #expect(bed.currentTime == pausedAt)
        session.endInterruption()
        #expect(await iterator.next() == .ended(shouldResume: true))
        _ = try await waitUntil { bed.currentTime > pausedAt + MediaTime(value: 1, timescale: 10) }
        output.stop()

        // The capture holds a stretch of silence (the pause) between two stretches of music.
        let captured = try readWAVSamples(file)
        let frames = captured.count / 2
        let firstSound = try #require((0..<frames).first { captured[$0 * 2] != 0 })
        let silenceStart = try #require((firstSound..<frames).first { captured[$0 * 2] == 0 })
        let soundAgain = try #require((silenceStart..<frames).first { captured[$0 * 2] != 0 })
        #expect(soundAgain - silenceStart > 4_800)
    }

    @Test("an interruption ended without resuming leaves the music paused")
    func noResume() async throws {
        let directory = try TemporaryDirectory()
        let music = directory.path("music.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5|0.5:s=48000:d=2", music])
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: directory.path("x.wav"))))
        let session = AudioSession(policy: .pause, resumesAfterInterruption: false)
        let bed = try AudioPlayer(contentsOf: music, output: output)
        session.register(bed)
        let events = session.interruptions
        var iterator = events.makeAsyncIterator()
        bed.play()
        try output.start()
        session.beginInterruption()
        session.endInterruption()
        #expect(await iterator.next() == .began)
        #expect(await iterator.next() == .ended(shouldResume: false))
        let settled = output.deviceTime + MediaTime(value: 2, timescale: 10)
        _ = try await waitUntil { output.deviceTime > settled }
        let stoppedAt = bed.currentTime
        let later = output.deviceTime + MediaTime(value: 3, timescale: 10)
        _ = try await waitUntil { output.deviceTime > later }
        #expect(bed.currentTime == stoppedAt)
        output.stop()
    }
}
