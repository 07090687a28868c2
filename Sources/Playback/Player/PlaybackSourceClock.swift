public import MediaTime

/// Which clock drives a player's timeline: AVPlayer's `sourceClock` (and `masterClock`), as a
/// choice rather than a clock object. Set it with ``Player/sourceClock``.
///
/// Whatever the choice, frames are chosen at each refresh of the display and sound plays through
/// the audio output; what changes is which of them the others follow, and what is corrected when
/// they drift apart (docs/playback-engine.md, "Following a clock").
public enum PlaybackSourceClock: Sendable, Hashable {
    /// The audio output's position, once its sound is heard: video follows what is heard. Before
    /// the sound starts (a device still starting), and for items without sound, the display's
    /// refreshes pace video, and sound joins in sync when it comes. The default.
    case audioOutput
    /// The display's refreshes: the timeline advances by the time between refreshes, and sound
    /// is resampled (by at most ``ClockFollowingPolicy/maximumAdjustment``) to stay with it.
    case display
    /// The wall clock, CLOCK_REALTIME plus `offset` (a screen's configured offset, `--clock-offset`):
    /// each item's timeline is pinned to it — by ``PlayerItem/wallClockPin``, by
    /// ``Player/setRate(_:time:atHostTime:)``, or where it first showed — and playback follows it:
    /// small errors are eased out by running up to ±0.5 % faster or slower (sound resampled,
    /// video retimed), errors past ``ClockFollowingPolicy/seekThreshold`` (a clock step, a late
    /// start) are corrected by an exact seek. Screens whose clocks agree (NTP, PTP) then show the
    /// same frame at the same moment.
    case wallClock(offset: MediaTime)
}

/// Where an item's timeline sits on the wall clock: its media time ``time`` is due at the wall-clock
/// instant ``wallClockTime`` (CLOCK_REALTIME nanoseconds since the Unix epoch, as a `MediaTime`),
/// and later times at their distance from it at the player's rate.
///
/// A schedule pins each item where the programme puts it, so screens that started at different
/// moments agree on every frame. Used when the player's ``Player/sourceClock`` is
/// ``PlaybackSourceClock/wallClock(offset:)``.
public struct WallClockPin: Sendable, Hashable {
    public var time: MediaTime
    public var wallClockTime: MediaTime

    public init(time: MediaTime, wallClockTime: MediaTime) {
        self.time = time
        self.wallClockTime = wallClockTime
    }
}
