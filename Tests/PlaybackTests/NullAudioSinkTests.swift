import MediaSinks
import MediaTime
import Testing

/// The null sound sink that `vitrine play` and the engine tests use on a manual clock.
@Suite("Null audio sink")
struct NullAudioSinkTests {
    static let millisecond = MediaTime(value: 1, timescale: 1000)

    @Test("sound resampled to follow another clock is heard over the media time it covers, to its very end")
    func resampledBufferCoversItsMediaTime() {
        let clock = ManualClock(start: MediaTime(value: 1, timescale: 1))
        let sink = NullAudioSink(clock: clock)
        // 960 frames (20 ms at 48 kHz) that cover 20.1 ms of the item: run 0.5 % faster.
        let start = MediaTime(value: 3, timescale: 1)
        let covered = MediaTime(value: 201, timescale: 10_000)
        #expect(sink.enqueue(AudioBuffer(samples: [Float](repeating: 0, count: 960 * 2), format: AudioFormat(),
                                         presentationTime: start, duration: covered)))
        clock.advance(by: Self.millisecond * 10)
        #expect(sink.currentReading()?.mediaTime == start + covered.multiplied(byRatio: 1, over: 2))
        clock.advance(by: Self.millisecond * 10)
        // Drained: the reading holds where the buffer's media time ends, where the next would start.
        #expect(sink.currentReading()?.mediaTime == start + covered)
    }
}
