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

@Suite("Players' own volume")
struct PlayerVolumeTests {
    /// The amplitude of `frequency` in the left channel of 16-bit stereo `samples` at 48 kHz (Goertzel),
    /// as a fraction of full scale.
    static func amplitude(of frequency: Double, in samples: [Int16]) -> Double {
        let left = stride(from: 0, to: samples.count - 1, by: 2).map { Double(samples[$0]) / 32768 }
        guard !left.isEmpty else { return 0 }
        let omega = 2 * Double.pi * frequency / 48_000
        var real = 0.0, imaginary = 0.0
        for (index, value) in left.enumerated() {
            real += value * cos(omega * Double(index))
            imaginary += value * sin(omega * Double(index))
        }
        return 2 * (real * real + imaginary * imaginary).squareRoot() / Double(left.count)
    }

    @Test("two players on one output: each one's volume and mute act on its own sound only")
    func independentVolumes() async throws {
        let directory = try TemporaryDirectory()
        // Two one-second tones, 440 Hz and 880 Hz, AAC stereo.
        for (name, frequency) in [("low.m4a", 440), ("high.m4a", 880)] {
            try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=48000:duration=1", "-ac", "2",
                        "-c:a", "aac", "-b:a", "128k", directory.path(name)])
        }
        let file = directory.path("mix.wav")
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file)))
        try output.start()
        let low = Player(item: PlayerItem(url: directory.path("low.m4a")), videoSink: try NullVideoSink(),
                         audioSink: output.makeInput(label: "low"))
        let high = Player(item: PlayerItem(url: directory.path("high.m4a")), videoSink: try NullVideoSink(),
                          audioSink: output.makeInput(label: "high"))
        low.volume = 0.5
        high.volume = 0.8
        high.isMuted = true
        #expect(low.volume == 0.5 && !low.isMuted && high.volume == 0.8 && high.isMuted)
        low.volume = 7  // clamped
        #expect(low.volume == 1)
        low.volume = 0.5
        for player in [low, high] { player.play() }
        _ = try await waitUntil { low.rate == 0 && high.rate == 0 }
        let end = output.deviceTime + MediaTime(value: 1, timescale: 5)
        _ = try await waitUntil { output.deviceTime > end }
        low.invalidate()
        high.invalidate()
        output.stop()

        let captured = try readWAVSamples(file)
        let start = try #require(captured.firstIndex { $0 != 0 })
        // The middle half second of the tones (away from the ramps and the codec's edges), against
        // FFmpeg's own decode of the 440 Hz file at full volume.
        let middle = Array(captured.dropFirst(start + 2 * 12_000).prefix(2 * 24_000))
        let reference = try ffmpegDecode(directory.path("low.m4a"), format: "s16le").int16s
        let full = Self.amplitude(of: 440, in: Array(reference.dropFirst(2 * 12_000).prefix(2 * 24_000)))
        let lowLevel = Self.amplitude(of: 440, in: middle), highLevel = Self.amplitude(of: 880, in: middle)
        #expect(full > 0.05, "the reference tone: \(full)")
        #expect(abs(lowLevel / full - 0.5) < 0.02, "440 Hz at half its level: \(lowLevel) of \(full)")
        #expect(highLevel < full / 1000, "880 Hz muted: \(highLevel)")
    }
}
