import ChildProcesses
import Foundation
import MediaAsset
import MediaSinks
import MediaTime
import Testing
@testable import Playback

/// The decoder that starts on one thread and moves to frame threads at a keyframe: the frames
/// it gives are exactly a single-threaded decoder's, in order, whatever the group structure.
@Suite("Video stream decoder")
struct VideoStreamDecoderTests {
    /// One decoded picture: its timestamp and a hash of its luma plane.
    struct Picture: Equatable, CustomStringConvertible {
        var pts: Int64
        var luma: UInt64
        var description: String { "\(pts):\(String(luma, radix: 16))" }
    }

    @Test(
        "moving to frame threads in the middle of a group of pictures loses, repeats and reorders no frame",
        arguments: [
            ("H.264, closed GOPs", ["-c:v", "libx264", "-bf", "3", "-x264-params", "keyint=12:min-keyint=12:scenecut=0"]),
            ("H.264, open GOPs", ["-c:v", "libx264", "-bf", "3", "-x264-params", "keyint=12:min-keyint=12:scenecut=0:open-gop=1"]),
            ("HEVC, open GOPs", ["-c:v", "libx265", "-bf", "3", "-x265-params", "keyint=12:min-keyint=12:scenecut=0:open-gop=1:log-level=error"]),
        ])
    func moveIsExact(name: String, encoder: [String]) throws {
        let clip = try makeClip(encoder: encoder)
        defer { try? FileManager.default.removeItem(atPath: clip) }
        let reference = try decode(clip, adaptive: false, moveAfterPacket: nil)
        #expect(reference.pictures.count == 75, "\(name): the reference decode gave \(reference.pictures.count) frames")
        // After the 17th packet: inside the second group, so the move happens at the third keyframe.
        let moved = try decode(clip, adaptive: true, moveAfterPacket: 17)
        #expect(moved.frameThreaded, "\(name): the decoder did not move to frame threads")
        let same = moved.pictures == reference.pictures
        #expect(same, "\(name): \(firstDifference(moved.pictures, reference.pictures))")
    }

    @Test("a stream decoded in a tenth of each frame's time stays on one thread; at half of it, it moves, exactly")
    func loadDecides() throws {
        let clip = try makeClip(encoder: ["-c:v", "libx264", "-bf", "3", "-x264-params", "keyint=12:min-keyint=12:scenecut=0:open-gop=1"])
        defer { try? FileManager.default.removeItem(atPath: clip) }
        let decoded = try decode(clip, adaptive: true, moveAfterPacket: nil, load: 0.1)
        #expect(decoded.pictures.count == 75)
        #expect(!decoded.frameThreaded)
        let heavy = try decode(clip, adaptive: true, moveAfterPacket: nil, load: 0.5)
        #expect(heavy.frameThreaded)
        let same = heavy.pictures == decoded.pictures
        #expect(same, "\(firstDifference(heavy.pictures, decoded.pictures))")
    }

    @Test("a move asked for before a flush (a seek) is made at the flush, and decoding goes on from there")
    func moveAtFlush() throws {
        let clip = try makeClip(encoder: ["-c:v", "libx264", "-bf", "3", "-x264-params", "keyint=12:min-keyint=12:scenecut=0"])
        defer { try? FileManager.default.removeItem(atPath: clip) }
        let reference = try decode(clip, adaptive: false, moveAfterPacket: nil)
        let (demuxer, index, decoder) = try open(clip, adaptive: true)
        let packet = Packet()
        for _ in 0..<10 {
            _ = try demuxer.read(into: packet)
            _ = try decoder.send(packet)
        }
        decoder.requestFrameThreads()
        decoder.flush()
        #expect(decoder.isFrameThreaded)
        try demuxer.seek(to: .zero)
        let pictures = try drain(demuxer, stream: index, into: decoder)
        let same = pictures == reference.pictures
        #expect(same, "\(firstDifference(pictures, reference.pictures))")
    }

    // MARK: Helpers

    /// A 3 s, 25 fps, 320x240 clip of moving test pictures (75 frames) encoded with `encoder`.
    private func makeClip(encoder: [String]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-gop-\(UUID().uuidString).mkv").path
        let result = try ChildProcess.run(
            "ffmpeg",
            ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3"] + encoder
                + ["-pix_fmt", "yuv420p", path])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return path
    }

    /// The clip's demuxer, its video stream and a decoder of it on one thread.
    private func open(_ clip: String, adaptive: Bool) throws -> (Demuxer, Int, VideoStreamDecoder) {
        let demuxer = try Demuxer(source: clip)
        let index = try #require(demuxer.playbackStreams().videoStream)
        let decoder = VideoStreamDecoder(
            try Decoder(stream: demuxer.stream(at: index), source: clip, threadCount: 1), adaptive: adaptive
        ) { threads throws(MediaError) in try Decoder(stream: demuxer.stream(at: index), source: clip, threadCount: threads) }
        return (demuxer, index, decoder)
    }

    /// Decodes the whole clip; with `load`, reports each frame as having cost that share of its
    /// 40 ms (as the pipeline's video thread reports what it measured).
    private func decode(_ clip: String, adaptive: Bool, moveAfterPacket: Int?, load: Double? = nil) throws -> (pictures: [Picture], frameThreaded: Bool) {
        let (demuxer, index, decoder) = try open(clip, adaptive: adaptive)
        let pictures = try drain(demuxer, stream: index, into: decoder, moveAfterPacket: moveAfterPacket, load: load)
        return (pictures, decoder.isFrameThreaded)
    }

    /// Sends every packet of the stream, then drains; receives after each send, as the pipeline does.
    private func drain(
        _ demuxer: Demuxer, stream index: Int, into decoder: VideoStreamDecoder, moveAfterPacket: Int? = nil, load: Double? = nil
    ) throws -> [Picture] {
        let frameDuration = MediaTime(value: 1, timescale: 25)
        var pictures: [Picture] = []
        let packet = Packet()
        let frame = Frame()
        var sent = 0
        func receiveAll() throws {
            while try decoder.receive(into: frame) == .frame {
                pictures.append(Picture(pts: frame.bestEffortTimestamp, luma: lumaHash(frame)))
                if let load { decoder.noteDecoded(in: MediaTime(seconds: frameDuration.seconds * load, preferredTimescale: 1_000_000), frameDuration: frameDuration) }
            }
        }
        while try demuxer.read(into: packet) {
            guard packet.streamIndex == index else { continue }
            _ = try decoder.send(packet)
            sent += 1
            if sent == moveAfterPacket { decoder.requestFrameThreads() }
            try receiveAll()
        }
        _ = try decoder.send(nil)
        try receiveAll()
        return pictures
    }

    /// FNV-1a over the luma plane's visible bytes.
    private func lumaHash(_ frame: Frame) -> UInt64 {
        let (base, bytesPerRow) = frame.plane(0)
        guard let base else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for row in 0..<frame.height {
            for byte in UnsafeBufferPointer(start: base + row * bytesPerRow, count: frame.width) {
                hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
            }
        }
        return hash
    }

    private func firstDifference(_ got: [Picture], _ expected: [Picture]) -> String {
        for index in 0..<max(got.count, expected.count) {
            let a = index < got.count ? got[index].description : "none"
            let b = index < expected.count ? expected[index].description : "none"
            if a != b { return "frame \(index): got \(a), expected \(b) (\(got.count) frames, expected \(expected.count))" }
        }
        return "the same"
    }
}
