import Dispatch
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Queue playback")
struct QueueTests {
    static let clips = ["queue1.mp4", "queue2.mp4", "queue3.mp4"]

    func items(_ names: [String]) -> [PlayerItem] {
        names.map { name in
            let item = PlayerItem(url: name.hasPrefix("/") ? name : Fixtures.path(name))
            item.isAudioEnabled = false
            return item
        }
    }

    @Test("three clips play gaplessly: clip n+1's first frame on the refresh after clip n's last")
    func gaplessSeams() {
        let references = Self.clips.map { Fixtures.videoFrames($0).map(\.presentationTime) }
        // One refresh per frame (25 Hz), so "the next refresh" is exact.
        let harness = Harness(refreshRate: 25)
        let player = harness.queue(items(Self.clips))
        defer { player.invalidate() }
        let indices = Collector<Int>()
        player.setPresentationHandler { if case .frame(let frame) = $0 { indices.append(frame.itemIndex) } }
        player.play()
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 1_000)
        let shown = harness.video.presentations
        #expect(shown.map(\.presentationTime) == references.flatMap { $0 })
        // Consecutive refreshes throughout: no refresh without a new frame, at the seams included.
        let refreshes = shown.map(\.refresh)
        #expect(zip(refreshes, refreshes.dropFirst()).allSatisfy { $1 == $0 + 1 })
        #expect(indices.values == references.enumerated().flatMap { index, frames in Array(repeating: index, count: frames.count) })
    }

    @Test("at 60 Hz the last frame stays until the next clip's first frame, never longer than a frame")
    func seamsAt60Hz() {
        let harness = Harness(refreshRate: 60)
        let player = harness.queue(items(Self.clips))
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 2_000)
        let shown = harness.video.presentations
        #expect(shown.count == 150)
        // A 25 fps frame spans 2 or 3 refreshes at 60 Hz; the seams are no different.
        let gaps = zip(shown, shown.dropFirst()).map { $1.refresh - $0.refresh }
        #expect(gaps.allSatisfy { $0 == 2 || $0 == 3 })
        #expect(shown[50].refresh - shown[49].refresh <= 3)
        #expect(shown[100].refresh - shown[99].refresh <= 3)
    }

    @Test("a periodic observer fires at each item's start (a time jump) and when the queue runs out")
    func periodicAcrossItems() {
        let harness = Harness(refreshRate: 25)
        let player = harness.queue(items(Self.clips))
        defer { player.invalidate() }
        let times = Collector<MediaTime>()
        let queue = DispatchQueue(label: "periodic-queue")
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 1), queue: queue) { times.append($0) }
        player.play()
        harness.video.run(until: { queue.sync {}; return player.items().isEmpty }, maxRefreshes: 1_000)
        queue.sync {}
        let seconds = times.values.map(\.seconds)
        #expect(seconds == [0, 1, 0, 1, 0, 1, 2])
    }

    @Test("didPlayToEndTime is posted once per item")
    func endOncePerItem() async {
        let harness = Harness(refreshRate: 25)
        let queued = items(Self.clips)
        let player = harness.queue(queued)
        defer { player.invalidate() }
        let events = player.events
        let ended = Task {
            var ends: [String] = []
            for await event in events {
                if case .didPlayToEndTime(let item) = event { ends.append(item.url) }
                if ends.count == 3 { break }
            }
            return ends
        }
        player.play()
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 1_000)
        harness.video.run(refreshes: 10)
        #expect(await ended.value == queued.map(\.url))
    }

    @Test("a corrupt or missing item in the middle fails with its error and the next one plays")
    func failedItemIsSkipped() async {
        let harness = Harness(refreshRate: 25)
        let queued = items(["queue1.mp4", "bad/text.mp4", "/nonexistent/clip.mp4", "queue3.mp4"])
        let player = harness.queue(queued)
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 1_000)
        let expected = Fixtures.videoFrames("queue1.mp4").map(\.presentationTime) + Fixtures.videoFrames("queue3.mp4").map(\.presentationTime)
        #expect(harness.video.presentations.map(\.presentationTime) == expected)
        #expect(queued[1].status == .failed)
        #expect(queued[1].error?.description.contains("text.mp4") == true)
        #expect(queued[2].status == .failed)
        #expect(queued[2].error?.reason == .notFound)
        #expect(queued[3].status == .readyToPlay)
    }

    @Test("actionAtItemFailure .hold: the failed item stays current, nothing more is presented, until it is removed")
    func failedItemIsHeld() {
        let harness = Harness(refreshRate: 25)
        let queued = items(["queue1.mp4", "/nonexistent/clip.mp4", "queue3.mp4"])
        let player = harness.queue(queued)
        defer { player.invalidate() }
        player.actionAtItemFailure = .hold
        #expect(player.timeControlStatus == .paused)
        player.play()
        let first = Fixtures.videoFrames("queue1.mp4").map(\.presentationTime)
        harness.video.run(until: { player.currentItem === queued[1] }, maxRefreshes: 1_000)
        // Held: many refreshes later, still the failed item, still queue1's last picture.
        harness.video.run(refreshes: 50)
        #expect(player.currentItem === queued[1])
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate(.itemFailed))
        #expect(harness.shownTimes == first)
        // The owner skips it: the next item plays.
        player.remove(queued[1])
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 1_000)
        #expect(harness.shownTimes == first + Fixtures.videoFrames("queue3.mp4").map(\.presentationTime))
    }

    @Test("timeControlStatus: paused at rate 0, waiting with no item, playing while frames flow")
    func timeControlStatus() {
        let harness = Harness(refreshRate: 25)
        let player = harness.queue(items(["queue1.mp4"]))
        defer { player.invalidate() }
        #expect(player.timeControlStatus == .paused)
        player.play()
        harness.video.run(refreshes: 10)
        #expect(player.timeControlStatus == .playing)
        player.pause()
        #expect(player.timeControlStatus == .paused)
        player.play()
        player.removeAllItems()
        // The queue ran out: the rate falls to 0, as AVQueuePlayer's does.
        #expect(player.timeControlStatus == .paused)
        player.rate = 1
        #expect(player.timeControlStatus == .waitingToPlayAtSpecifiedRate(.noItemToPlay))
    }

    @Test("insert, remove, advance and canInsert edit the queue")
    func editing() {
        let harness = Harness(refreshRate: 25)
        let queued = items(["queue1.mp4", "queue2.mp4"])
        let player = harness.queue(queued)
        defer { player.invalidate() }
        let third = items(["queue3.mp4"])[0]
        #expect(player.canInsert(third, after: queued[0]))
        #expect(!player.canInsert(queued[1], after: nil))
        player.insert(third, after: queued[0])
        #expect(player.items().map(\.url) == [queued[0].url, third.url, queued[1].url])
        player.remove(queued[1])
        #expect(player.items().count == 2)
        player.play()
        harness.video.run(refreshes: 5)
        player.advanceToNextItem()
        #expect(player.currentItem === third)
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 500)
        let last = harness.video.presentations.suffix(50).map(\.presentationTime)
        #expect(last == Fixtures.videoFrames("queue3.mp4").map(\.presentationTime))
        player.removeAllItems()
        #expect(player.items().isEmpty)
    }

    @Test("looping one item repeats it without a gap at the seam")
    func loopingOneItem() {
        let harness = Harness(refreshRate: 25)
        let player = harness.queue(items(["queue1.mp4"]))
        defer { player.invalidate() }
        player.loops = true
        player.play()
        harness.video.run(refreshes: 160)
        let reference = Fixtures.videoFrames("queue1.mp4").map(\.presentationTime)
        let shown = harness.video.presentations
        #expect(shown.count == 160)
        #expect(Array(shown.map(\.presentationTime).prefix(150)) == reference + reference + reference)
        #expect(zip(shown, shown.dropFirst()).allSatisfy { $1.refresh == $0.refresh + 1 })
    }
}

@Suite("Queue audio")
struct QueueAudioTests {
    @Test("audio runs on across the seam: no flush, contiguous samples, A/V within 20 ms in both items")
    func gaplessAudio() {
        let harness = Harness(audio: true)
        let path = Fixtures.path("h264_aac.mp4")
        let player = harness.queue([PlayerItem(url: path), PlayerItem(url: path)])
        defer { player.invalidate() }
        let frames = Collector<PresentedFrame>()
        player.setPresentationHandler { if case .frame(let frame) = $0 { frames.append(frame) } }
        player.play()
        harness.video.run(refreshes: 5)
        let flushesAtStart = harness.audio!.flushCount
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 3_000)
        #expect(harness.audio!.flushCount == flushesAtStart)
        // The sink's timeline is continuous: each buffer starts where the previous one ended.
        let buffers = harness.audio!.recordedBuffers
        let breaks = zip(buffers, buffers.dropFirst()).filter { previous, next in
            abs((next.presentationTime - (previous.presentationTime + previous.duration)).seconds) > 1.0 / 48_000
        }
        #expect(breaks.isEmpty)
        #expect(frames.values.count == 500)
        let offsets = frames.values.compactMap { frame in frame.audioClock.map { abs(($0 - frame.presentationTime).seconds) } }
        #expect(offsets.count >= 490)
        #expect(offsets.allSatisfy { $0 <= 0.020 })
        #expect(Set(frames.values.filter { $0.audioClock != nil }.map(\.itemIndex)) == [0, 1])
    }
}
