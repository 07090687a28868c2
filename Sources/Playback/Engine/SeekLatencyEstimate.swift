import MediaTime

/// How long the clock follower's seeks take, from the request to their first frame on screen.
/// A seek onto a pinned timeline aims that far ahead of where the pin is when it is asked for, so
/// that it shows its first frame on the pin instead of behind it.
///
/// Each measured seek moves the aim three quarters of the way to what it took. A seek that took
/// longer than ``unconfirmedLimit`` is believed only as far as the seek before it took as long:
/// one seek stuck on a stalled read must not make the next, fast one hold its first picture for
/// seconds. Seeks that are slow every time — a machine still busy booting, an emulated CPU — are
/// believed up to ``limit``: with the aim capped at 5 s, seeks of 8 s each landed 3 s behind the
/// pin one after another for as long as the machine stayed that slow, and the picture stayed
/// seconds behind the programme.
///
/// A pure value: the engine state owns one under its lock; tests drive it with made-up durations.
struct SeekLatencyEstimate {
    /// Where the next seek aims, ahead of the pin's position when it is asked for (at rate 1).
    private(set) var aim = SeekLatencyEstimate.initialAim
    /// What the last measured seek took (clamped).
    private var lastTook: MediaTime?

    /// The aim before any seek was measured: 0.3 s, a seek within a local file on a small machine.
    static let initialAim = MediaTime(value: 3, timescale: 10)
    /// No seek is taken to have been faster than this (50 ms: about the display's refreshes it
    /// needs to be seen).
    static let floor = MediaTime(value: 1, timescale: 20)
    /// The longest a seek is believed to take alone (5 s).
    static let unconfirmedLimit = MediaTime(value: 5, timescale: 1)
    /// The longest a seek is believed to take at all (30 s): beyond that it waited on something
    /// that a next seek will not wait on in the same way.
    static let limit = MediaTime(value: 30, timescale: 1)

    /// A seek asked for by the follower showed its first frame `took` after it was asked for.
    mutating func record(took: MediaTime) {
        let clamped = max(Self.floor, min(took, Self.limit))
        let believed = min(clamped, max(Self.unconfirmedLimit, lastTook ?? .zero))
        lastTook = clamped
        aim = MediaTime.nanoseconds((aim.nanoseconds + believed.nanoseconds * 3) / 4)
    }
}
