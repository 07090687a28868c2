import Foundation
import Testing

/// `vitrine thumbnails --exact` against `ffmpeg -ss T -i F -frames:v 1` of the same size.
@Suite("thumbnails match ffmpeg", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct ThumbnailsMatchFFmpegTests {
    /// Times on frame starts and between them (ffmpeg and `--exact` both take the first frame at or
    /// after T). Times count from the container's start time, as `ffmpeg -ss` does (the WebM starts at -0.007 s,
    /// the TS at 1.429978 s, the Matroska video at 0.021 s).
    /// Scaled cases scale an unrotated picture: ffmpeg scales a rotated one after turning it in YUV,
    /// which loses more chroma than Vitrine's single conversion, so the two differ by design.
    static let cases: [(String, String, String?)] = [
        ("h264_aac.mp4", "2", nil), ("h264_aac.mp4", "7.16", "160"), ("hevc.mkv", "1.2", nil),
        ("hevc.mkv", "0.4", "100"), ("vp9_opus.webm", "2.054", nil), ("mpeg2.ts", "1.450022", nil),
        ("rotated.mp4", "1", nil), ("rotated.mp4", "0.5", nil), ("ntsc.mp4", "1.001", nil), ("multilang.mkv", "3.021", nil),
        ("h264_aac.mp4", "3.5", nil), ("ntsc.mp4", "1.5", nil), ("hevc.mkv", "1.23", nil),
    ]

    @Test("the exact frame is ffmpeg's frame (PSNR >= 40 dB)", arguments: cases)
    func matches(fixture: String, time: String, maxWidth: String?) throws {
        let path = CommandRunner.fixture(fixture)
        let directory = try CommandRunner.temporaryDirectory("thumbs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var arguments = ["thumbnails", path, "--times", time, "--exact", "--out", directory]
        if let maxWidth { arguments += ["--max-width", maxWidth] }
        let ours = try CommandRunner.vitrine(arguments)
        #expect(ours.status == 0, "\(ours.stderr)")
        let written = ours.stdout.split(separator: "\n").map(String.init)
        let image = try #require(written.first)
        let actual = URL(fileURLWithPath: image).deletingPathExtension().lastPathComponent
        let requested = try #require(Double(time))
        let named = try #require(Double(actual))
        #expect(named >= requested - 1e-6 && named < requested + 0.05, "named by the actual time, the first frame at or after \(time)")

        let reference = directory + "/ffmpeg.png"
        var ffmpeg = ["-v", "error", "-nostdin", "-y", "-ss", time, "-i", path, "-frames:v", "1"]
        if let maxWidth { ffmpeg += ["-vf", "scale=\(maxWidth):-1"] }
        let made = try CommandRunner.run("ffmpeg", ffmpeg + [reference])
        try #require(made.status == 0, "\(made.stderr)")
        let psnr = try CommandRunner.psnr(image, reference)
        #expect(psnr >= 40, "PSNR \(psnr) dB at \(time) s in \(fixture)")
    }

    @Test("a time inside a frame's interval gives the next frame, as ffmpeg -ss does")
    func insideInterval() throws {
        let path = CommandRunner.fixture("h264_aac.mp4")
        let directory = try CommandRunner.temporaryDirectory("thumbs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ours = try CommandRunner.vitrine(["thumbnails", path, "--times", "3.5", "--exact", "--out", directory])
        #expect(ours.status == 0)
        #expect(ours.stdout.hasSuffix("/000003.520000.png\n"))
        let reference = directory + "/ffmpeg.png"
        _ = try CommandRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-ss", "3.5", "-i", path, "-frames:v", "1", reference])
        #expect(try CommandRunner.psnr(directory + "/000003.520000.png", reference) >= 40)
    }

    @Test("--count spreads images over the duration and names them by keyframe time")
    func count() throws {
        let directory = try CommandRunner.temporaryDirectory("thumbs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let ours = try CommandRunner.vitrine(["thumbnails", CommandRunner.fixture("h264_aac.mp4"), "--count", "3", "--max-width", "64", "--out", directory])
        #expect(ours.status == 0, "\(ours.stderr)")
        // Middles of thirds of 10 s: 1.667, 5, 8.333 -> keyframes (one per second) 1, 5, 8.
        let names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(names == ["000001.000000.png", "000005.000000.png", "000008.000000.png"])
    }
}
