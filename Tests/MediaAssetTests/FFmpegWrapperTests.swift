import ChildProcesses
import Foundation
import Testing
@testable import MediaAsset
import MediaTime
import MediaSinks

@Suite("FFmpeg wrappers", .enabled(if: Fixtures.available, "run scripts/fixtures.sh"))
struct FFmpegWrapperTests {
    @Test("the demuxer reads every packet of a clip and knows its duration")
    func demuxesClip() throws {
        let demuxer = try Demuxer(source: Fixtures.path("h264_aac.mp4"))
        #expect(demuxer.streamCount == 2)
        #expect(demuxer.duration.seconds > 9.9 && demuxer.duration.seconds < 10.2)
        var videoPackets = 0
        let packet = Packet()
        while try demuxer.read(into: packet) {
            if packet.streamIndex == 0 { videoPackets += 1 }
        }
        #expect(videoPackets == 250)
    }

    @Test("the decoder turns packets into 320x240 frames until it is drained")
    func decodesFrames() throws {
        let source = Fixtures.path("queue1.mp4")
        let demuxer = try Demuxer(source: source)
        let decoder = try Decoder(stream: demuxer.stream(at: 0), source: source, threadCount: 1)
        let packet = Packet()
        let frame = Frame()
        var frames = 0
        var draining = false
        decoding: while true {
            switch try decoder.receive(into: frame) {
            case .frame:
                frames += 1
                #expect(frame.width == 320 && frame.height == 240)
            case .endOfStream:
                break decoding
            case .needsInput:
                if try demuxer.read(into: packet) {
                    if packet.streamIndex == 0 { _ = try decoder.send(packet) }
                } else if !draining {
                    draining = true
                    try decoder.drain()
                }
            }
        }
        #expect(frames == 50)
    }

    @Test("seeking lands on a keyframe at or before the time")
    func seeks() throws {
        let demuxer = try Demuxer(source: Fixtures.path("h264_aac.mp4"))
        try demuxer.seek(to: MediaTime(value: 5500, timescale: 1000), streamIndex: 0)
        var packet: Packet?
        repeat { packet = try demuxer.readPacket() } while packet?.streamIndex != 0
        let time = Demuxer.time(packet!.pts, timeBase: demuxer.stream(at: 0).pointee.time_base)
        #expect(time.seconds <= 5.5 && time.seconds >= 4.9)
        #expect(packet!.isKeyframe)
    }

    @Test("a PNG decodes to RGBA with its own size")
    func decodesPNG() throws {
        let image = try RGBAImage(contentsOf: Fixtures.path("cover.png"))
        #expect(image.width == 64 && image.height == 64)
        let pixel = image.pixel(x: 10, y: 10)
        // lavfi's orange went through YUV: (254, 164, 0), opaque.
        #expect(pixel.r >= 250 && pixel.g > 150 && pixel.g < 180 && pixel.b <= 5 && pixel.a == 255)
    }

    @Test("opening bad input throws an error that names the file and the cause")
    func badInputErrors() {
        let cases: [(String, MediaError.Reason)] = [
            ("bad/missing.mp4", .notFound),
            ("bad/empty.mp4", .emptyFile),
            ("bad/text.mp4", .unrecognizedFormat),
        ]
        for (name, reason) in cases {
            let path = Fixtures.path(name)
            #expect {
                _ = try Demuxer(source: path)
            } throws: { error in
                guard let error = error as? MediaError else { return false }
                return error.reason == reason && error.description.hasPrefix(path)
            }
        }
    }

    @Test("a missing image file throws instead of returning a picture")
    func missingImage() {
        #expect(throws: MediaError.self) { try RGBAImage(contentsOf: "/nonexistent/logo.png") }
    }

    @Test("a stream that ends while probing fails once, cleanly (found by the fuzz loop: a double close)")
    func failsWhileProbing() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Fixtures.path("mpeg2.ts"))).prefix(376)  // two TS packets
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-two-packets-\(getpid()).ts").path
        try bytes.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect {
            _ = try Demuxer(source: path)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.operation == "cannot read stream information" && error.reason == .corruptData
        }
    }

    @Test("a JPEG decodes to RGBA too")
    func decodesJPEG() throws {
        // ffmpeg writes a blue 40x30 JPEG (yuvj420p, full range).
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-\(getpid()).jpg").path
        let ffmpeg = try ChildProcess.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=blue:size=40x30", "-frames:v", "1", path])
        defer { try? FileManager.default.removeItem(atPath: path) }
        try #require(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let image = try RGBAImage(contentsOf: path)
        #expect(image.width == 40 && image.height == 30)
        let pixel = image.pixel(x: 20, y: 15)
        #expect(pixel.b > 200 && pixel.r < 40 && pixel.g < 40 && pixel.a == 255)
    }
}
