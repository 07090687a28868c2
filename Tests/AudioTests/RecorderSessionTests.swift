import Foundation
import MediaAsset
import MediaTime
import Testing
@testable import Audio

/// What reaches a recorder from outside: the session's interruptions, and its device going away.
@Suite("AudioRecorder interruptions and route changes", .serialized)
struct RecorderSessionTests {
    /// Runs of consecutive source frames in `recorded`.
    func runs(_ recorded: [Int16], in source: [Int16]) -> [(start: Int, length: Int)] {
        var runs: [(Int, Int)] = []
        var position = 0
        while position < recorded.count / 2 {
            guard let start = locate(recorded[(position * 2)...], in: source) else { break }
            let length = matchingFrames(recorded[(position * 2)...], in: source, from: start)
            runs.append((start, length))
            position += length
        }
        return runs
    }

    @Test("an interruption pauses a .record recorder and it resumes after; a .playAndRecord one records through it")
    func interruptions() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 10, seed: 21)
        let source = try CaptureSource(samples, in: directory)
        let session = AudioSession(policy: .duck)
        let listening = try AudioRecorder(path: directory.path("record.wav"), configuration: source.configuration, category: .record)
        let through = try AudioRecorder(
            path: directory.path("through.wav"),
            configuration: AudioCaptureConfiguration(deviceName: "vitrine_second", configurationText: try CaptureSource(
                samples, in: directory, name: "vitrine_second").configurationText),
            category: .playAndRecord)
        session.register(listening)
        session.register(through)
        let listeningEvents = listening.events
        let throughEvents = through.events
        try listening.record()
        try through.record()
        #expect(try await waitUntil { listening.currentTime.seconds >= 0.3 && through.currentTime.seconds >= 0.3 })
        session.beginInterruption()
        #expect(!listening.isRecording)
        #expect(through.isRecording)
        try await Task.sleep(for: .milliseconds(400))
        session.endInterruption()
        #expect(listening.isRecording)
        let resumedAt = listening.currentTime
        #expect(try await waitUntil { listening.currentTime >= resumedAt + MediaTime(value: 3, timescale: 10) })
        listening.stop()
        through.stop()

        for events in [listeningEvents, throughEvents] {
            let seen = await waitForFinish(events).events
            #expect(seen.contains(.interruption(.began)), "\(seen)")
            #expect(seen.contains(.interruption(.ended(shouldResume: true))), "\(seen)")
        }
        let paused = runs(try decodeRaw(directory.path("record.wav"), format: "s16le").int16s, in: samples)
        #expect(paused.count == 2, "runs \(paused)")
        if paused.count == 2 {
            // About 0.4 s of the room was left out while the announcement played.
            let skipped = paused[1].start - (paused[0].start + paused[0].length)
            #expect(skipped >= 19_200 && skipped < 48_000, "skipped \(skipped) frames")
        }
        let continuous = runs(try decodeRaw(directory.path("through.wav"), format: "s16le").int16s, in: samples)
        #expect(continuous.count == 1, "runs \(continuous)")
    }

    @Test("a capture device that goes away ends the recording: a route change, an early finish, and a playable file",
          .enabled(if: PrivatePulseServer.isInstalled, "needs pulseaudio and libasound2-plugins"),
          arguments: ["flac", "m4a", "wav"])
    func deviceLossFinishesTheFile(_ format: String) async throws {
        let server = try PrivatePulseServer()
        let directory = try TemporaryDirectory()
        let path = directory.path("lost.\(format)")
        // The null sink's monitor: a clocked capture device that a killed server takes away.
        let configuration = AudioCaptureConfiguration(
            deviceName: "vitrine_mic",
            configurationText: "pcm.vitrine_mic { type pulse server \"unix:\(server.socketPath)\" device \"testsink.monitor\" }\n",
            stallTimeoutMilliseconds: 2_000)
        let recorder = try AudioRecorder(path: path, settings: .init(format: AudioFileFormat(rawValue: format)!), configuration: configuration)
        let events = recorder.events
        try recorder.record()
        #expect(try await waitUntil { recorder.currentTime.seconds >= 1 })
        server.stop()
        let finished = await waitForFinish(events)
        #expect(finished.successfully == false)
        let lost = finished.events.compactMap { event -> AudioRouteChange? in if case .routeChange(let change) = event { change } else { nil } }
        #expect(lost.first?.reason == .oldDeviceUnavailable)
        #expect(lost.first?.previousDevice == "vitrine_mic")
        #expect(!recorder.isRecording)

        let info = try probe(path)
        let duration = try #require(info["duration"].flatMap(Double.init), "\(info)")
        #expect(abs(duration - recorder.currentTime.seconds) <= 0.05, "file \(duration) s, recorded \(recorder.currentTime.seconds) s")
        #expect(duration >= 1)
        let decoded = try decodeRaw(path, format: "s16le")
        #expect(decoded.count >= 48_000 * 4)
    }
}
