import MediaSinks
import MediaTime
import Playback
import SinkDoubles
import Testing

/// `forwardPlaybackEndTime`: an item ends at its out point exactly as at the end of its media.
@Suite("Out points")
struct OutPointTests {
    static func item(_ name: String, outPoint: MediaTime? = nil, audio: Bool = false) -> PlayerItem {
        let item = PlayerItem(url: Fixtures.path(name))
        item.isAudioEnabled = audio
        if let outPoint { item.forwardPlaybackEndTime = outPoint }
        return item
    }

    /// The refreshes between the last frame of each item and the first of the next.
    static func seams(_ shown: [RecordingVideoSink.Presentation], frameCounts: [Int]) -> [UInt64] {
        var seams: [UInt64] = []
        var index = 0
        for count in frameCounts.dropLast() {
            index += count
            seams.append(shown[index].refresh - shown[index - 1].refresh)
        }
        return seams
    }

    @Test("a trimmed item's seam is as gapless as a natural one, at 25 and at 60 Hz", arguments: [Int32(25), 60])
    func trimmedSeamIsGapless(refreshRate: Int32) {
        let out = MediaTime(value: 1, timescale: 1)
        // Natural: queue1 plays to its end (50 frames). Trimmed: the same clip cut at 1 s (25 frames).
        let natural = Harness(refreshRate: refreshRate)
        let naturalPlayer = natural.queue([Self.item("queue1.mp4"), Self.item("queue2.mp4")])
        defer { naturalPlayer.invalidate() }
        naturalPlayer.play()
        natural.video.run(until: { naturalPlayer.items().isEmpty }, maxRefreshes: 2_000)

        let trimmed = Harness(refreshRate: refreshRate)
        let trimmedPlayer = trimmed.queue([Self.item("queue1.mp4", outPoint: out), Self.item("queue2.mp4")])
        defer { trimmedPlayer.invalidate() }
        trimmedPlayer.play()
        trimmed.video.run(until: { trimmedPlayer.items().isEmpty }, maxRefreshes: 2_000)

        let reference = Fixtures.videoFrames("queue1.mp4").map(\.presentationTime)
        let shown = trimmed.video.presentations
        // Every frame before the out point, none after it, then the next item from its first frame.
        #expect(Array(shown.prefix(25).map(\.presentationTime)) == Array(reference.prefix(25)))
        #expect(shown.count == 25 + 50)
        #expect(shown[25].presentationTime == .zero)
        // The last frame before the out point stays its full duration: the seam takes exactly the
        // refreshes a natural seam takes (one frame's worth: 1 at 25 Hz, 2 or 3 at 60 Hz).
        let naturalSeam = Self.seams(natural.video.presentations, frameCounts: [50, 50])
        let trimmedSeam = Self.seams(shown, frameCounts: [25, 50])
        #expect(trimmedSeam == naturalSeam)
        // The next item's first frame is shown when the out point is reached on the clock: one
        // second after the first item's first frame, within a refresh.
        let elapsed = shown[25].hostTime - shown[0].hostTime
        #expect(abs((elapsed - out).seconds) <= 1 / Double(refreshRate) + 1e-9)
    }

    @Test("the sound is cut at the out point to the sample and runs on into the next item without a flush")
    func trimmedAudioIsGapless() {
        let harness = Harness(audio: true)
        let out = MediaTime(value: 3, timescale: 2)
        let player = harness.queue([Self.item("h264_aac.mp4", outPoint: out, audio: true), Self.item("h264_aac.mp4", audio: true)])
        defer { player.invalidate() }
        let frames = Collector<PresentedFrame>()
        player.setPresentationHandler { if case .frame(let frame) = $0 { frames.append(frame) } }
        player.play()
        harness.video.run(refreshes: 5)
        let flushesAtStart = harness.audio!.flushCount
        harness.video.run(until: { player.items().isEmpty }, maxRefreshes: 3_000)
        #expect(harness.audio!.flushCount == flushesAtStart, "no flush at the trimmed seam")
        // The sink's timeline is continuous, and the first item contributed exactly 1.5 s of sound.
        let buffers = harness.audio!.recordedBuffers
        let breaks = zip(buffers, buffers.dropFirst()).filter { previous, next in
            next.presentationTime != previous.presentationTime + previous.duration
        }
        #expect(breaks.isEmpty)
        let firstItemSamples = buffers.filter { $0.presentationTime < out }.reduce(0) { $0 + $1.frameCount }
        #expect(firstItemSamples == 72_000)
        let seam = buffers.first { $0.presentationTime >= out }
        #expect(seam?.presentationTime == out, "the second item's sound starts at the out point in the sink's timeline")
        // Video: 1.5 s of the first item (37.5 frames: the frame at 1.48 s is its last), all of the second.
        let shown = frames.values
        #expect(shown.filter { $0.itemIndex == 0 }.last?.presentationTime == MediaTime(value: 37, timescale: 25))
        #expect(shown.filter { $0.itemIndex == 1 }.first?.presentationTime == .zero)
        // A/V stay together on both sides of the seam.
        let offsets = shown.compactMap { frame in frame.audioClock.map { abs(($0 - frame.presentationTime).seconds) } }
        #expect(offsets.allSatisfy { $0 <= 0.020 })
        #expect(Set(shown.filter { $0.audioClock != nil }.map(\.itemIndex)) == [0, 1])
    }

    @Test("an item copied for looping keeps its out point; reversePlaybackEndTime is kept as set")
    func propertiesTravelWithCopies() {
        let item = PlayerItem(url: Fixtures.path("queue1.mp4"))
        #expect(item.forwardPlaybackEndTime == .invalid)
        #expect(item.reversePlaybackEndTime == .invalid)
        item.forwardPlaybackEndTime = MediaTime(value: 1, timescale: 1)
        item.reversePlaybackEndTime = MediaTime(value: 1, timescale: 4)
        let copy = item.copy()
        #expect(copy.forwardPlaybackEndTime == MediaTime(value: 1, timescale: 1))
        #expect(copy.reversePlaybackEndTime == MediaTime(value: 1, timescale: 4))
    }
}
