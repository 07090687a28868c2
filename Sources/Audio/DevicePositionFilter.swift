/// Smooths a clocked device's position readings into the clock the engine follows.
///
/// A device reports the frame being heard (frames written minus its delay) at the moment it is
/// asked, but each reading is only as fine as the device makes it: the kernel's loopback card
/// advances in timer ticks (4 ms at HZ=250), USB and HDMI cards in packets or DMA bursts, and a
/// sound server interpolates its latency a few milliseconds either way. Stamping the clock from
/// one such reading puts that reading's step error into every presentation time, a different
/// error in every process, so two screens' sound lands up to a step apart.
///
/// The device's frames advance with host time at its rate, so `heard − rate × host time` is a
/// constant plus each reading's error. The filter keeps that offset for the last ``windowLength``
/// readings and stamps the clock from their mean: periods that are not a multiple of the step
/// fall at every phase of it in turn, so the mean carries the step's average (the same for every
/// process on the same kind of device) instead of one reading's phase. A reading farther than
/// ``jumpFrames`` from the mean (an underrun, a restart, a device that only began consuming) is
/// not noise: the filter starts again from it. The audio thread owns its filter.
struct DevicePositionFilter {
    let sampleRate: Int
    /// The readings averaged: about 1.6 s of periods, at least 16 and at most 256.
    let windowLength: Int
    /// A reading this far from the mean (10 ms) restarts the filter.
    let jumpFrames: Double

    /// The host time the offsets are measured from (the first reading after a restart).
    private var baseNanos: Int64 = 0
    /// `heard − rate × (host − base)` of the last readings, oldest overwritten first.
    private var offsets: [Double] = []
    private var next = 0

    init(sampleRate: Int, periodFrames: Int) {
        self.sampleRate = sampleRate
        windowLength = min(256, max(16, sampleRate * 8 / 5 / max(1, periodFrames)))
        jumpFrames = Double(sampleRate) / 100
        offsets.reserveCapacity(windowLength)
    }

    /// The number of readings the current estimate averages.
    var count: Int { offsets.count }

    /// Forgets the readings: the next one is taken as it is.
    mutating func reset() {
        offsets.removeAll(keepingCapacity: true)
        next = 0
    }

    /// Adds a reading — `frame` heard at host time `hostNanos` — and returns the frame the
    /// readings so far say is heard at `hostNanos`, rounded to the nearest frame.
    mutating func smoothed(frame: Int64, atHostNanos hostNanos: Int64) -> Int64 {
        if offsets.isEmpty { baseNanos = hostNanos }
        var expected = Double(hostNanos - baseNanos) * Double(sampleRate) / 1e9
        var offset = Double(frame) - expected
        if !offsets.isEmpty, abs(offset - mean) > jumpFrames {
            // Not noise: start again from this reading.
            reset()
            baseNanos = hostNanos
            expected = 0
            offset = Double(frame)
        }
        if offsets.count < windowLength {
            offsets.append(offset)
        } else {
            offsets[next] = offset
            next = (next + 1) % windowLength
        }
        return Int64((mean + expected).rounded())
    }

    private var mean: Double {
        // Summed afresh each time (a few dozen additions a period): a running sum would gather
        // rounding over the hours a player runs.
        offsets.reduce(0, +) / Double(offsets.count)
    }
}
