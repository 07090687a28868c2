import Displays
import Foundation
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Scheduling
@testable import ShowRunner
import Testing

/// Overlays appear with the first presented frame at or after their cue, on the real headless display.
@Suite("overlay cues", .enabled(if: Fixtures.available, "needs the generated fixtures and ffprobe"))
struct OverlayCueTests {
    /// 20 cues at odd times (most inside a frame's interval, some on frame starts), 0.2 s each.
    static let cues: [String] = (0..<20).map { index in
        let millis = 263 + index * 467 - (index % 4 == 0 ? 23 : 0)   // every 4th lands on a 40 ms frame start
        return String(format: "%d.%03ds", millis / 1000, millis % 1000)
    }

    static func schedule(overlay: String) -> String {
        var text = """
            version = 1
            timezone = "UTC"
            fallback = "clip"

            [[playlists.clip.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"

            """
        for cue in cues {
            text += """

                  [[playlists.clip.items.overlays]]
                  image = "\(overlay)"
                  rect = [0.5, 0.5, 0.25, 0.25]
                  at = "\(cue)"
                  duration = "0.2s"

                """
        }
        return text
    }

    @Test("overlay-shown carries the first presented frame at or after each of 20 cues; screenshots show it absent one frame before and present at the cue")
    func twentyCues() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let overlay = directory + "/magenta.png"
        try writeSolidPNG(overlay, red: 255, green: 0, blue: 255)
        let path = directory + "/cues.toml"
        try Self.schedule(overlay: overlay).write(toFile: path, atomically: true, encoding: .utf8)

        // What ffprobe says: for each cue, the frame before it and the first frame at or after it.
        let frames = try Fixtures.framePTS("h264_aac.mp4")
        let cueTimes = Self.cues.map { Cue(parsing: $0)!.resolve(itemDuration: nil)! }
        let atCue = cueTimes.map { cue in frames.first { $0 >= cue }! }
        let beforeCue = cueTimes.map { cue in frames.last { $0 < cue }! }

        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"))
        defer { show.stop() }
        var checkedBefore = Set<Int>(), checkedAt = Set<Int>()
        var lastSeen = 0
        try show.refresh(540) { outcome in
            guard case .presented(let frameID, _) = outcome, frameID != nil else { return }
            let frames = show.collector.frames
            guard frames.count > lastSeen, let frame = frames.last else { return }
            lastSeen = frames.count
            // The overlay's centre (the rect is [0.5, 0.5, 0.25, 0.25] of 320x240).
            for (index, time) in beforeCue.enumerated() where frame.presentationTime == time {
                let pixel = try show.display.screenshot().image.pixel(x: 200, y: 150)
                #expect(!(pixel.r > 240 && pixel.g < 20 && pixel.b > 240), "cue \(index): overlay absent one frame before")
                checkedBefore.insert(index)
            }
            for (index, time) in atCue.enumerated() where frame.presentationTime == time {
                let pixel = try show.display.screenshot().image.pixel(x: 200, y: 150)
                #expect(pixel.r > 240 && pixel.g < 20 && pixel.b > 240, "cue \(index): overlay present at \(time.seconds) s, got \(pixel)")
                checkedAt.insert(index)
            }
        }
        #expect(checkedBefore.count == 20 && checkedAt.count == 20)

        // Every frame was presented once, in order.
        let presented = show.collector.frames.filter { $0.itemIndex == 0 }.map(\.presentationTime)
        #expect(presented == frames)
        let shown = show.collector.events(.overlayShown).filter { $0.itemIndex == 0 }
        try #require(shown.count == 20, "\(shown.count) overlay-shown events")
        for (index, event) in shown.enumerated() {
            #expect(event.time == atCue[index], "cue \(Self.cues[index]): shown with \(event.time?.seconds ?? -1), ffprobe's first frame at or after it is \(atCue[index].seconds)")
        }
        #expect(show.collector.events(.overlayHidden).filter { $0.itemIndex == 0 }.count == 20)
    }

    @Test("an overlay whose time has passed when the show joins an item mid-way is not shown; one still running is shown at once")
    func joiningMidItem() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let overlay = directory + "/magenta.png"
        try writeSolidPNG(overlay, red: 255, green: 0, blue: 255)
        let path = directory + "/join.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "clip"
            [[playlists.clip.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
              [[playlists.clip.items.overlays]]
              image = "\(overlay)"
              rect = [0.5, 0.5, 0.25, 0.25]
              at = "1s"
              duration = "1s"
              [[playlists.clip.items.overlays]]
              image = "\(overlay)"
              rect = [0.0, 0.0, 0.25, 0.25]
              at = "2s"
              duration = "3s"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        // The fallback loops from the epoch with a 10 s period: 00:00:03 is 3 s into the clip.
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:03Z"))
        defer { show.stop() }
        try show.refresh(20)
        let shown = show.collector.events(.overlayShown).filter { $0.itemIndex == 0 }
        #expect(shown.count == 1)
        #expect(shown.first?.time == MediaTime(value: 3, timescale: 1))
        #expect(shown.first?.detail?.contains("at 00:00:02") == true, "\(shown.first?.detail ?? "")")
    }
}

/// Fades: the frame that brings a fading-in overlay already carries its first step.
@Suite("overlay fades", .enabled(if: Fixtures.available, "needs the generated fixtures and ffprobe"))
struct OverlayFadeTests {
    @Test("a fading-in overlay is visible (faintly) from its first refresh and full after its fade")
    func fadeInStartsAtTheCue() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let overlay = directory + "/white.png"
        try writeSolidPNG(overlay, red: 255, green: 255, blue: 255)
        let path = directory + "/fade.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            image = "\(Fixtures.path("cover.png"))"
            duration = "3s"
              [[playlists.main.items.overlays]]
              image = "\(overlay)"
              rect = [0.25, 0.25, 0.5, 0.5]
              at = "1s"
              fade_in = "0.2s"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"))
        defer { show.stop() }
        var levels: [Int] = []   // the overlay centre's brightness, per refresh
        var shownAt: Int?
        try show.refresh(100) { outcome in
            guard case .presented = outcome else { levels.append(levels.last ?? 0); return }
            let pixel = try show.display.screenshot().image.pixel(x: 160, y: 120)
            levels.append(Int(pixel.r) + Int(pixel.g) + Int(pixel.b))
            if shownAt == nil, !show.collector.events(.overlayShown).isEmpty { shownAt = levels.count - 1 }
        }
        let first = try #require(shownAt)
        #expect(levels[first] > levels[first - 1] + 20, "brighter with its first step: \(levels[first - 1]) -> \(levels[first])")
        #expect(levels[first] < 700, "but only a step of the fade: \(levels[first])")
        // 0.2 s at 50 Hz is 10 refreshes.
        #expect(levels[first + 10] >= 750, "full after the fade: \(levels[first + 10])")
    }
}

/// Tickers: a text line running right to left through its rectangle at its speed, over its bar.
@Suite("tickers", .enabled(if: Fixtures.available, "needs the generated fixtures and ffprobe"))
struct TickerTests {
    @Test("the text enters at the right and moves left at ticker_speed rectangle widths per second")
    func scrolls() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/ticker.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            image = "\(Fixtures.path("cover.png"))"
            duration = "5s"
              [[playlists.main.items.overlays]]
              text = "IIII news"
              ticker = true
              ticker_speed = 0.25
              rect = [0.0, 0.8, 1.0, 0.2]
              color = "#FFFFFF"
              background = "#000000FF"
              at = "1s"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"))
        defer { show.stop() }
        /// The leftmost column of the bar (320 px wide, rows 192..<240) with a bright pixel: the text's left edge.
        func textLeftEdge() throws -> Int? {
            let image = try show.display.screenshot().image
            return (0..<320).first { x in (200..<236).contains { y in image.pixel(x: x, y: y).g > 200 } }
        }
        try show.refresh(50 + 25)   // 1 s to the cue, then 0.5 s of running
        let early = try #require(try textLeftEdge())
        let layersEarly = show.display.layers.overlayIDs
        try show.refresh(25)        // 0.5 s later
        let later = try #require(try textLeftEdge())
        // 0.25 widths per second of 320 px is 80 px/s: 40 px in 0.5 s.
        #expect(abs((early - later) - 40) <= 3, "moved \(early - later) px in 0.5 s")
        // The line moved without being replaced: the same two layers (bar and text), rasterised once.
        #expect(layersEarly.count == 2)
        #expect(show.display.layers.overlayIDs == layersEarly)
        #expect(early > 240 && early < 300, "entered from the right: \(early)")
        #expect(show.collector.events(.overlayShown).count == 1)
    }
}
