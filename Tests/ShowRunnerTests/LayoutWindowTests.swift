import ChildProcesses
import Foundation
import MediaTime
import Displays
import Scheduling
@testable import ShowRunner
import Testing

/// A layout's window on one screen: the sound zone's playlist in the display's root layer moved to
/// its zone, every other zone its own player in a layer of its own, each on the wall clock.
@Suite("a layout's window", .enabled(if: Fixtures.available, "needs the generated fixtures (scripts/fixtures.sh)"))
struct LayoutWindowTests {
    /// The RGB of the screenshot's pixel at `x`, `y`.
    static func pixel(_ shot: Screenshot, x: Int, y: Int) -> [UInt8] {
        let start = (y * shot.image.width + x) * 4
        return Array(shot.image.pixels[start..<start + 3])
    }

    @Test("two zones on one screen: the sound zone's video fitted in its zone, the side zone's stills in theirs, each where the wall clock puts it")
    func zonesOnOneScreen() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try writeSolidPNG(directory + "/red.png", red: 255, green: 0, blue: 0)
        try writeSolidPNG(directory + "/blue.png", red: 0, green: 0, blue: 255)
        try writeSolidPNG(directory + "/green.png", red: 0, green: 255, blue: 0)
        let path = directory + "/layout.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "other"
            [layouts.split]
              [[layouts.split.zones]]
              name = "side"
              rect = [0.75, 0.0, 0.25, 1.0]
              playlist = "adverts"
              audio = false
              gravity = "fill"
              [[layouts.split.zones]]
              name = "main"
              rect = [0.0, 0.0, 0.75, 1.0]
              playlist = "feature"
            [[playlists.feature.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            [[playlists.feature.items]]
            video = "\(Fixtures.path("queue2.mp4"))"
            [[playlists.adverts.items]]
            image = "\(directory)/red.png"
            duration = "1s"
              [[playlists.adverts.items.overlays]]
              image = "\(directory)/green.png"
              rect = [0.0, 0.0, 1.0, 0.25]
              at = "00:00:00"
            [[playlists.adverts.items]]
            image = "\(directory)/blue.png"
            duration = "1s"
            [[playlists.other.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            [entries.day]
            layout = "split"
            start = "00:00"
            end = "24:00"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        // Half a second into the window: the feature's first item 0.5 s in, the adverts' red still.
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00.5Z"))
        defer { show.stop() }
        try show.refresh(10)
        let early = try show.display.screenshot()
        // 320x240 screen: the main zone is x 0..240; the 4:3 video fitted in it is 240x180 at y 30.
        #expect(Self.pixel(early, x: 300, y: 120) == [255, 0, 0], "the side zone shows the red still: \(Self.pixel(early, x: 300, y: 120))")
        // The still's overlay is in the zone's terms: a green square (fitted in the top quarter of
        // the 80x240 zone: 60x60 at x 250, y 0), not across the top of the screen.
        #expect(Self.pixel(early, x: 280, y: 30) == [0, 255, 0], "the side item's overlay is in its zone: \(Self.pixel(early, x: 280, y: 30))")
        #expect(Self.pixel(early, x: 120, y: 10) == [0, 0, 0], "and not over the main zone: \(Self.pixel(early, x: 120, y: 10))")
        #expect(Self.pixel(early, x: 120, y: 10) == [0, 0, 0], "above the fitted video is the zone's bar, not video: \(Self.pixel(early, x: 120, y: 10))")
        #expect(Self.pixel(early, x: 120, y: 120) != [255, 0, 0] && Self.pixel(early, x: 120, y: 120) != [0, 0, 0],
                "the main zone shows video: \(Self.pixel(early, x: 120, y: 120))")
        // 1.7 s into the window: the adverts' second still.
        try show.refresh(50)
        let later = try show.display.screenshot()
        #expect(Self.pixel(later, x: 300, y: 120) == [0, 0, 255], "the side zone moved on to the blue still: \(Self.pixel(later, x: 300, y: 120))")
        #expect(Self.pixel(later, x: 280, y: 30) == [0, 0, 255], "the red still's overlay went with it: \(Self.pixel(later, x: 280, y: 30))")

        let frames = show.collector.frames
        let main = frames.filter { $0.layer == nil || $0.layer == "screen" }
        let side = frames.filter { $0.layer == "side" }
        #expect(!main.isEmpty && main.allSatisfy { $0.source == Fixtures.path("queue1.mp4") || $0.source == Fixtures.path("queue2.mp4") },
                "\(Set(main.map(\.source)))")
        let first = try #require(main.first)
        #expect(abs(first.presentationTime.seconds - 0.5) <= 0.1, "the zone's item started at \(first.presentationTime.seconds) s, not 0.5 s")
        #expect(side.map(\.source).first == directory + "/red.png", "\(side.map(\.source))")
        #expect(side.contains { $0.source == directory + "/blue.png" }, "\(Set(side.map(\.source)))")
        #expect(!frames.contains { $0.source == Fixtures.path("h264_aac.mp4") }, "the fallback played in the layout's window")
        #expect(show.collector.events(.overlayShown).contains { $0.detail?.contains("green.png") == true },
                "the zone's overlay was logged: \(show.collector.events(.overlayShown))")
    }

    /// Three 4:3 zones of a 320x240 screen, each 160x120: every clip fills its zone exactly.
    static func threeZones(side: [String]) -> String {
        """
        version = 1
        timezone = "UTC"
        [layouts.grid]
          [[layouts.grid.zones]]
          name = "main"
          rect = [0.0, 0.0, 0.5, 0.5]
          playlist = "feature"
          [[layouts.grid.zones]]
          name = "side"
          rect = [0.5, 0.0, 0.5, 0.5]
          playlist = "side"
          [[layouts.grid.zones]]
          name = "bottom"
          rect = [0.0, 0.5, 0.5, 0.5]
          playlist = "bottom"
        [[playlists.feature.items]]
        video = "\(Fixtures.path("h264_aac.mp4"))"
        \(side.map { "[[playlists.side.items]]\nvideo = \"\(Fixtures.path($0))\"" }.joined(separator: "\n"))
        [[playlists.bottom.items]]
        video = "\(Fixtures.path("queue3.mp4"))"
        [entries.day]
        layout = "grid"
        start = "00:00"
        end = "24:00"
        """
    }

    /// The PSNR between a region of `png` and FFmpeg's frame of `media` at `time` scaled to the region:
    /// the one frame (`trim`: the image is compared with it alone), in RGB at full size first, then
    /// averaged down (`area`, what the compositor's bilinear sampling does at 2:1; scaling 4:2:0
    /// first halves the chroma again and costs ~10 dB at the test pattern's colour edges).
    static func zonePSNR(_ png: String, crop: (x: Int, y: Int, width: Int, height: Int), media: String, time: Double) throws -> Double {
        let result = try ChildProcess.run("ffmpeg", [
            "-hide_banner", "-nostdin", "-i", png, "-i", media, "-lavfi",
            "[0]crop=\(crop.width):\(crop.height):\(crop.x):\(crop.y),format=rgb24[a];"
                + "[1]select='gte(t,\(time - 0.001))',trim=end_frame=1,format=rgb24,scale=\(crop.width):\(crop.height):flags=area[b];[a][b]psnr",
            "-f", "null", "-",
        ])
        guard let range = result.stderr.range(of: "average:") else { return -1 }
        let value = result.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return value == "inf" ? .infinity : Double(value) ?? -1
    }

    @Test("three zones: each zone of the screenshot is FFmpeg's frame of the zone's clip, scaled into it (PSNR >= 30 dB)")
    func threeZonesMatchFFmpeg() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/grid.toml"
        try Self.threeZones(side: ["queue1.mp4"]).write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00.5Z"))
        defer { show.stop() }
        try show.refresh(37)
        let shot = try show.display.screenshot()
        try shot.writePNG(to: directory + "/grid.png")
        let frames = show.collector.frames
        let zones: [(layer: String, crop: (x: Int, y: Int, width: Int, height: Int))] = [
            ("screen", (0, 0, 160, 120)), ("side", (160, 0, 160, 120)), ("bottom", (0, 120, 160, 120)),
        ]
        for zone in zones {
            // What the zone shows: its layer's last presented frame.
            let last = try #require(frames.last { ($0.layer ?? "screen") == zone.layer }, "zone \(zone.layer) presented nothing")
            let psnr = try Self.zonePSNR(directory + "/grid.png", crop: zone.crop, media: last.source, time: last.presentationTime.seconds)
            #expect(psnr >= 30, "zone \(zone.layer) (\(last.source) at \(last.presentationTime.seconds) s): \(psnr) dB")
        }
        // The fourth quarter has no zone.
        let empty = Self.pixel(shot, x: 240, y: 180)
        #expect(empty == [0, 0, 0], "\(empty)")
    }

    @Test("a zone's seam is gapless while the other zones play on")
    func zoneSeamGapless() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/grid.toml"
        try Self.threeZones(side: ["queue1.mp4", "queue2.mp4"]).write(toFile: path, atomically: true, encoding: .utf8)
        // 1.5 s into the window: the side zone's first clip ends 0.5 s later.
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:01.5Z"))
        defer { show.stop() }
        try show.refresh(60)
        let side = show.collector.frames.filter { $0.layer == "side" }
        let last = try #require(side.last { $0.source == Fixtures.path("queue1.mp4") })
        let first = try #require(side.first { $0.source == Fixtures.path("queue2.mp4") }, "the side zone never reached its second clip")
        #expect(first.presentedAt - last.presentedAt == MediaTime(value: 1, timescale: 25), "the side zone's seam: \(last.presentedAt.seconds) → \(first.presentedAt.seconds)")
        #expect(first.presentationTime == .zero)
        // Meanwhile the main zone presented a new frame every 1/25 s across the side's seam.
        let main = show.collector.frames.filter { ($0.layer ?? "screen") == "screen" && $0.presentedAt >= last.presentedAt - MediaTime(value: 1, timescale: 5) && $0.presentedAt <= first.presentedAt + MediaTime(value: 1, timescale: 5) }
        #expect(main.count >= 10, "\(main.count) main-zone frames around the side's seam")
        for (a, b) in zip(main, main.dropFirst()) {
            #expect(b.presentedAt - a.presentedAt == MediaTime(value: 1, timescale: 25), "the main zone: \(a.presentedAt.seconds) → \(b.presentedAt.seconds)")
        }
    }
}
