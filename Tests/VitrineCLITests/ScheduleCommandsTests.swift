import ChildProcesses
import Foundation
import Testing

/// `vitrine validate` and `vitrine programme`, run as an operator would.
@Suite("Schedule commands")
struct ScheduleCommandsTests {
    static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url
    }()

    /// The built `vitrine`, next to the test bundle.
    static var executable: URL {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vitrine")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return root.appendingPathComponent(".build/debug/vitrine")
    }

    struct Run {
        var status: Int32
        var output: String
        var errors: String
    }

    static func vitrine(_ arguments: [String]) throws -> Run {
        let result = try ChildProcess.run(executable.path, arguments, currentDirectory: root.path)
        return Run(status: result.status, output: result.stdout, errors: result.stderr)
    }

    static func temporaryFile(_ text: String, name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    @Test("validate exits 1 and lists every problem as file:line:column")
    func invalid() throws {
        let file = try Self.temporaryFile("""
            version = 1
            timezone = "Europe/Berln"
            [[playlists.p.items]]
            image = "missing.png"
            duraton = "5s"
            [entries.e]
            playlist = "q"
            start = "9:00"
            """, name: "bad.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let run = try Self.vitrine(["validate", file.path])
        #expect(run.status == 1)
        let lines = run.output.split(separator: "\n").map(String.init)
        let path = file.path
        #expect(lines.contains("\(path):2:1: error: unknown time zone \"Europe/Berln\" (no such zone in /usr/share/zoneinfo) (did you mean \"Europe/Berlin\"?)"))
        #expect(lines.contains { $0.hasPrefix("\(path):3:1: error: an image item needs a \"duration\"") })
        #expect(lines.contains("\(path):5:1: error: unknown key \"duraton\" in an item (did you mean \"duration\"?)"))
        #expect(lines.contains { $0.hasPrefix("\(path):7:1: error: no playlist named \"q\"") })
        #expect(lines.contains { $0.hasPrefix("\(path):8:1: error: start \"9:00\"") })
        #expect(lines.last == "\(path): 5 errors")
    }

    @Test("validate exits 0 for a valid schedule and 2 for an unreadable one")
    func validAndUnreadable() throws {
        let file = try Self.temporaryFile("version = 1\nfallback = \"p\"\n[[playlists.p.items]]\nurl = \"rtsp://cam/1\"\n", name: "ok.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let valid = try Self.vitrine(["validate", file.path])
        #expect(valid.status == 0)
        #expect(valid.output == "\(file.path): valid\n")
        let missing = try Self.vitrine(["validate", file.path + ".nope"])
        #expect(missing.status == 2)
        #expect(missing.output.contains("cannot read the schedule"))
    }

    /// A camera feed, interrupted every day at 08:00 (Berlin) by another for 30 s.
    static let dailyInterrupt = """
        version = 1
        timezone = "Europe/Berlin"
        fallback = "idle"
        [[playlists.idle.items]]
        url = "rtsp://cam/1"
        [[playlists.alert.items]]
        url = "rtsp://cam/2"
        duration = "30s"
        [entries.alert]
        playlist = "alert"
        interrupt = true
        start = "08:00"
        """

    @Test("programme --json prints the timeline for an interrupt, in local time and UTC")
    func programmeJSON() throws {
        let file = try Self.temporaryFile(Self.dailyInterrupt, name: "p.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let run = try Self.vitrine(["programme", file.path, "--from", "2026-03-30T07:59", "--to", "2026-03-30T08:01", "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let changes = try #require(object["changes"] as? [[String: Any]])
        #expect(changes.map { $0["local"] as? String } == ["2026-03-30T07:59:00+02:00", "2026-03-30T08:00:00+02:00", "2026-03-30T08:00:30+02:00"])
        #expect(changes.map { $0["utc"] as? String } == ["2026-03-30T05:59:00Z", "2026-03-30T06:00:00Z", "2026-03-30T06:00:30Z"])
        #expect(changes.map { $0["entry"] as? String } == [nil, "alert", nil])
        let bad = try Self.vitrine(["programme", file.path, "--from", "monday", "--to", "2026-03-30"])
        #expect(bad.status != 0)
    }

    @Test("programme answers for the last days a schedule can be asked about and refuses later ones, naming the option, instead of trapping")
    func programmeAtTheEdgesOfTime() throws {
        let file = try Self.temporaryFile(Self.dailyInterrupt, name: "edges.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let last = try Self.vitrine(["programme", file.path, "--from", "2199-12-30", "--to", "2200-01-01", "--entries-only"])
        #expect(last.status == 0, "\(last.errors)")
        #expect(last.output.contains("2199-12-31T08:00:00+01:00"), "\(last.output)")
        let first = try Self.vitrine(["programme", file.path, "--from", "1900-01-01T02:00", "--to", "1900-01-02", "--entries-only"])
        #expect(first.status == 0, "\(first.errors)")
        #expect(first.output.contains("1900-01-01T08:00:00+01:00"), "\(first.output)")
        // 2262-04-10 is within 64-bit nanoseconds but its search for the next change is not: it trapped (status 132).
        for (from, to, option) in [("2262-04-10", "2262-04-13", "--from"), ("3000-01-01", "3000-01-02", "--from"), ("2026-01-01", "2262-04-13", "--to"), ("1500-01-01", "2026-01-01", "--from")] {
            let refused = try Self.vitrine(["programme", file.path, "--from", from, "--to", to])
            #expect(refused.status == 64, "\(from) to \(to): \(refused.errors)")
            #expect(refused.errors.contains("\(option) \""), "\(refused.errors)")
            #expect(refused.errors.contains("1900-01-01 to 2200-01-01 UTC"), "\(refused.errors)")
        }
    }

    static var fixturesAvailable: Bool {
        FileManager.default.fileExists(atPath: root.appendingPathComponent("Fixtures/generated/h264_aac.mp4").path)
    }

    @Test("validate opens media with FFmpeg: lengths for cues and trims, unreadable files named with the cause",
          .enabled(if: fixturesAvailable, "run scripts/fixtures.sh"))
    func mediaProbe() throws {
        let fixtures = Self.root.appendingPathComponent("Fixtures/generated").path
        let file = try Self.temporaryFile("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            video = "\(fixtures)/h264_aac.mp4"
            out = "00:00:11"
              [[playlists.p.items.overlays]]
              text = "late"
              at = "00:00:12"
            [[playlists.p.items]]
            video = "\(fixtures)/bad/text.mp4"
            [[playlists.p.items]]
            video = "\(fixtures)/queue1.mp4"
              [[playlists.p.items.overlays]]
              text = "too late"
              at = "end-3s"
            """, name: "media.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let run = try Self.vitrine(["validate", file.path])
        #expect(run.status == 1)
        let lines = run.output.split(separator: "\n").map(String.init)
        let path = file.path
        #expect(lines.contains { $0.hasPrefix("\(path):3:1: error: the out point 00:00:11.000 is after the end") })
        #expect(lines.contains { $0.hasPrefix("\(path):9:1: error: media file") && $0.contains("cannot be read") })
        // queue1.mp4 lasts 2 s, so "end-3s" is before its start.
        #expect(lines.contains { $0.hasPrefix("\(path):15:3: error: cue end-00:00:03.000") })
        let demo = try Self.vitrine(["validate", "Schedules/demo.toml"])
        #expect(demo.status == 0, "\(demo.output)")
    }

    @Test("validate decodes stills: a damaged picture, as an item or as an overlay, is refused at its line",
          .enabled(if: fixturesAvailable, "run scripts/fixtures.sh"))
    func damagedStills() throws {
        let fixtures = Self.root.appendingPathComponent("Fixtures/generated").path
        let file = try Self.temporaryFile("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            video = "\(fixtures)/h264_aac.mp4"
              [[playlists.p.items.overlays]]
              image = "damaged-logo.png"
              rect = [0.1, 0.1, 0.2, 0.2]
            [[playlists.p.items]]
            image = "damaged.png"
            duration = "5s"
            [[playlists.p.items]]
            image = "\(fixtures)/cover.png"
            duration = "5s"
            """, name: "stills.toml")
        let folder = file.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Named like pictures, FFmpeg's image demuxer opens them; no picture decodes from them.
        try Data("not a picture".utf8).write(to: folder.appendingPathComponent("damaged.png"))
        try Data((0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) }).write(to: folder.appendingPathComponent("damaged-logo.png"))
        let run = try Self.vitrine(["validate", file.path])
        #expect(run.status == 1, "\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        let path = file.path
        #expect(lines.contains { $0.hasPrefix("\(path):5:3: error: overlay image") && $0.contains("damaged-logo.png") }, "\(run.output)")
        #expect(lines.contains { $0.hasPrefix("\(path):8:1: error:") && $0.contains("damaged.png") }, "\(run.output)")
        #expect(!lines.contains { $0.contains("cover.png") }, "a good picture passes: \(run.output)")
    }

    @Test("validate accepts the layout example; programme lists every zone's item at each change, as JSON and as a table",
          .enabled(if: fixturesAvailable, "run scripts/fixtures.sh"))
    func layoutExample() throws {
        let valid = try Self.vitrine(["validate", "Schedules/layout.toml"])
        #expect(valid.status == 0, "\(valid.output)")
        #expect(valid.output == "Schedules/layout.toml: valid\n")
        // Tuesday: the layout from midnight; the adverts' 4 s still gives way to a clip at 00:00:04.
        let run = try Self.vitrine(["programme", "Schedules/layout.toml", "--from", "2026-03-31T00:00", "--to", "2026-03-31T00:00:05", "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let changes = try #require(object["changes"] as? [[String: Any]])
        #expect(changes.map { $0["local"] as? String } == ["2026-03-31T00:00:00+02:00", "2026-03-31T00:00:04+02:00"])
        for change in changes {
            #expect(change["entry"] as? String == "allday" && change["layout"] as? String == "split" && change["playlist"] is NSNull)
        }
        let first = try #require(changes[0]["zones"] as? [[String: Any]])
        #expect(first.map { $0["name"] as? String } == ["main", "side", "ticker"])
        #expect(first.map { $0["playlist"] as? String } == ["feature", "adverts", "ticker"])
        #expect(first.map { $0["item"] as? Int } == [0, 0, 0])
        #expect(first.map { $0["media"] as? String } == ["../Fixtures/generated/h264_aac.mp4", "../Fixtures/generated/cover.png", "../Fixtures/generated/cover.png"])
        #expect(first.map { $0["position_seconds"] as? Double } == [0, 0, 0])
        #expect(first.map { $0["audio"] as? Bool } == [true, false, false])
        let second = try #require(changes[1]["zones"] as? [[String: Any]])
        #expect(second.map { $0["item"] as? Int } == [0, 1, 0])
        #expect(second.map { $0["media"] as? String } == ["../Fixtures/generated/h264_aac.mp4", "../Fixtures/generated/queue2.mp4", "../Fixtures/generated/cover.png"])
        #expect(second.map { $0["position_seconds"] as? Double } == [4, 0, 4])
        let table = try Self.vitrine(["programme", "Schedules/layout.toml", "--from", "2026-03-31T00:00", "--to", "2026-03-31T00:00:05"])
        #expect(table.status == 0, "\(table.errors)")
        let lines = table.output.split(separator: "\n").map(String.init)
        #expect(lines.filter { $0.contains("allday") && $0.hasSuffix("layout split") }.count == 2, "\(table.output)")
        #expect(lines.contains { $0.contains("zone main (audio)") && $0.contains("feature") && $0.hasSuffix("1 ../Fixtures/generated/h264_aac.mp4  00:00:04.000") },
                "\(table.output)")
        #expect(lines.contains { $0.contains("zone side ") && $0.contains("adverts") && $0.hasSuffix("2 ../Fixtures/generated/queue2.mp4    00:00:00.000") },
                "\(table.output)")
    }

    @Test("validate reports layout mistakes as file:line:column: zones off screen or overlapping, a playlist and a layout in one entry")
    func layoutMistakes() throws {
        let file = try Self.temporaryFile("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            url = "rtsp://cam/1"
            [layouts.l]
            [[layouts.l.zones]]
            name = "a"
            rect = [0.0, 0.0, 0.6, 1.0]
            playlist = "p"
            [[layouts.l.zones]]
            name = "b"
            rect = [0.5, 0.0, 0.5, 1.0]
            playlist = "p"
            [[layouts.l.zones]]
            name = "c"
            rect = [0.5, 0.5, 0.6, 0.5]
            playlist = "q"
            [entries.e]
            playlist = "p"
            layout = "l"
            """, name: "layout.toml")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let run = try Self.vitrine(["validate", file.path])
        #expect(run.status == 1)
        let path = file.path
        #expect(run.output.split(separator: "\n").map(String.init) == [
            "\(path):12:1: error: zones \"a\" (\(path):6:1) and \"b\" of layout \"l\" overlap at [0.5, 0, 0.1, 1] with the same z 0; give one a higher z, or move it",
            "\(path):16:1: error: rect [0.5, 0.5, 0.6, 0.5] does not fit on the screen (fractions 0…1; x+width and y+height at most 1)",
            "\(path):17:1: error: no playlist named \"q\" (did you mean \"p\"?)",
            "\(path):20:1: error: entry \"e\" has both \"playlist\" and \"layout\"; an entry plays one playlist or one layout",
            "\(path): 4 errors",
        ], "\(run.output)")
    }
}
