import MediaAsset
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Player items")
struct PlayerItemTests {
    @Test("status goes unknown → readyToPlay, with duration, size, tracks and loaded ranges")
    func readyItem() async {
        let harness = Harness(audio: true)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        #expect(item.status == .unknown)
        #expect(item.loadedTimeRanges.isEmpty)
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .readyToPlay)
        #expect(item.duration == MediaTime(value: 10, timescale: 1))
        #expect(item.presentationSize == (320, 240))
        #expect(item.tracks.map(\.mediaType) == [.video, .audio])
        #expect(item.tracks.allSatisfy { $0.isEnabled })
        #expect(item.seekableTimeRanges == [TimeRange(start: .zero, duration: MediaTime(value: 10, timescale: 1))])
        #expect(item.loadedTimeRanges.first.map { $0.duration > .zero } == true)
        #expect(item.canPlayReverse == false)
        #expect(item.canPlayFastForward == true)
    }

    @Test("a missing file fails with an error naming it")
    func missingFile() async {
        let harness = Harness()
        let item = PlayerItem(url: "/nonexistent/missing.mp4")
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .failed)
        #expect(item.error?.reason == .notFound)
        #expect(item.error?.description.contains("/nonexistent/missing.mp4") == true)
    }

    @Test("bad inputs fail with a reason and never hang", arguments: ["bad/empty.mp4", "bad/text.mp4", "bad/truncated.mp4", "bad/unsupported.avi"])
    func badInputs(name: String) async {
        let harness = Harness()
        let item = PlayerItem(url: Fixtures.path(name))
        item.isAudioEnabled = false
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        // Either the item fails, or whatever decodes plays to the end: both end playback.
        harness.video.run(until: { item.status == .failed || player.rate == 0 }, maxRefreshes: 2_000)
        if item.status == .failed {
            #expect(item.error?.description.contains(name) == true)
        } else {
            #expect(player.rate == 0)
        }
    }

    @Test("a flipped-bytes file plays what it can and ends")
    func corruptPayload() {
        let harness = Harness()
        let item = PlayerItem(url: Fixtures.path("bad/flipped.mp4"))
        item.isAudioEnabled = false
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { item.status == .failed || player.rate == 0 }, maxRefreshes: 3_000)
        #expect(item.status == .failed || player.rate == 0)
        let times = harness.shownTimes
        #expect(times == times.sorted())
    }

    @Test("disabling the audio track plays muted: nothing reaches the audio sink")
    func disabledAudio() async {
        let harness = Harness(audio: true)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        let player = harness.player(item)
        defer { player.invalidate() }
        for await status in item.statusUpdates where status != .unknown { break }
        let audioTrack = item.tracks.first { $0.mediaType == .audio }!
        item.setTrack(audioTrack.id, enabled: false)
        #expect(item.tracks.first { $0.mediaType == .audio }?.isEnabled == false)
        let before = harness.audio!.recordedBuffers.count
        player.play()
        harness.video.run(refreshes: 120)
        #expect(harness.audio!.recordedBuffers.count == before)
        #expect(harness.video.presentations.count >= 40)
    }

    @Test("an item made from an Asset plays")
    func fromAsset() {
        let harness = Harness()
        let item = PlayerItem(asset: Asset(pathOrURL: Fixtures.path("queue2.mp4")))
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 1_000)
        #expect(harness.shownTimes == Fixtures.videoFrames("queue2.mp4").map(\.presentationTime))
    }
}
