import Foundation
import Testing

/// `vitrine play SCHEDULE`: the demo schedule on the real headless display, read back from its
/// presentation log and screenshots.
@Suite("play a schedule", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct PlayScheduleTests {
    /// PSNR of one region of two same-size images (ffmpeg's crop and psnr filters).
    static func regionPSNR(_ first: String, _ second: String, crop: String) throws -> Double {
        let output = try CommandRunner.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-i", first, "-i", second,
            "-lavfi", "[0]crop=\(crop)[a];[1]crop=\(crop)[b];[a][b]psnr", "-f", "null", "-",
        ])
        guard let range = output.stderr.range(of: "average:") else { return -1 }
        let value = output.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return value == "inf" ? .infinity : Double(value) ?? -1
    }

    @Test("the demo: overlay-shown is the first presented frame at or after each cue; the ticker is absent one frame before its cue and present at it")
    func demo() throws {
        let directory = try CommandRunner.temporaryDirectory("play-schedule")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log.jsonl"
        let schedule = CommandRunner.root.appendingPathComponent("Schedules/demo.toml").path
        let run = try CommandRunner.vitrine([
            "play", schedule, "--display", "headless", "--mode", "640x360@50", "--no-audio",
            "--start-at", "1970-01-01T00:00:00Z", "--duration", "4", "--presentation-log", log,
            "--screenshot-at", "2.48=\(directory)/before-ticker.png", "--screenshot-at", "2.5=\(directory)/ticker.png",
            "--screenshot-at", "1.96=\(directory)/before-logo.png", "--screenshot-at", "3.5=\(directory)/logo.png",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let frames = records.filter { $0["type"] as? String == "frame" && $0["item"] as? Int == 0 }
        let shown = records.filter { $0["event"] as? String == "overlay-shown" }
        try #require(shown.count == 2, "\(shown)")
        for (event, cue) in zip(shown, [2.0, 2.5]) {
            let first = try #require(frames.first { ($0["pts_s"] as! Double) >= cue - 1e-9 })
            #expect(event["time_s"] as? Double == first["pts_s"] as? Double, "cue \(cue): \(event)")
        }
        // The ticker's box (the bottom 8 % of the screen, a dark translucent background) changes the picture;
        // the top half, where no overlay is, stays a frame-to-frame change of the clip.
        let ticker = try Self.regionPSNR("\(directory)/before-ticker.png", "\(directory)/ticker.png", crop: "640:28:0:317")
        #expect(ticker < 20, "the ticker region changed at its cue (\(ticker) dB)")
        let logo = try Self.regionPSNR("\(directory)/before-logo.png", "\(directory)/logo.png", crop: "150:56:461:15")
        #expect(logo < 20, "the logo is up by 3.5 s (\(logo) dB)")
    }

    @Test("a --start-at that is not a date-time is a usage error naming what is expected, before any device is opened or log written")
    func badStartAt() throws {
        let directory = try CommandRunner.temporaryDirectory("play-start-at")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log.jsonl"
        let schedule = CommandRunner.root.appendingPathComponent("Schedules/demo.toml").path
        let run = try CommandRunner.vitrine([
            "play", schedule, "--display", "headless", "--no-audio", "--start-at", "2026-01-01T00:01:69Z",
            "--duration", "1", "--presentation-log", log,
        ])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("--start-at '2026-01-01T00:01:69Z': expected an ISO 8601 date-time"), "\(run.stderr)")
        #expect(!run.stderr.contains("display:"), "the display was opened first: \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: log))
    }

    @Test("the layout example: its three zones play on one screen, each zone's frames named in the presentation log, the ticker zone's overlay shown")
    func layoutExample() throws {
        let directory = try CommandRunner.temporaryDirectory("play-layout")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/log.jsonl"
        let schedule = CommandRunner.root.appendingPathComponent("Schedules/layout.toml").path
        // A Tuesday: the Monday notice interrupt does not play.
        let run = try CommandRunner.vitrine([
            "play", schedule, "--display", "headless", "--mode", "640x360@25", "--no-audio",
            "--start-at", "2026-11-24T10:00:00+01:00", "--duration", "3", "--presentation-log", log,
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let records = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        let layers = Set(records.filter { $0["type"] as? String == "frame" }.compactMap { $0["layer"] as? String })
        #expect(layers == ["screen", "side", "ticker"], "\(layers)")
        let shown = records.filter { $0["event"] as? String == "overlay-shown" }.compactMap { $0["detail"] as? String }
        #expect(shown.contains { $0.contains("Layouts: several playlists") }, "the ticker zone's ticker: \(shown)")
    }

    @Test("an invalid schedule is refused with file:line:column before anything plays")
    func invalidSchedule() throws {
        let directory = try CommandRunner.temporaryDirectory("play-schedule")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/bad.toml"
        try "version = 1\nfallback = \"none\"\n".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try CommandRunner.vitrine(["play", path, "--display", "headless", "--no-audio", "--duration", "1"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("bad.toml:"), "\(run.stderr)")
    }
}
