import Displays
import Foundation
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Scheduling
@testable import ShowRunner
import Testing

/// What plays when: the resolver's answer for the show clock, stills, and schedule files changing under a running show.
@Suite("programme", .serialized, .enabled(if: Fixtures.available, "needs the generated fixtures and ffprobe"))
struct ProgrammeTests {
    static func loop(_ clip: String) -> String {
        """
        version = 1
        timezone = "UTC"
        fallback = "main"
        [[playlists.main.items]]
        video = "\(Fixtures.path(clip))"
        """
    }

    static let daily = """
        version = 1
        timezone = "UTC"
        fallback = "main"
        [[playlists.main.items]]
        video = "\(Fixtures.path("queue1.mp4"))"
        [[playlists.noon.items]]
        video = "\(Fixtures.path("queue2.mp4"))"
        [[playlists.noon.items]]
        video = "\(Fixtures.path("queue3.mp4"))"
        [entries.lunch]
        playlist = "noon"
        start = "12:00"
        end = "13:00"
        """

    @Test("--start-at plays what the resolver says for that instant, from the position it says", arguments: [
        "2026-03-02T12:00:03Z", "2026-03-02T12:00:00.5Z", "2026-03-02T11:59:59Z", "2026-03-02T13:00:01Z",
    ])
    func startAt(instant: String) async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/daily.toml"
        try Self.daily.write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso(instant))
        defer { show.stop() }
        try show.refresh(3)
        let expected = ScheduleResolver(schedule: show.runner.currentSchedule).resolve(at: .iso(instant))
        let playlist = try #require(show.runner.currentSchedule.playlists[expected.playlistName ?? ""])
        let first = try #require(show.collector.frames.first)
        #expect(first.source == playlist.items[expected.itemIndex!].source.location)
        // The show follows the wall clock: its first frame is the one containing the programme's
        // position at the moment it is presented (25 fps; the show's clock started at host time 1 s).
        let position = expected.mediaTime + (first.presentedAt - MediaTime(value: 1, timescale: 1))
        #expect(first.presentationTime <= position && position < first.presentationTime + MediaTime(value: 1, timescale: 25),
                "first frame \(first.presentationTime.seconds) s for position \(position.seconds) s")
    }

    @Test("the wall clock stepped an hour forward, then back, while playing: the programme is resolved again each time (clock-step)")
    func clockStep() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/steps.toml"
        // A 7 s loop (2 + 2 + 2 + 1 s): an hour is 514 loops and 2 s, so a step of an hour moves
        // the programme by 2 s inside the same playlist — no entry changes to notice it by.
        try """
            version = 1
            fallback = "loop"
            [[playlists.loop.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            [[playlists.loop.items]]
            video = "\(Fixtures.path("queue2.mp4"))"
            [[playlists.loop.items]]
            video = "\(Fixtures.path("queue3.mp4"))"
            [[playlists.loop.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            out = "00:00:01"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let shift = WallClockShift()
        let start = UTCInstant.iso("2026-03-02T00:00:00.5Z")
        let show = try await ShowHarness(schedulePath: path, startAt: start, shift: shift)
        defer { show.stop() }
        try show.refresh(10)
        #expect(show.collector.events(.clockStepped).isEmpty)

        for (step, name) in [(MediaTime(value: 3600, timescale: 1), "forward"), (MediaTime(value: -3600, timescale: 1), "back")] {
            let before = show.collector.frames.count
            shift.step(by: step)
            show.runner.tick()
            try show.refresh(10)
            let steps = show.collector.events(.clockStepped)
            #expect(steps.count == (step > .zero ? 1 : 2), "\(name): no clock-step")
            #expect(steps.last?.delay == step)
            // The first frame after the step is the programme's for the new now, at its position.
            let now = try #require(show.runner.currentScheduleNow(), "\(name)")
            let expected = ScheduleResolver(schedule: show.runner.currentSchedule).resolve(at: now)
            let playlist = try #require(show.runner.currentSchedule.playlists["loop"])
            let last = try #require(show.collector.frames.last)
            #expect(last.source == playlist.items[expected.itemIndex!].source.location, "\(name)")
            #expect((last.presentationTime - expected.mediaTime).seconds.magnitude < 0.1,
                    "\(name): showing \(last.presentationTime.seconds) s, the programme says \(expected.mediaTime.seconds) s")
            #expect(show.collector.frames.count > before)
        }
    }

    @Test("a window opening while the show runs cuts over at once to what the resolver says")
    func windowOpens() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/daily.toml"
        try Self.daily.write(toFile: path, atomically: true, encoding: .utf8)
        // 11:59:59 is 1 s into the 2 s fallback clip; the lunch window opens 1 s later.
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-03-02T11:59:59.3Z"))
        defer { show.stop() }
        try show.refresh(100)
        let sources = show.collector.frames.map(\.source)
        #expect(sources.first == Fixtures.path("queue1.mp4"))
        #expect(sources.contains(Fixtures.path("queue2.mp4")))
        let switchIndex = try #require(sources.firstIndex(of: Fixtures.path("queue2.mp4")))
        #expect(show.collector.frames[switchIndex].presentationTime == .zero)
    }

    @Test("a still image shows for its duration, then the next item plays")
    func stillImage() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/still.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            image = "\(Fixtures.path("cover.png"))"
            duration = "1.5s"
            [[playlists.main.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"))
        defer { show.stop() }
        try show.refresh(120)
        let frames = show.collector.frames
        let still = frames.filter { $0.source == Fixtures.path("cover.png") }
        #expect(still.count == 1, "one picture")
        let next = try #require(frames.first { $0.source == Fixtures.path("queue1.mp4") })
        // The next item starts where the programme puts it, 1.5 s after the still's start (the
        // show's clock started at host time 1 s); the still is the picture until then.
        #expect(next.presentedAt - MediaTime(value: 1, timescale: 1) == MediaTime(value: 3, timescale: 2), "on screen until 1.5 s")
        #expect(still[0].presentedAt <= MediaTime(value: 1, timescale: 1) + show.display.refreshInterval)
    }

    @Test("a valid replacement of the schedule file switches the programme at the next item boundary without a gap")
    func reloadAtBoundary() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/show.toml"
        try Self.loop("queue1.mp4").write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"), watchesFile: true)
        defer { show.stop() }
        try show.refresh(30)  // 0.6 s into the first 2 s clip
        try Fixtures.replace(path, with: Self.loop("queue2.mp4"))
        #expect(await show.waitFor(.scheduleLoaded, count: 2), "the change was noticed and adopted")
        try show.refresh(200)
        let frames = show.collector.frames
        let switchIndex = try #require(frames.firstIndex { $0.source == Fixtures.path("queue2.mp4") })
        let last = frames[switchIndex - 1], first = frames[switchIndex]
        // The old clip played to its last frame, the new one starts at its first, one frame later.
        #expect(last.source == Fixtures.path("queue1.mp4"))
        #expect(last.presentationTime == MediaTime(value: 49, timescale: 25) || last.presentationTime.seconds > 1.95)
        #expect(first.presentationTime == .zero)
        #expect(first.presentedAt - last.presentedAt == MediaTime(value: 1, timescale: 25), "no gap at the seam")
        #expect(frames[switchIndex...].allSatisfy { $0.source == Fixtures.path("queue2.mp4") })
    }

    @Test("a broken replacement is rejected with its errors while playback continues")
    func brokenReplacement() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/show.toml"
        try Self.loop("queue1.mp4").write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"), watchesFile: true)
        defer { show.stop() }
        try show.refresh(30)
        try Fixtures.replace(path, with: "version = 1\ntimezone = \"UTC\"\nfallback = \"nowhere\"\n[[playlists.main.items]]\nvideo = 7\n")
        #expect(await show.waitFor(.scheduleRejected, count: 1), "the change was noticed and rejected")
        let rejected = try #require(show.collector.events(.scheduleRejected).first)
        #expect(rejected.reason?.contains("show.toml:") == true, "\(rejected.reason ?? "")")
        let before = show.collector.frames.count
        try show.refresh(250)
        let after = show.collector.frames[before...]
        #expect(after.count >= 120, "playback continued")
        #expect(after.allSatisfy { $0.source == Fixtures.path("queue1.mp4") })
        #expect(show.collector.events(.scheduleLoaded).count == 1)
    }

    @Test("an interrupt in a replacement file takes effect at once")
    func interruptReload() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/show.toml"
        try Self.loop("h264_aac.mp4").write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"), watchesFile: true)
        defer { show.stop() }
        try show.refresh(50)  // 1 s into the 10 s clip
        try Fixtures.replace(path, with: Self.loop("h264_aac.mp4") + """

            [[playlists.alert.items]]
            video = "\(Fixtures.path("queue3.mp4"))"
            [entries.alert]
            playlist = "alert"
            interrupt = true
            start = "00:00"
            end = "00:30"
            """)
        #expect(await show.waitFor(.scheduleLoaded, count: 2))
        try show.refresh(10)
        let frames = show.collector.frames
        let switchIndex = try #require(frames.firstIndex { $0.source == Fixtures.path("queue3.mp4") })
        #expect(frames[switchIndex - 1].presentationTime < MediaTime(value: 2, timescale: 1), "cut mid-clip")
        #expect(frames[switchIndex].presentedAt - frames[switchIndex - 1].presentedAt <= MediaTime(value: 1, timescale: 25))
    }
}
