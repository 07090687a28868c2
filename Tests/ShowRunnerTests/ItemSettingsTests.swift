import Displays
import Foundation
import MediaTime
import Playback
import Scheduling
@testable import ShowRunner
import Synchronization
import SinkDoubles
import Testing
import MediaSinks
import Threading

/// The test double behind the AudioSink protocol: records the volumes the show sets, plays into a recording sink.
final class VolumeRecordingSink: AudioSink, AudioSinkBufferLevel, @unchecked Sendable {
    let inner: RecordingAudioSink
    private let volumes = LockedValue<[Float]>([])
    init(clock: any HostClock) { inner = RecordingAudioSink(clock: clock) }
    var format: AudioFormat { inner.format }
    var queuedDuration: MediaTime { inner.queuedDuration }
    var capacity: MediaTime { inner.capacity }
    var volumesSet: [Float] { volumes.withLock { $0 } }
    func enqueue(_ buffer: AudioBuffer) -> Bool { inner.enqueue(buffer) }
    func currentReading() -> AudioClockReading? { inner.currentReading() }
    func flush() { inner.flush() }
    func setPaused(_ paused: Bool) { inner.setPaused(paused) }
    func setVolume(_ volume: Float) {
        volumes.withLock { $0.append(volume) }
        inner.setVolume(volume)
    }
}

/// Each item's volume, mute and gravity take effect when it becomes current.
@Suite("item settings", .enabled(if: Fixtures.available, "needs the generated fixtures and ffprobe"))
struct ItemSettingsTests {
    @Test("volume and gravity switch with the item; a muted item plays silently on the display clock")
    func volumeGravityMute() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/items.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [display]
            gravity = "fit"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            volume = 0.3
            gravity = "fill"
            out = "1s"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            volume = 0.8
            out = "1s"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            mute = true
            out = "1s"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let clock = ManualClock(start: MediaTime(value: 1, timescale: 1))
        let sink = VolumeRecordingSink(clock: clock)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"),
                                         mode: DisplayMode(width: 320, height: 180, refreshMillihertz: 50_000), audioSink: sink, clock: clock)
        defer { show.stop() }
        // Started, not one refresh yet, the first item's volume is set: a display bringing up its
        // renderer asks for nothing (in the appliance's first boot the sound played 2.2 s at full
        // volume before the first picture was asked for).
        #expect(sink.volumesSet == [0.3], "\(sink.volumesSet)")
        var leftEdges: [String: [UInt8]] = [:]
        try show.refresh(170) { outcome in
            guard case .presented = outcome, let frame = show.collector.frames.last,
                  frame.presentationTime >= MediaTime(value: 1, timescale: 2), leftEdges["\(frame.itemIndex)"] == nil else { return }
            let pixel = try show.display.screenshot().image.pixel(x: 4, y: 90)
            leftEdges["\(frame.itemIndex)"] = [pixel.r, pixel.g, pixel.b]
        }
        // fill: the 4:3 picture covers the 16:9 screen; fit: black pillars at the sides.
        #expect(leftEdges["0"].map { $0.max()! > 100 } == true, "item 0 fills: \(leftEdges)")
        #expect(leftEdges["1"].map { $0.max()! < 20 } == true, "item 1 fits: \(leftEdges)")
        #expect(Array(sink.volumesSet.prefix(3)) == [0.3, 0.8, 0], "\(sink.volumesSet)")
        // The out point: each item ends after 1 s (25 frames), the next starts at its first frame.
        let frames = show.collector.frames
        #expect(frames.filter { $0.itemIndex == 0 }.count == 25)
        #expect(frames.filter { $0.itemIndex == 1 }.first?.presentationTime == .zero)
        // The muted item has no audio clock: the display clock paces it.
        #expect(frames.filter { $0.itemIndex == 2 }.allSatisfy { $0.audioClock == nil })
        #expect(frames.filter { $0.itemIndex == 0 }.dropFirst(5).contains { $0.audioClock != nil })
    }

    @Test("an in point starts the media there and places cues from it; repeat plays the item again")
    func inPointAndRepeat() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let overlay = directory + "/magenta.png"
        try writeSolidPNG(overlay, red: 255, green: 0, blue: 255)
        let path = directory + "/trim.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            in = "1s"
            out = "2s"
            repeat = 2
              [[playlists.main.items.overlays]]
              image = "\(overlay)"
              rect = [0.5, 0.5, 0.25, 0.25]
              at = "0.5s"
            [[playlists.main.items]]
            video = "\(Fixtures.path("queue1.mp4"))"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"))
        defer { show.stop() }
        try show.refresh(130)
        let frames = show.collector.frames
        for index in 0...1 {
            let played = frames.filter { $0.itemIndex == index }.map(\.presentationTime)
            #expect(played.first == MediaTime(value: 1, timescale: 1), "item \(index) starts at its in point")
            #expect(played.last == MediaTime(value: 49, timescale: 25), "item \(index) ends before its out point")
            #expect(played.count == 25)
        }
        let shown = show.collector.events(.overlayShown)
        // The cue is 1.5 s in the media; frames start every 40 ms, so the first at or after it is 1.52 s.
        #expect(shown.prefix(2).map(\.time) == [MediaTime(value: 38, timescale: 25), MediaTime(value: 38, timescale: 25)])
        #expect(frames.first { $0.itemIndex == 2 }?.source == Fixtures.path("queue1.mp4"))
    }

    @Test("at 60 Hz a seam after a trimmed item is as gapless as one after an item that plays to its end, sound included")
    func trimmedSeamAt60Hz() async throws {
        let directory = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/seams.toml"
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            out = "1s"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            [[playlists.main.items]]
            video = "\(Fixtures.path("h264_aac.mp4"))"
            """.write(toFile: path, atomically: true, encoding: .utf8)
        let clock = ManualClock(start: MediaTime(value: 1, timescale: 1))
        let sink = RecordingAudioSink(clock: clock)
        let show = try await ShowHarness(schedulePath: path, startAt: .iso("2026-01-01T00:00:00Z"),
                                         mode: DisplayMode(width: 320, height: 180, refreshMillihertz: 60_000), audioSink: sink, clock: clock)
        defer { show.stop() }
        try show.refresh(10)
        let flushesAtStart = sink.flushCount
        try show.refresh(700)
        let frames = show.collector.frames
        func seam(after index: Int) -> (refreshes: UInt64, elapsed: MediaTime)? {
            guard let last = frames.last(where: { $0.itemIndex == index }), let next = frames.first(where: { $0.itemIndex == index + 1 }),
                  let first = frames.first(where: { $0.itemIndex == index }) else { return nil }
            return (next.refresh - last.refresh, next.presentedAt - first.presentedAt)
        }
        let trimmed = try #require(seam(after: 0))
        let natural = try #require(seam(after: 1))
        // A 25 fps frame spans 2 or 3 refreshes at 60 Hz; the seams are no different, trimmed or not.
        #expect((2...3).contains(trimmed.refreshes), "trimmed seam: \(trimmed.refreshes) refreshes")
        #expect((2...3).contains(natural.refreshes), "natural seam: \(natural.refreshes) refreshes")
        // Each item starts when the previous one's end (out point or media end) is reached on the clock.
        #expect(abs((trimmed.elapsed - MediaTime(value: 1, timescale: 1)).seconds) <= 1.0 / 60 + 1e-9, "\(trimmed.elapsed.seconds) s")
        #expect(abs((natural.elapsed - MediaTime(value: 10, timescale: 1)).seconds) <= 1.0 / 60 + 1e-9, "\(natural.elapsed.seconds) s")
        // The sound runs on through both seams: never flushed, its timeline continuous.
        #expect(sink.flushCount == flushesAtStart)
        let buffers = sink.recordedBuffers
        let breaks = zip(buffers, buffers.dropFirst()).filter { $1.presentationTime != $0.presentationTime + $0.duration }
        #expect(breaks.isEmpty, "the sound's timeline breaks at \(breaks.prefix(3).map { ($0.0.presentationTime.seconds, $0.0.duration.seconds, $0.1.presentationTime.seconds) }); sync: \(show.collector.events(.syncAdjust).map { ($0.error?.seconds ?? 0, $0.adjustment ?? 0) }) \(show.collector.events(.syncSeek).map { $0.error?.seconds ?? 0 })")
        #expect(frames.filter { $0.itemIndex == 0 }.count == 25)
        #expect(frames.first { $0.itemIndex == 1 }?.presentationTime == .zero)
    }
}
