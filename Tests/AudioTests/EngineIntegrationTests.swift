import Foundation
import MediaTime
import Playback
import Testing
import MediaSinks
@testable import Audio

@Suite("The engine playing into the ALSA output")
struct EngineIntegrationTests {
    @Test("an AAC file played by the engine reaches the device as FFmpeg's own S16 decode")
    func engineSoundtrackBitExact() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("song.m4a")
        try ffmpeg([
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-f", "lavfi",
            "-i", "sine=frequency=880:sample_rate=48000:duration=1", "-filter_complex", "[0][1]amerge=inputs=2",
            "-c:a", "aac", "-b:a", "128k", source,
        ])
        let expected = try ffmpegDecode(source, format: "s16le").int16s
        let file = directory.path("engine.wav")
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file)))
        let soundtrack = output.makeInput(label: "soundtrack")
        try output.start()
        let player = Player(item: PlayerItem(url: source), videoSink: try NullVideoSink(), audioSink: soundtrack)
        let events = player.events
        player.play()
        let ended = Task {
            for await event in events { if case .didPlayToEndTime = event { return true } }
            return false
        }
        let timeout = Task {
            try await Task.sleep(for: .seconds(20))
            ended.cancel()
        }
        #expect(await ended.value)
        timeout.cancel()
        let end = output.deviceTime + MediaTime(value: 1, timescale: 5)
        _ = try await waitUntil { output.deviceTime > end }
        player.invalidate()
        output.stop()

        let captured = try readWAVSamples(file)
        let start = try #require(captured.firstIndex { $0 != 0 })
        let expectedStart = try #require(expected.firstIndex { $0 != 0 })
        let head = start - expectedStart
        #expect(head >= 0 && head % 2 == 0)
        let played = Array(captured.dropFirst(head).prefix(expected.count))
        #expect(played.count == expected.count)
        #expect(played == expected)
    }
}
