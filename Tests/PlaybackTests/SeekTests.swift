import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Seeking")
struct SeekTests {
    func started(_ harness: Harness) -> (Player, PlayerItem) {
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        item.isAudioEnabled = false
        let player = harness.player(item)
        player.play()
        harness.video.run(refreshes: 20)
        return (player, item)
    }

    @Test("a zero-tolerance seek lands on the exact frame")
    func exactSeek() async {
        let reference = Fixtures.videoFrames("h264_aac.mp4")
        let harness = Harness()
        let (player, _) = started(harness)
        defer { player.invalidate() }
        let target = MediaTime(value: 6130, timescale: 1000)  // between frames 153 (6.12) and 154 (6.16)
        let expected = reference.last { $0.presentationTime <= target }!.presentationTime
        let done = Collector<Bool>()
        player.seek(to: target, toleranceBefore: .zero, toleranceAfter: .zero) { done.append($0) }
        let before = harness.video.presentations.count
        harness.video.run(until: { harness.video.presentations.count > before }, maxRefreshes: 200)
        #expect(harness.video.presentations[before].presentationTime == expected)
        settle { !done.values.isEmpty }
        #expect(done.values == [true])
        // Playback continues in order from there.
        harness.video.run(refreshes: 30)
        let after = harness.video.presentations[before...].map(\.presentationTime)
        #expect(after == after.sorted())
        #expect(Set(after).count == after.count)
    }

    @Test("a default seek lands on the keyframe at or before the target")
    func fastSeek() {
        let reference = Fixtures.videoFrames("h264_aac.mp4")
        let harness = Harness()
        let (player, _) = started(harness)
        defer { player.invalidate() }
        let target = MediaTime(value: 7500, timescale: 1000)
        let keyframe = reference.last { $0.isKeyframe && $0.presentationTime <= target }!.presentationTime
        let before = harness.video.presentations.count
        player.seek(to: target, completionHandler: nil)
        harness.video.run(until: { harness.video.presentations.count > before }, maxRefreshes: 200)
        #expect(harness.video.presentations[before].presentationTime == keyframe)
        #expect(keyframe == MediaTime(value: 7, timescale: 1))
    }

    @Test("a superseded seek completes with false; the async variant reports the last one")
    func supersededSeek() async {
        let harness = Harness()
        let (player, item) = started(harness)
        defer { player.invalidate() }
        let first = Collector<Bool>()
        player.seek(to: MediaTime(value: 2, timescale: 1)) { first.append($0) }
        async let second = player.seek(to: MediaTime(value: 4, timescale: 1), toleranceBefore: .zero, toleranceAfter: .zero)
        settle { !first.values.isEmpty }
        // Drive refreshes until the second seek's frame is presented.
        let video = harness.video
        Task.detached { video.run(refreshes: 60) }
        #expect(await second == true)
        #expect(first.values == [false])
        #expect(item.currentTime() >= MediaTime(value: 4, timescale: 1))
    }

    @Test("seeking while paused shows the target frame without starting playback")
    func seekWhilePaused() {
        let harness = Harness()
        let (player, _) = started(harness)
        defer { player.invalidate() }
        player.pause()
        let before = harness.video.presentations.count
        player.seek(to: MediaTime(value: 3, timescale: 1), toleranceBefore: .zero, toleranceAfter: .zero, completionHandler: nil)
        harness.video.run(refreshes: 30)
        let shown = harness.video.presentations[before...].map(\.presentationTime)
        #expect(shown == [MediaTime(value: 3, timescale: 1)])
        #expect(player.currentTime() == MediaTime(value: 3, timescale: 1))
    }
}
