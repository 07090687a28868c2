import Foundation
import MediaTime
import Playback
import Testing
import MediaSinks
@testable import Audio

@Suite("What reaches the device through alsa-lib's file plugin")
struct OutputContentTests {
    @Test("a decoded AAC track reaches the device bit-exact as FFmpeg's own S16 decode")
    func aacBitExact() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("tone.m4a")
        try ffmpeg([
            "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-f", "lavfi",
            "-i", "sine=frequency=660:sample_rate=48000:duration=1", "-filter_complex", "[0][1]amerge=inputs=2",
            "-c:a", "aac", "-b:a", "128k", source,
        ])
        let decoded = try ffmpegDecode(source, format: "f32le").floats
        let expected = try ffmpegDecode(source, format: "s16le").int16s
        let format = AudioFormat(sampleRate: 48_000, channelCount: 2)

        let captured = try await capture(audioBuffers(decoded, format: format), in: directory)

        #expect(captured.count >= expected.count)
        #expect(Array(captured.prefix(expected.count)) == expected)
        #expect(captured.dropFirst(expected.count).allSatisfy { $0 == 0 })
    }

    @Test("a 44.1 kHz source resampled to the device rate matches FFmpeg's resampling of it")
    func resampledSource() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("tone44.wav")
        try ffmpeg(["-f", "lavfi", "-i", "sine=frequency=1000:sample_rate=44100:duration=0.5", "-ac", "2", source])
        // The engine resamples with libswresample to the output's rate; FFmpeg's CLI does the same.
        let resampled = try ffmpegDecode(source, format: "f32le", rate: 48_000).floats
        let expected = try ffmpegDecode(source, format: "s16le", rate: 48_000).int16s
        let format = AudioFormat(sampleRate: 48_000, channelCount: 2)

        let captured = try await capture(audioBuffers(resampled, format: format), in: directory)

        // Float resampling then one S16 conversion versus FFmpeg's S16 path: within one LSB.
        let pairs = zip(captured.prefix(expected.count), expected)
        #expect(captured.count >= expected.count)
        #expect(pairs.allSatisfy { abs(Int($0) - Int($1)) <= 1 })
    }

    @Test("the PCM stays open across streams: a second item follows the first without a gap")
    func gaplessAcrossItems() async throws {
        let directory = try TemporaryDirectory()
        let format = AudioFormat(sampleRate: 48_000, channelCount: 2)
        let first = sine(frequency: 500, amplitude: 0.5, frames: 4_800)
        let second = sine(frequency: 750, amplitude: 0.5, frames: 4_800)
        var buffers = audioBuffers(first, format: format)
        buffers += audioBuffers(second, format: format, start: 0)  // the next item's timeline starts at zero again

        let captured = try await capture(buffers, in: directory)

        let expected = (first + second).map { Int16(($0 * 32768).rounded(.toNearestOrEven)) }
        #expect(Array(captured.prefix(expected.count)) == expected)
    }
}
