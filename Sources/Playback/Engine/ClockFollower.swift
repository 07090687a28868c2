public import MediaTime

/// How a player follows its reference clock (``PlaybackSourceClock/wallClock(offset:)``, or the
/// display for sound with ``PlaybackSourceClock/display``): the thresholds of docs/playback-engine.md.
public struct ClockFollowingPolicy: Sendable, Hashable {
    /// An error larger than this (either way), seen on three refreshes in a row, is corrected at
    /// once by an exact seek: a clock step, a screen that started late, a stall. 100 ms: the
    /// largest lip-sync-sized error still worth easing out rather than jumping (at the fastest
    /// allowed adjustment it takes 20 s), and well above what timer jitter and audio clock
    /// readings (a few ms) make it look like.
    public var seekThreshold: MediaTime
    /// The largest fraction by which playback runs faster or slower to ease an error out:
    /// 0.005 (±0.5 %, 5 ms a second). Sound is resampled by that much (about 8.6 cents of pitch,
    /// below what listeners notice on speech and music); video is retimed, a frame now and then
    /// shown a refresh earlier or later.
    public var maximumAdjustment: Double
    /// How fast an error under the seek threshold is eased out: the adjustment is the error
    /// divided by this (2 s), capped at ``maximumAdjustment``; an error halves in ~1.4 s once it
    /// is small, and 80 ms takes ~18 s at the cap.
    public var timeConstant: MediaTime
    /// Errors are averaged over about this long (0.5 s) before they steer: audio clock readings
    /// move in device periods, and one reading must not move the rate.
    public var smoothing: MediaTime
    /// An error (averaged) within this (0.25 ms: above the readings' jitter, far below what eye
    /// or ear can tell) gets no push of its own; it only teaches the follower the clocks' steady
    /// drift (see ``driftLearningTime``), so a screen in step plays at a steady rate instead of
    /// being nudged at every refresh.
    public var tolerance: MediaTime
    /// How slowly the steady drift between the followed clock and the playback clock is learned
    /// (20 s): sound devices' crystals are off by tens of ppm (a PulseAudio null sink here runs
    /// ~80 ppm fast), and a follower that only pushed against errors would keep the error at the
    /// tolerance. The learned rate is kept across items and seeks: it belongs to the devices.
    public var driftLearningTime: MediaTime

    public init(seekThreshold: MediaTime = MediaTime(value: 100, timescale: 1000), maximumAdjustment: Double = 0.005,
                timeConstant: MediaTime = MediaTime(value: 2, timescale: 1), smoothing: MediaTime = MediaTime(value: 1, timescale: 2),
                tolerance: MediaTime = MediaTime(value: 1, timescale: 4000), driftLearningTime: MediaTime = MediaTime(value: 20, timescale: 1)) {
        self.seekThreshold = seekThreshold
        self.maximumAdjustment = maximumAdjustment
        self.timeConstant = timeConstant
        self.smoothing = smoothing
        self.tolerance = tolerance
        self.driftLearningTime = driftLearningTime
    }
}

/// Keeps a player's timeline on a reference clock: at every refresh it is told the error (the
/// playback clock minus the reference, in seconds) and answers what to do — nothing, run a little
/// faster or slower (an adjustment, applied by resampling sound or retiming video), or seek.
///
/// A pure value: the engine owns one under its lock, tests drive it with made-up errors.
struct ClockFollower {
    /// What to do after a measurement.
    enum Decision: Equatable {
        case none
        /// Run at `1 + adjustment` times the rate; `log`: a change worth a `sync-adjust` line.
        case adjust(Double, log: Bool)
        /// The error is past the threshold: seek to the reference.
        case seek
    }

    var policy = ClockFollowingPolicy()
    /// The adjustment in effect (0 when on time).
    private(set) var adjustment: Double = 0
    /// The smoothed error, in seconds.
    private(set) var smoothedError: Double?
    private var lastMeasurement: MediaTime?
    private var overThreshold = 0
    private var logged: (host: MediaTime, adjustment: Double)?
    /// The steady rate correction learned so far (the devices' drift), a fraction.
    private(set) var drift: Double = 0

    /// Adjustments are changed in steps of 10 ppm, so a steady error does not retune the
    /// resampler at every refresh.
    static let step = 0.000_01
    /// Refreshes in a row past the threshold before a seek: one late refresh or one odd reading
    /// is not a reason to jump.
    static let refreshesBeforeSeek = 3

    /// Starts afresh (a new timeline: a seek, an item that started away from the last one).
    /// The adjustment in effect is kept: the clock it corrects runs on.
    mutating func restart() {
        smoothedError = nil
        lastMeasurement = nil
        overThreshold = 0
    }

    /// The playback clock starts over at 1:1 (a new item's sound, a jumped clock): the adjustment
    /// in effect is 0 again; the learned drift is kept, and applied at the next measurement.
    mutating func reset() {
        restart()
        adjustment = 0
    }

    /// Forgets everything, the learned drift too (another clock is followed).
    mutating func forget() {
        reset()
        drift = 0
        logged = nil
    }

    /// Takes the error measured at host time `host` (seconds; positive: playback is ahead).
    mutating func measure(error: Double, at host: MediaTime) -> Decision {
        if abs(error) > policy.seekThreshold.seconds {
            overThreshold += 1
            guard overThreshold >= ClockFollower.refreshesBeforeSeek else { return .none }
            restart()
            return .seek
        }
        overThreshold = 0
        let elapsed = lastMeasurement.map { max(0, min((host - $0).seconds, 1)) } ?? 0
        lastMeasurement = host
        let smoothed: Double
        if let previous = smoothedError {
            let weight = min(1, elapsed / max(policy.smoothing.seconds, 1e-3))
            smoothed = previous + (error - previous) * weight
        } else {
            smoothed = error
        }
        smoothedError = smoothed
        // A proportional push against errors past the tolerance, on top of the learned drift.
        let limit = policy.maximumAdjustment
        let timeConstant = max(policy.timeConstant.seconds, 1e-3)
        let push = abs(smoothed) > policy.tolerance.seconds ? -smoothed / timeConstant : 0
        // The drift learns slowly, and only from errors near the target (within four tolerances):
        // a transient — a step, a device's latency settling after it starts — is the push's to
        // correct, and learning from it would wind up and overshoot once it is gone.
        let learning = -smoothed / timeConstant * elapsed / max(policy.driftLearningTime.seconds, 1e-3)
        let saturated = abs(push + drift) >= limit && (push + drift) * learning > 0
        if !saturated, abs(smoothed) <= 4 * policy.tolerance.seconds { drift = max(-limit, min(limit, drift + learning)) }
        let raw = max(-limit, min(limit, push + drift))
        // Whole steps, divided (not multiplied) so that 500 steps is exactly the literal 0.005.
        let wanted = (raw / ClockFollower.step).rounded() / (1 / ClockFollower.step).rounded()
        guard wanted != adjustment else { return .none }
        adjustment = wanted
        return .adjust(wanted, log: shouldLog(wanted, at: host))
    }

    /// A `sync-adjust` line when a correction starts or ends, reaches or leaves the largest
    /// adjustment, and otherwise at most once a second while the adjustment moves by 100 ppm or
    /// more: the log tells the story without a line per refresh.
    private mutating func shouldLog(_ adjustment: Double, at host: MediaTime) -> Bool {
        let log: Bool
        if let last = logged {
            let startsOrEnds = (last.adjustment == 0) != (adjustment == 0)
            let limit = policy.maximumAdjustment
            let reachesOrLeavesLimit = (abs(last.adjustment) >= limit) != (abs(adjustment) >= limit)
            let moved = abs(adjustment - last.adjustment) >= 0.000_1 && (host - last.host).seconds >= 1
            log = startsOrEnds || reachesOrLeavesLimit || moved
        } else {
            log = adjustment != 0
        }
        if log { logged = (host, adjustment) }
        return log
    }
}
