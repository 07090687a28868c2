import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Frame exactness")
struct FrameExactnessTests {
    @Test("every frame of a 250-frame clip is presented once and in order")
    func everyFrameOnce() {
        let reference = Fixtures.videoFrames("h264_aac.mp4").map(\.presentationTime)
        #expect(reference.count == 250)
        let harness = Harness()
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        item.isAudioEnabled = false
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 2_000)
        #expect(harness.shownTimes == reference)
        #expect(player.droppedFrameCount == 0)
        #expect(item.status == .readyToPlay)
        #expect(item.presentationSize == (320, 240))
        #expect(item.duration.seconds > 9.9)
    }

    @Test("with audio as master clock, frames follow the audio within one refresh")
    func audioMaster() {
        let reference = Fixtures.videoFrames("h264_aac.mp4").map(\.presentationTime)
        let harness = Harness(audio: true)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        let player = harness.player(item)
        defer { player.invalidate() }
        var offsets: [Double] = []
        let lock = Collector<PresentedFrame>()
        player.setPresentationHandler { record in
            if case .frame(let frame) = record { lock.append(frame) }
        }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 3_000)
        #expect(harness.shownTimes == reference)
        for frame in lock.values.dropFirst() {
            guard let audio = frame.audioClock else { continue }
            offsets.append((audio - frame.presentationTime).seconds)
        }
        #expect(offsets.count > 200)
        #expect(offsets.allSatisfy { abs($0) <= 0.020 })
        #expect((harness.audio?.recordedBuffers.count ?? 0) > 100)
    }
}
