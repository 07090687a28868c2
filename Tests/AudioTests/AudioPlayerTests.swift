import Foundation
import MediaTime
import Playback
import Synchronization
import Testing
@testable import Audio
import Threading

/// An output capturing to a WAV file through the file plugin, for player tests.
private func captureOutput(_ directory: TemporaryDirectory) throws -> (ALSAOutput, String) {
    let file = directory.path("players-\(UUID().uuidString).wav")
    let output = try ALSAOutput(configuration: .init(
        deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file)))
    return (output, file)
}

@Suite("AudioPlayer: files mixed into the output")
struct AudioPlayerTests {
    @Test("a looped tone repeats sample for sample: no discontinuity at the seam")
    func seamlessLoop() async throws {
        let directory = try TemporaryDirectory()
        let tone = directory.path("tone.wav")
        // 0.1 s of 1 kHz = 4 800 frames; a sample level ramp makes any skipped or repeated sample visible.
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*1000*t)+0.3*t:s=48000:d=0.1", "-ac", "2", "-c:a", "pcm_f32le", tone])
        let (output, file) = try captureOutput(directory)
        let player = try AudioPlayer(contentsOf: tone, output: output)
        player.numberOfLoops = 3
        let finished = LockedValue(false)
        player.setFinishHandler { _ in finished.withLock { $0 = true } }
        #expect(player.duration == MediaTime(value: 4_800, timescale: 48_000))
        player.prepareToPlay()
        player.play()
        try output.start()
        #expect(try await waitUntil { finished.withLock { $0 } })
        #expect(!player.isPlaying)
        output.stop()

        let captured = try readWAVSamples(file)
        let once = try ffmpegDecode(tone, format: "s16le").int16s
        #expect(once.count == 9_600)
        let expected = once + once + once + once
        #expect(captured.count >= expected.count)
        #expect(Array(captured.prefix(expected.count)) == expected)
        #expect(captured.dropFirst(expected.count).allSatisfy { $0 == 0 })
    }

    @Test("two players started with play(atTime:) begin on the same sample")
    func sampleAlignedStart() async throws {
        let directory = try TemporaryDirectory()
        let low = directory.path("low.wav")
        let high = directory.path("high.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.25|0.25:s=48000:d=0.2", low])
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5|0.5:s=44100:d=0.2", high])
        let (output, file) = try captureOutput(directory)
        let left = try AudioPlayer(contentsOf: low, output: output)
        let right = try AudioPlayer(contentsOf: high, output: output)
        left.pan = -1
        right.pan = 1
        left.prepareToPlay()
        right.prepareToPlay()
        try output.start()
        _ = try await waitUntil { output.deviceTime.seconds > 0.05 }
        let start = output.deviceTime + MediaTime(value: 1, timescale: 10)
        left.play(atTime: start)
        right.play(atTime: start)
        #expect(try await waitUntil { output.deviceTime > start + MediaTime(value: 3, timescale: 10) })
        output.stop()

        let captured = try readWAVSamples(file)
        let frames = captured.count / 2
        let firstLeft = (0..<frames).first { captured[$0 * 2] != 0 }
        let firstRight = (0..<frames).first { captured[$0 * 2 + 1] != 0 }
        let startFrame = Int(start.convertScale(48_000).value)
        #expect(firstLeft == startFrame)
        #expect(firstRight == startFrame)
    }

    @Test("an announcement ducks the music by the configured amount and restores it after")
    func ducking() async throws {
        let directory = try TemporaryDirectory()
        let music = directory.path("music.wav")
        let announcement = directory.path("announcement.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5|0.5:s=48000:d=1", music])
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.1|0.1:s=48000:d=0.3", announcement])
        let (output, file) = try captureOutput(directory)
        let session = AudioSession(policy: .duck, duckLevel: 0.25)
        let bed = try AudioPlayer(contentsOf: music, output: output)
        let voice = try AudioPlayer(contentsOf: announcement, output: output, category: .announcement)
        bed.numberOfLoops = -1
        bed.pan = -1  // music on the left, the announcement on both: the left channel shows the ducking
        session.register(bed)
        let events = session.interruptions
        bed.play()
        try output.start()
        _ = try await waitUntil { output.deviceTime.seconds > 0.3 }
        session.playAnnouncement(voice)
        var iterator = events.makeAsyncIterator()
        #expect(await iterator.next() == .began)
        #expect(await iterator.next() == .ended(shouldResume: true))
        let end = output.deviceTime + MediaTime(value: 2, timescale: 10)
        _ = try await waitUntil { output.deviceTime > end }
        output.stop()

        let captured = try readWAVSamples(file)
        let rightChannel = stride(from: 1, to: captured.count, by: 2).map { captured[$0] }
        let leftChannel = stride(from: 0, to: captured.count, by: 2).map { captured[$0] }
        // Where the announcement plays (right channel non-zero), the music is at 0.25 × 0.5 plus the voice.
        let during = rightChannel.indices.filter { rightChannel[$0] != 0 }
        #expect(during.count > 10_000)
        let full = Int16(0.5 * 32768)
        let ducked = Int16(0.5 * 0.25 * 32768 + 0.1 * 32768)
        let settled = during.dropFirst(1_500).dropLast(1_500)
        #expect(settled.allSatisfy { abs(Int(leftChannel[$0]) - Int(ducked)) <= 2 })
        // Before and after, the music plays at full level.
        #expect(leftChannel[during.first! - 100] == full)
        #expect(leftChannel[during.last! + 2_400 + 960] == full)
    }

    @Test("an undecodable file fails with FFmpeg's reason and the file's name")
    func undecodable() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("noise.mp3")
        try Data("this is not audio at all".utf8).write(to: URL(fileURLWithPath: path))
        let (output, _) = try captureOutput(directory)
        #expect {
            _ = try AudioPlayer(contentsOf: path, output: output)
        } throws: { error in
            "\(error)".contains("noise.mp3")
        }
    }

    @Test("a player made from bytes in memory plays them")
    func inMemoryData() async throws {
        let directory = try TemporaryDirectory()
        let tone = directory.path("tone.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.25|0.25:s=48000:d=0.05", tone])
        let data = try [UInt8](Data(contentsOf: URL(fileURLWithPath: tone)))
        let (output, _) = try captureOutput(directory)
        let player = try AudioPlayer(data: data, output: output)
        #expect(player.duration == MediaTime(value: 2_400, timescale: 48_000))
        player.isMeteringEnabled = true
        player.numberOfLoops = -1
        player.play()
        try output.start()
        _ = try await waitUntil { output.deviceTime.seconds > 0.2 }
        player.updateMeters()
        #expect(abs(player.averagePower(forChannel: 0) - -12.04) < 0.1)
        output.stop()
    }

    @Test("rate 2 plays the track in half the time at the same pitch")
    func doubleRate() async throws {
        let directory = try TemporaryDirectory()
        let tone = directory.path("tone.wav")
        try ffmpeg(["-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*1000*t)|0.5*sin(2*PI*1000*t):s=48000:d=0.5", tone])
        let (output, file) = try captureOutput(directory)
        let player = try AudioPlayer(contentsOf: tone, output: output)
        player.rate = 2
        #expect(player.rate == 2)
        let finished = LockedValue(false)
        player.setFinishHandler { _ in finished.withLock { $0 = true } }
        player.play()
        try output.start()
        #expect(try await waitUntil { finished.withLock { $0 } })
        output.stop()

        let captured = try readWAVSamples(file)
        let left = stride(from: 0, to: captured.count, by: 2).map { captured[$0] }
        let first = try #require(left.firstIndex { $0 != 0 })
        let last = try #require(left.lastIndex { $0 != 0 })
        let played = last - first + 1
        #expect(abs(played - 12_000) < 1_200, "played \(played) frames")
        // Pitch kept: rising zero crossings per second stay at 1 kHz.
        let body = Array(left[(first + 1_000)..<(last - 1_000)])
        let crossings = zip(body, body.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        let frequency = Double(crossings) * 48_000 / Double(body.count)
        #expect(abs(frequency - 1_000) < 30, "\(frequency) Hz")
    }
}
