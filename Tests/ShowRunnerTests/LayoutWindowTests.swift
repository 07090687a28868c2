import Foundation
import MediaTime
import Scheduling
@testable import ShowRunner
import Testing

/// What a screen shows in a layout's window while zones are not yet composed on one screen: the
/// sound zone's playlist, full screen, where its wall-clock programme puts it — never black.
@Suite("a layout's window", .enabled(if: Fixtures.available, "needs the generated fixtures (scripts/fixtures.sh)"))
struct LayoutWindowTests {
    @Test("the sound zone's playlist plays full screen at its wall-clock position; the other zones' media do not")
    func soundZonePlays() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/layout.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "other"
            [layouts.split]
              [[layouts.split.zones]]
              name = "side"
              rect = [0.75, 0.0, 0.25, 1.0]
              playlist = "other"
              audio = false
              [[layouts.split.zones]]
              name = "main"
              rect = [0.0, 0.0, 0.75, 1.0]
              playlist = "feature"
            [[playlists.feature.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            [[playlists.feature.items]]
            video = "\(Fixtures.path("queue2.mp4"))"
            [[playlists.other.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            [entries.day]
            layout = "split"
            start = "00:00"
            end = "24:00"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        // Half a second into the window: the feature's first item, 0.5 s in.
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00.5Z"))
        defer { show.stop() }
        try show.refresh(60)
        let frames = show.collector.frames
        #expect(!frames.isEmpty, "nothing was presented in the layout's window")
        #expect(frames.allSatisfy { $0.source == Fixtures.path("queue1.mp4") || $0.source == Fixtures.path("queue2.mp4") },
                "\(Set(frames.map(\.source)))")
        let first = try #require(frames.first)
        #expect(first.source == Fixtures.path("queue1.mp4"))
        #expect(abs(first.presentationTime.seconds - 0.5) <= 0.1, "the zone's item started at \(first.presentationTime.seconds) s, not 0.5 s")
    }
}
