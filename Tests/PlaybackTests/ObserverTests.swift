import Dispatch
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Time observers")
struct ObserverTests {
    func mutedItem(_ name: String = "h264_aac.mp4") -> PlayerItem {
        let item = PlayerItem(url: Fixtures.path(name))
        item.isAudioEnabled = false
        return item
    }

    @Test("a boundary observer at t fires on the first presented frame at or past t")
    func boundaryFiresOnFirstFrameAtOrAfterMark() {
        let reference = Fixtures.videoFrames("h264_aac.mp4").map(\.presentationTime)
        let harness = Harness()
        let player = harness.player(mutedItem())
        defer { player.invalidate() }
        // 2.01 s lies between frames (40 ms apart): the frame at 2.04 s is the first at or past it.
        let marks = [MediaTime(value: 201, timescale: 100), MediaTime(value: 5, timescale: 1)]
        let presentedAtFire = Collector<MediaTime>()
        let queue = DispatchQueue(label: "boundary")
        let video = harness.video
        _ = player.addBoundaryTimeObserver(forTimes: marks, queue: queue) {
            presentedAtFire.append(video.presentations.last!.presentationTime)
        }
        let logged = Collector<MediaTime>()
        player.setPresentationHandler { record in
            if case .event(let event) = record, event.kind == .boundaryCrossed, let time = event.time { logged.append(time) }
        }
        player.play()
        // Run one refresh at a time and let the observer queue drain, so "last presented" is exact.
        var fired = 0
        harness.video.run(until: {
            queue.sync {}
            if presentedAtFire.values.count != fired { fired = presentedAtFire.values.count }
            return player.rate == 0
        }, maxRefreshes: 2_000)
        queue.sync {}
        let expected = marks.map { mark in reference.first { $0 >= mark }! }
        #expect(presentedAtFire.values == expected)
        #expect(logged.values == marks)
    }

    @Test("a seek that jumps over a mark does not fire it")
    func seekOverMarkDoesNotFire() {
        let harness = Harness()
        let player = harness.player(mutedItem())
        defer { player.invalidate() }
        let fired = Collector<Int>()
        _ = player.addBoundaryTimeObserver(forTimes: [MediaTime(value: 3, timescale: 1)], queue: nil) { fired.append(1) }
        player.play()
        harness.video.run(refreshes: 30)
        player.seek(to: MediaTime(value: 6, timescale: 1), toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: nil)
        harness.video.run(refreshes: 30)
        settle(timeout: 0.2)
        #expect(fired.values.isEmpty)
    }

    @Test("a boundary at 0 fires on the first frame; one at the duration fires when the item ends")
    func boundaryAtZeroAndEnd() {
        let harness = Harness()
        let item = mutedItem("queue1.mp4")
        let player = harness.player(item)
        defer { player.invalidate() }
        let fired = Collector<String>()
        _ = player.addBoundaryTimeObserver(forTimes: [.zero], queue: nil) { fired.append("start") }
        _ = player.addBoundaryTimeObserver(forTimes: [MediaTime(value: 2, timescale: 1)], queue: nil) { fired.append("end") }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 1_000)
        settle { fired.values.count == 2 }
        #expect(Set(fired.values) == ["start", "end"])
    }

    @Test("a periodic observer fires on start, at each interval of presented time, and on stop")
    func periodicCounts() {
        let harness = Harness()
        let player = harness.player(mutedItem())
        defer { player.invalidate() }
        let times = Collector<MediaTime>()
        let queue = DispatchQueue(label: "periodic")
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 2), queue: queue) { times.append($0) }
        player.play()
        harness.video.run(until: { queue.sync {}; return player.rate == 0 }, maxRefreshes: 2_000)
        queue.sync {}
        // 10 s at 0.5 s: play at 0, crossings at 0.5 ... 9.5 (19), pause at the end.
        #expect(times.values.count == 21)
        #expect(times.values.first == .zero)
        #expect(times.values.last == MediaTime(value: 10, timescale: 1))
    }

    @Test("removing an observer stops its calls")
    func removalStopsCalls() {
        let harness = Harness()
        let player = harness.player(mutedItem())
        defer { player.invalidate() }
        let calls = Collector<MediaTime>()
        let queue = DispatchQueue(label: "removal")
        let token = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 10), queue: queue) { calls.append($0) }
        player.play()
        harness.video.run(until: { queue.sync {}; return calls.values.count >= 5 }, maxRefreshes: 500)
        player.removeTimeObserver(token)
        let countAtRemoval = calls.values.count
        harness.video.run(refreshes: 120)
        queue.sync {}
        #expect(countAtRemoval >= 5)
        #expect(calls.values.count == countAtRemoval)
    }

    @Test("a block still running is skipped, never run concurrently")
    func runningBlockIsSkipped() {
        let harness = Harness()
        let player = harness.player(mutedItem())
        defer { player.invalidate() }
        let concurrent = Collector<Bool>()
        let active = Collector<Int>()
        let gate = DispatchSemaphore(value: 0)
        let calls = Collector<MediaTime>()
        // A concurrent queue: only the engine's rule keeps calls from overlapping.
        let queue = DispatchQueue(label: "slow", attributes: .concurrent)
        _ = player.addPeriodicTimeObserver(forInterval: MediaTime(value: 1, timescale: 25), queue: queue) { time in
            active.append(1)
            if active.values.count - calls.values.count > 1 { concurrent.append(true) }
            gate.wait()
            calls.append(time)
        }
        player.play()
        harness.video.run(refreshes: 60)
        // About 25 intervals passed while the first call was blocked: all skipped.
        gate.signal()
        settle { calls.values.count == 1 }
        #expect(calls.values.count == 1)
        #expect(concurrent.values.isEmpty)
        harness.video.run(refreshes: 3)
        for _ in 0..<10 { gate.signal() }
        settle { calls.values.count >= 2 }
        #expect(calls.values.count >= 2)
    }
}
