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
        Self.advance(point.media, by: max(.zero, host - point.host), rate: rate)
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
