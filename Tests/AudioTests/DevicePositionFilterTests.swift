import Testing
@testable import Audio

/// Position readings as devices give them, fed to the filter the audio thread stamps its clock with.
@Suite("Device position smoothing")
struct DevicePositionFilterTests {
    static let rate = 48_000
    static let period = 1_200

    /// The `index`th of a sequence of numbers in [0, 1) spread evenly but in no order (the golden
    /// ratio's multiples), a different one for each seed: phases and noise that are the same on
    /// every run.
    static func scattered(_ index: Int, seed: Int) -> Double {
        (Double(index + seed * 7_919) * 0.618_033_988_749_894_9).truncatingRemainder(dividingBy: 1)
    }

    /// The frame truly heard at `nanos` by a device that started at 0.
    static func truth(_ nanos: Int64) -> Double { Double(nanos) * Double(rate) / 1e9 }

    /// A player's estimate of the frame heard at the end of `periods` periods on a device whose
    /// position advances in `step`-frame ticks (the loopback card's 4 ms jiffies are 192 frames):
    /// each reading is taken a period after the last, at whatever phase of a tick the thread
    /// woke. Returns the error of the raw last reading and of the smoothed one, in milliseconds.
    static func tickErrors(step: Int64, seed: Int, periods: Int) -> (raw: Double, smoothed: Double) {
        var filter = DevicePositionFilter(sampleRate: rate, periodFrames: period)
        var errors = (raw: 0.0, smoothed: 0.0)
        for index in 1...periods {
            let wake = Int64(scattered(index, seed: seed) * 4_000_000)
            let now = 1_000_000_000 + Int64(index) * 25_000_000 + wake
            let exact = truth(now)
            let reading = Int64(exact) / step * step
            let smoothed = filter.smoothed(frame: reading, atHostNanos: now)
            errors = ((Double(reading) - exact) * 1000 / Double(rate), (Double(smoothed) - exact) * 1000 / Double(rate))
        }
        return errors
    }

    @Test("players on a device that advances in 4 ms ticks agree within half a millisecond, not a tick")
    func ticksAverageOut() {
        // One reading's error is its phase within the tick (0 to 4 ms behind); the mean of 64 is
        // the tick's mean lag (2 ms) for every player, within a fraction of a millisecond.
        let errors = (1...12).map { Self.tickErrors(step: 192, seed: $0, periods: 200) }
        let raw = errors.map(\.raw), smoothed = errors.map(\.smoothed)
        #expect(raw.max()! - raw.min()! > 2, "raw readings \(raw) ms")
        #expect(smoothed.max()! - smoothed.min()! < 0.5, "smoothed \(smoothed) ms")
        for error in smoothed { #expect(abs(error + 2.0) < 0.4, "mean lag \(error) ms, half a 4 ms tick expected") }
    }

    @Test("jittered readings are smoothed to a fraction of their jitter")
    func jitterSmoothed() {
        var filter = DevicePositionFilter(sampleRate: Self.rate, periodFrames: Self.period)
        var worst = 0.0
        for index in 1...400 {
            let now = Int64(index) * 25_000_000
            let exact = Self.truth(now)
            // ±3 ms of reading noise, as a sound server's interpolated latency gives.
            let noise = (Self.scattered(index, seed: 3) * 2 - 1) * 144
            let smoothed = filter.smoothed(frame: Int64(exact + noise), atHostNanos: now)
            if index > 100 { worst = max(worst, abs(Double(smoothed) - exact) * 1000 / Double(Self.rate)) }
        }
        #expect(worst < 0.75, "worst error \(worst) ms against ±3 ms readings")
    }

    @Test("a jump (an underrun, a device that only began consuming) is followed at once")
    func jumpRestarts() {
        var filter = DevicePositionFilter(sampleRate: Self.rate, periodFrames: Self.period)
        for index in 1...80 {
            _ = filter.smoothed(frame: Int64(index) * 1_200, atHostNanos: Int64(index) * 25_000_000)
        }
        #expect(filter.count == filter.windowLength)
        // The device lost 50 ms: the next reading is 2,400 frames behind where it was heading.
        let reading = Int64(81) * 1_200 - 2_400
        #expect(filter.smoothed(frame: reading, atHostNanos: 81 * 25_000_000) == reading)
        #expect(filter.count == 1)
        // A step smaller than the threshold (5 ms) is averaged in instead.
        let next = filter.smoothed(frame: Int64(82) * 1_200 - 2_400 + 240, atHostNanos: 82 * 25_000_000)
        #expect(next == Int64(82) * 1_200 - 2_400 + 120)
    }

    @Test("the window follows the period: about 1.6 s of readings, 16 at least, 256 at most")
    func windowLength() {
        #expect(DevicePositionFilter(sampleRate: 48_000, periodFrames: 1_200).windowLength == 64)
        #expect(DevicePositionFilter(sampleRate: 48_000, periodFrames: 48_000).windowLength == 16)
        #expect(DevicePositionFilter(sampleRate: 48_000, periodFrames: 64).windowLength == 256)
    }
}
