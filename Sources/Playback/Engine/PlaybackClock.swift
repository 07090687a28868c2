import MediaTime

/// The engine's clock for the current item: the media time shown at a host time.
///
/// Running (rate above 0), media time advances from a point `(host, media)` at ``rate``; stopped,
/// ended, or before its first reading it holds at ``heldTime``. At each refresh the master clock
/// (the audio output's position, or the display's refreshes from an ``anchor``) gives a reading;
/// between refreshes ``time(at:ended:)`` extrapolates from the last one. This is the one place the
/// clock formula is written.
struct PlaybackClock {
    /// 0 (stopped) up to 4.
    private(set) var rate: Double = 0
    /// How much faster (positive) or slower the clock runs than ``rate`` says, while a reference
    /// clock is being followed without sound to resample (``ClockFollower``): at most ±0.005.
    private(set) var trim: Double = 0
    /// Where media time holds while the clock does not run, and where it starts again.
    private(set) var heldTime: MediaTime = .zero
    /// The display clock's anchor: media time `media` was due at host time `host`.
    private(set) var anchor: (host: MediaTime, media: MediaTime)?
    /// The master clock's last reading at a refresh.
    private var lastReading: (host: MediaTime, media: MediaTime)?

    /// Media time `elapsed` after `media` at `rate`.
    static func advance(_ media: MediaTime, by elapsed: MediaTime, rate: Double) -> MediaTime {
        media + (rate == 1 ? elapsed : elapsed.multiplied(by: rate))
    }

    private func extrapolate(_ point: (host: MediaTime, media: MediaTime), to host: MediaTime) -> MediaTime {
        let elapsed = max(.zero, host - point.host)
        let time = Self.advance(point.media, by: elapsed, rate: rate)
        guard trim != 0 else { return time }
        // The trim in nanoseconds: `elapsed` may be in a coarse timescale (1/60 s) that would round
        // a 0.5 % change away, and the untrimmed part stays exact.
        return time + .nanoseconds(Int64((Double(elapsed.nanoseconds) * rate * trim).rounded()))
    }

    /// Forgets the trim of a clock that just jumped (nothing anchored to keep continuous).
    mutating func clearTrim() { trim = 0 }

    /// Starts the timeline at `media`, due at host time `host` (later: it holds there until then).
    mutating func start(at host: MediaTime, media: MediaTime) {
        anchor = (host, media)
        lastReading = (host, media)
        heldTime = media
    }

    /// Runs the clock `trim` faster (or slower) from `host` on, without a jump at `host`.
    mutating func setTrim(_ trim: Double, at host: MediaTime) {
        guard trim != self.trim else { return }
        if let anchor { self.anchor = (host, extrapolate(anchor, to: host)) }
        if let lastReading { self.lastReading = (host, extrapolate(lastReading, to: host)) }
        self.trim = trim
    }

    /// The media time at `host`: extrapolated from the last reading while running, else held.
    func time(at host: MediaTime, ended: Bool) -> MediaTime {
        guard rate > 0, !ended, let lastReading else { return heldTime }
        return extrapolate(lastReading, to: host)
    }

    /// The media time the display clock has reached at `host`, once it is anchored.
    func displayTime(at host: MediaTime) -> MediaTime? { anchor.map { extrapolate($0, to: host) } }

    /// Changes the rate at `host`; the time there is where the new rate starts. Returns that time.
    @discardableResult
    mutating func setRate(_ newRate: Double, at host: MediaTime, ended: Bool) -> MediaTime {
        let time = time(at: host, ended: ended)
        heldTime = time
        anchor = nil
        rate = newRate
        return time
    }

    /// Stops at `time` (the end of an item with the `pause` action).
    mutating func stop(at time: MediaTime) {
        heldTime = time
        rate = 0
    }

    /// Holds at `time` until the next reading re-anchors the clock (out of frames, the end).
    mutating func hold(at time: MediaTime) {
        heldTime = time
        anchor = nil
    }

    /// Jumps to `time` (a seek, a new item): nothing anchored, nothing read since.
    mutating func jump(to time: MediaTime) {
        heldTime = time
        anchor = nil
        lastReading = nil
    }

    /// The display clock starts over at `media`, due at `host` (a first frame is shown).
    mutating func anchor(host: MediaTime, media: MediaTime) { anchor = (host, media) }

    /// Reads the master clock at the refresh due at `host`: the audio clock when it runs, else the
    /// display clock (anchored at `start()` on first use). Stopped, the held time.
    mutating func read(atRefresh host: MediaTime, audioClock: MediaTime?, start: () -> MediaTime) -> MediaTime {
        guard rate > 0 else { return heldTime }
        let time: MediaTime
        if let audioClock {
            time = audioClock
            anchor = (host, audioClock)
        } else {
            let from = anchor ?? (host, start())
            anchor = from
            time = extrapolate(from, to: host)
        }
        lastReading = (host, time)
        heldTime = time
        return time
    }
}

/// Where the current item's timeline is pinned: its media time ``time`` is due at a host time
/// (``Player/setRate(_:time:atHostTime:)``, the display's pin) or at a wall-clock time (a
/// ``WallClockPin``). Later media times are due at their distance from it, at the rate.
enum ClockPin: Equatable {
    case host(time: MediaTime, host: MediaTime)
    case wall(time: MediaTime, wall: MediaTime)

    var time: MediaTime {
        switch self {
        case .host(let time, _), .wall(let time, _): time
        }
    }

    /// How far past the pin's instant `host` is (`wall`: the wall-clock time of `host`; nil when
    /// the pin is on the wall clock and there is none).
    private func elapsed(atHost host: MediaTime, wall: MediaTime?) -> MediaTime? {
        switch self {
        case .host(_, let pinned): host - pinned
        case .wall(_, let pinned): wall.map { $0 - pinned }
        }
    }

    /// The media time due at `host` at `rate`, on the straight line through the pin (before the
    /// pin's instant too): what a follower compares the playback clock with.
    func reference(atHost host: MediaTime, wall: MediaTime?, rate: Double) -> MediaTime? {
        elapsed(atHost: host, wall: wall).map { PlaybackClock.advance(time, by: $0, rate: rate) }
    }

    /// The host time of the pin's instant, seen from `host` (whose wall-clock time is `wall`):
    /// where the display clock is anchored when the timeline starts on the pin.
    func hostTime(seenFrom host: MediaTime, wall: MediaTime?) -> MediaTime? {
        elapsed(atHost: host, wall: wall).map { host - $0 }
    }

    /// The pin of a timeline that goes on from this one: media time `next` is due where this
    /// timeline's `end` was due (the next item of a queue, at a gapless seam).
    func continued(at end: MediaTime, with next: MediaTime, rate: Double) -> ClockPin {
        let span = end - time
        let elapsed = rate == 1 || rate == 0 ? span : MediaTime.nanoseconds(Int64((Double(span.nanoseconds) / rate).rounded()))
        switch self {
        case .host(_, let host): return .host(time: next, host: host + elapsed)
        case .wall(_, let wall): return .wall(time: next, wall: wall + elapsed)
        }
    }

    /// The same timeline seen from `host` (wall-clock time `wall`): re-pinned where it stands then,
    /// so a rate change from `rate` starts there.
    func rebased(atHost host: MediaTime, wall: MediaTime?, rate: Double) -> ClockPin {
        guard let now = reference(atHost: host, wall: wall, rate: rate) else { return self }
        switch self {
        case .host: return .host(time: now, host: host)
        case .wall: return wall.map { .wall(time: now, wall: $0) } ?? self
        }
    }
}
