#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Average (RMS) and peak power per channel over the last period, in dBFS.
///
/// The audio thread measures every period; ``publish()`` (AVAudioPlayer's `updateMeters()`)
/// copies the latest measurement to the values readers see.
struct LevelMeter: Sendable {
    /// The floor of the scale: silence.
    static let floor: Float = -160

    private var latestAverage: [Float]
    private var latestPeak: [Float]
    private(set) var averagePower: [Float]
    private(set) var peakPower: [Float]

    /// The channels measured.
    var channelCount: Int { latestAverage.count }

    init(channelCount: Int) {
        latestAverage = Array(repeating: LevelMeter.floor, count: channelCount)
        latestPeak = latestAverage
        averagePower = latestAverage
        peakPower = latestAverage
    }

    /// Measures one period of interleaved samples.
    mutating func measure(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = latestAverage.count
        guard frames > 0 else {
            silence()
            return
        }
        for channel in 0..<channels {
            var sumOfSquares: Float = 0
            var peak: Float = 0
            var index = channel
            for _ in 0..<frames {
                let sample = samples[index]
                sumOfSquares += sample * sample
                peak = max(peak, abs(sample))
                index += channels
            }
            latestAverage[channel] = LevelMeter.decibels(amplitude: (sumOfSquares / Float(frames)).squareRoot())
            latestPeak[channel] = LevelMeter.decibels(amplitude: peak)
        }
    }

    /// Records a silent period.
    mutating func silence() {
        for channel in latestAverage.indices {
            latestAverage[channel] = LevelMeter.floor
            latestPeak[channel] = LevelMeter.floor
        }
    }

    /// Makes the latest measurement visible.
    mutating func publish() {
        averagePower = latestAverage
        peakPower = latestPeak
    }

    /// `20 log10(amplitude)` clamped to −160 … 0 dBFS.
    static func decibels(amplitude: Float) -> Float {
        guard amplitude > 0 else { return floor }
        return min(0, max(floor, 20 * log10f(amplitude)))
    }
}
