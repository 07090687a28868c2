import MediaTime

/// Watches how far the decoded picture is behind a pinned timeline, and says when seeking onto
/// the pin is quicker than decoding the way there.
///
/// The follower keeps the playback *clock* on its pin; the pictures come from the decoder. When
/// a seek landed well short of the pin (its latency guessed low: a first start on a slow or
/// emulated machine, where it took seconds) or the decoder fell behind, the clock is on time and
/// the frames are not: every refresh shows the newest decoded frame, late, and the picture runs
/// behind the programme — and behind its own sound — until the decoder has made up the distance
/// at the speed it beats real time by. That may take half a minute, or never come. Seeking onto
/// the pin costs one seek's latency with the last picture held instead.
///
/// So, once the picture is more than ``lagThreshold`` behind, the watch measures for
/// ``observation`` how fast the lag shrinks, and answers `true` (seek) when at that pace it would
/// last longer than twice a seek does (at least ``minimumRecovery``), or is not shrinking at all.
/// A decoder that catches up quickly — a short lag after a seek on a capable machine, a hiccup —
/// is left to catch up, frames dropped on the way as before.
///
/// A pure value: the engine owns one under its lock, tests drive it with made-up lags.
struct DecodeLagWatch {
    /// How far behind the pin the newest decoded frame may end before the watch starts measuring:
    /// the follower's seek threshold (100 ms).
    var lagThreshold = MediaTime(value: 1, timescale: 10)
    /// How long the lag is measured before it is judged (1 s: decoders work in bursts of frames).
    var observation = MediaTime(value: 1, timescale: 1)
    /// The shortest catch-up by decoding that is worth a seek instead, whatever a seek takes.
    var minimumRecovery = MediaTime(value: 1, timescale: 1)

    /// Where the measurement started: the host time and the lag then.
    private(set) var start: (host: MediaTime, lag: MediaTime)?

    /// Forgets the measurement: a new timeline (a seek, another item) starts.
    mutating func reset() { start = nil }

    /// Takes the lag measured at host time `host` (the pin's time now minus the end of the newest
    /// decoded frame; positive: the picture is behind) and what a seek takes to show its first
    /// frame. Returns whether to seek onto the pin now.
    mutating func shouldSeek(lag: MediaTime, at host: MediaTime, seekLatency: MediaTime) -> Bool {
        guard lag > lagThreshold else {
            start = nil
            return false
        }
        guard let start else {
            self.start = (host, lag)
            return false
        }
        let elapsed = host - start.host
        guard elapsed >= observation else { return false }
        // Seconds of lag made up per second of playback (negative: the lag grows).
        let pace = (start.lag - lag).seconds / elapsed.seconds
        let worthIt = max(seekLatency.seconds * 2, minimumRecovery.seconds)
        if pace <= 0 || lag.seconds / pace > worthIt {
            self.start = nil
            return true
        }
        // Catching up fast enough: judge the next stretch afresh.
        self.start = (host, lag)
        return false
    }
}
