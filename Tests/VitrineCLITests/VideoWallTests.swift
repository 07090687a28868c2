import Foundation
import Testing

/// A video wall: each screen of a 3×2 wall with bezels draws its tile of the one big picture, and
/// the six screenshots put side by side (bezels left out) are the picture one big screen shows.
@Suite("video walls", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct VideoWallTests {
    /// One screen of the wall is 320×180; the gaps between pictures are 0.05 of a screen's width
    /// (16 px) and 0.1 of its height (18 px), so the whole wall's picture, bezels included, is
    /// 3 × 320 + 2 × 16 = 992 by 2 × 180 + 18 = 378 pixels, and every tile starts on a whole pixel.
    static let screen = (width: 320, height: 180)
    static let whole = (width: 992, height: 378)

    /// The schedule: the 4:3 test pattern (laid out with `fit` on the whole wall: 504×378 at x 244,
    /// so it spans all three columns) and a solid magenta square over the bezel between the first
    /// two columns, from the start.
    static func schedule(in directory: String, wall: String?) -> String {
        """
        version = 1
        timezone = "UTC"
        fallback = "wall"
        [display]
        gravity = "fit"
        \(wall.map { "wall = \($0)" } ?? "")
        [[playlists.wall.items]]
        video = "\(CommandRunner.fixture("h264_aac.mp4"))"
          [[playlists.wall.items.overlays]]
          image = "\(directory)/magenta.png"
          rect = [0.28, 0.1, 0.1, 0.3]
          at = "00:00:00"
        """
    }

    /// Plays `schedule` for a moment and writes the frame at item time 1.2 s to `screenshot`.
    static func shoot(_ schedule: String, mode: String, screenshot: String, extra: [String] = []) throws {
        let run = try CommandRunner.vitrine([
            "play", schedule, "--display", "headless", "--mode", mode, "--no-audio",
            "--start-at", "1970-01-01T00:00:00Z", "--duration", "3", "--screenshot-at", "1.2=\(screenshot)",
        ] + extra)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: screenshot), "no screenshot: \(run.stderr)")
    }

    /// The RGB of one pixel of a PNG.
    static func pixel(_ png: String, x: Int, y: Int) throws -> [UInt8] {
        let output = try CommandRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error", "-i", png, "-vf", "crop=1:1:\(x):\(y)",
            "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ])
        return [UInt8](output.stdoutData)
    }

    static func isMagenta(_ rgb: [UInt8]) -> Bool { rgb.count == 3 && rgb[0] > 200 && rgb[1] < 60 && rgb[2] > 200 }

    @Test("six screens of a 3x2 wall with bezels: each tile is its part of the whole picture (PSNR >= 40 dB), an overlay across a bezel is cut there")
    func tilesMakeTheWhole() throws {
        let directory = try CommandRunner.temporaryDirectory("wall")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let magenta = try CommandRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=magenta:s=64x64",
            "-frames:v", "1", "\(directory)/magenta.png",
        ])
        try #require(magenta.status == 0, "\(magenta.stderr)")

        // The whole picture on one screen the size of the wall.
        let wholeSchedule = directory + "/whole.toml"
        try Self.schedule(in: directory, wall: nil).write(toFile: wholeSchedule, atomically: true, encoding: .utf8)
        let reference = directory + "/whole.png"
        try Self.shoot(wholeSchedule, mode: "\(Self.whole.width)x\(Self.whole.height)@25", screenshot: reference)

        // Each screen with its tile in its schedule's [display] table.
        for row in 0..<2 {
            for column in 0..<3 {
                let schedule = "\(directory)/tile-\(column)-\(row).toml"
                let wall = "{ columns = 3, rows = 2, column = \(column), row = \(row), bezel = [0.05, 0.1] }"
                try Self.schedule(in: directory, wall: wall).write(toFile: schedule, atomically: true, encoding: .utf8)
                let tile = "\(directory)/tile-\(column)-\(row).png"
                try Self.shoot(schedule, mode: "\(Self.screen.width)x\(Self.screen.height)@25", screenshot: tile)
                // The tile's part of the whole: its origin steps a screen plus a bezel at a time.
                let x = column * (Self.screen.width + 16), y = row * (Self.screen.height + 18)
                let cropped = "\(directory)/whole-\(column)-\(row).png"
                let crop = try CommandRunner.run("ffmpeg", [
                    "-hide_banner", "-nostdin", "-loglevel", "error", "-i", reference,
                    "-vf", "crop=\(Self.screen.width):\(Self.screen.height):\(x):\(y)", cropped,
                ])
                try #require(crop.status == 0, "\(crop.stderr)")
                let psnr = try CommandRunner.psnr(tile, cropped)
                #expect(psnr >= 40, "screen \(column),\(row) is not its part of the whole picture: \(psnr) dB")
            }
        }

        // The square is 99 px wide at x 278 of the whole: its left 42 px are on the first screen,
        // 16 px are behind the bezel, the rest on the second screen's left edge.
        #expect(Self.isMagenta(try Self.pixel(reference, x: 328, y: 90)), "the whole picture has the square across the bezel")
        #expect(Self.isMagenta(try Self.pixel("\(directory)/tile-0-0.png", x: 310, y: 90)), "the first screen shows the square's left part")
        #expect(Self.isMagenta(try Self.pixel("\(directory)/tile-1-0.png", x: 20, y: 90)), "the second screen shows its right part")
        #expect(!Self.isMagenta(try Self.pixel("\(directory)/tile-1-0.png", x: 60, y: 90)), "the square ends 41 px into the second screen")
    }

    @Test("--crop draws the same tile as the schedule's wall, and a crop outside the picture is refused with what is expected")
    func cropOption() throws {
        let directory = try CommandRunner.temporaryDirectory("wall-crop")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = try CommandRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=magenta:s=64x64",
            "-frames:v", "1", "\(directory)/magenta.png",
        ])
        let schedule = directory + "/plain.toml"
        try Self.schedule(in: directory, wall: nil).write(toFile: schedule, atomically: true, encoding: .utf8)
        let walled = directory + "/walled.toml"
        try Self.schedule(in: directory, wall: "{ columns = 3, rows = 2, column = 2, row = 1, bezel = [0.05, 0.1] }")
            .write(toFile: walled, atomically: true, encoding: .utf8)
        let mode = "\(Self.screen.width)x\(Self.screen.height)@25"
        try Self.shoot(walled, mode: mode, screenshot: directory + "/wall.png")
        // The same tile as a rectangle of the whole: x 672/992, y 198/378, 320/992 wide, 180/378 high.
        let crop = "\(672.0 / 992),\(198.0 / 378),\(320.0 / 992),\(180.0 / 378)"
        try Self.shoot(schedule, mode: mode, screenshot: directory + "/crop.png", extra: ["--crop", crop])
        let psnr = try CommandRunner.psnr(directory + "/wall.png", directory + "/crop.png")
        #expect(psnr >= 40, "--crop \(crop) is not the schedule's tile: \(psnr) dB")

        let refused = try CommandRunner.vitrine(["play", schedule, "--display", "headless", "--no-audio", "--crop", "0.5,0,0.6,1"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--crop '0.5,0,0.6,1'") && refused.stderr.contains("X,Y,WIDTH,HEIGHT"), "\(refused.stderr)")
    }
}
