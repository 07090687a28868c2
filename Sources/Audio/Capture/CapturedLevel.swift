public import MediaTime

/// How loud the captured sound was over a span of host time: the mean square of every sample of
/// every channel captured in it. ``AudioLevelMonitor/takeLevel()`` hands these out; the ambient
/// volume averages them with a long time constant.
public struct CapturedLevel: Sendable, Hashable {
    /// The host time (`MonotonicClock`) the first frame was captured at.
    public var start: MediaTime
    /// The host time just after the last frame.
    public var end: MediaTime
    /// The mean of the squared samples (full scale is 1).
    public var meanSquare: Double
    public var frameCount: Int

    public init(start: MediaTime, end: MediaTime, meanSquare: Double, frameCount: Int) {
        self.start = start
        self.end = end
        self.meanSquare = meanSquare
        self.frameCount = frameCount
    }

    /// The RMS level in dBFS (−160 … 0), as ``AudioRecorder/averagePower(forChannel:)`` measures a period.
    public var averagePower: Float { LevelMeter.decibels(amplitude: Float(meanSquare.squareRoot())) }
}

/// Sums squared samples between two takes (the capture thread adds each block, a reader takes the sum).
struct LevelAccumulator: Sendable, Hashable {
    private var sumOfSquares: Double = 0
    private var samples = 0
    private var frames = 0
    private var startNanos: Int64?
    private var endNanos: Int64 = 0

    /// Adds a block of interleaved float samples whose first frame was captured at `startNanos`.
    mutating func add(_ block: UnsafeBufferPointer<Float>, frames count: Int, startNanos: Int64, endNanos: Int64) {
        var sum: Float = 0
        for sample in block { sum += sample * sample }
        sumOfSquares += Double(sum)
        samples += block.count
        frames += count
        if startNanos < self.startNanos ?? .max { self.startNanos = startNanos }
        self.endNanos = max(self.endNanos, endNanos)
    }

    /// What was added since the last take, or `nil` when nothing was; starts again from nothing.
    mutating func take() -> CapturedLevel? {
        guard let startNanos, samples > 0 else { return nil }
        let level = CapturedLevel(start: .nanoseconds(startNanos), end: .nanoseconds(endNanos),
                                  meanSquare: sumOfSquares / Double(samples), frameCount: frames)
        self = LevelAccumulator()
        return level
    }
}
