import MediaSinks
import MediaTime

/// Whether the sound is the master clock yet.
///
/// When sound starts (an item begins, after a seek or a rate change) the device may take a while
/// to consume it — a sound server starting up, a clocked device waking — and while it does not,
/// its reading stands still. Following it then would hold the picture back. So the picture runs
/// on the display clock until the device's reading moves; then the sound is shifted (samples
/// dropped, or silence inserted: ``AudioSink/align(mediaTime:atHostTime:)``) to the picture's
/// time and becomes the master clock. A device that stops consuming for longer than
/// ``stallTolerance`` hands the clock back to the display until it moves again.
///
/// A pure value, owned by the engine's state under its lock.
struct AudioJoin {
    enum Phase: Equatable {
        /// No moving reading yet since the sound (re)started: the display clock paces.
        case waiting
        /// The sink was asked to shift the sound; `attempts` so far, the last at `since`.
        case aligning(since: MediaTime, attempts: Int)
        /// The sound's reading is the master clock.
        case joined
    }

    /// What the engine does at this refresh.
    enum Decision: Equatable {
        /// The sound's reading is the clock.
        case useAudio
        /// The display clock paces; the sound is not heard in step yet.
        case useDisplay
        /// Ask the sink to shift the sound so that media time `to` is heard at this refresh;
        /// the display clock paces meanwhile.
        case align(to: MediaTime)
    }

    /// The sound is in step when its reading is within this of the picture's clock (1 ms: what
    /// alignment achieves on a real device, below a lip-sync error anyone sees or a wall's
    /// screens would hear as an echo).
    static let tolerance = MediaTime(value: 1, timescale: 1000)
    /// How long an alignment takes to show in the readings before it is checked again.
    static let settleTime = MediaTime(value: 3, timescale: 10)
    /// Alignments tried before the sound is taken as it is.
    static let maximumAttempts = 4
    /// A joined device whose reading stands still for this long hands the clock back to the display
    /// (half a second: longer than a sound server's scheduling hiccups, short enough that the
    /// picture does not visibly freeze behind a device that stopped).
    static let stallTolerance = MediaTime(value: 1, timescale: 2)

    private(set) var phase = Phase.waiting
    /// The last reading seen, to tell a device that consumes from one that does not.
    private var lastReading: AudioClockReading?
    /// When the joined device's reading last moved.
    private var lastMoved: MediaTime?

    /// The sound restarted (flushed): it must join again.
    mutating func restart() {
        phase = .waiting
        lastReading = nil
        lastMoved = nil
    }

    /// The sink cannot shift its sound: it is taken as it is.
    mutating func alignmentRefused() { phase = .joined }

    var isJoined: Bool { phase == .joined }

    /// Decides at the refresh at `host`, with the sink's `reading`, the media time it gives for
    /// this refresh (`heard`), the picture's clock at this refresh (`picture`: nil while the
    /// picture has no timeline yet, before the first frame) and the time of the first sample
    /// fed since the sound restarted (`firstSample`, in the reading's timeline).
    mutating func update(
        reading: AudioClockReading, heard: MediaTime, picture: MediaTime?, firstSample: MediaTime, at host: MediaTime
    ) -> Decision {
        // Moving at all: enough for a joined device to play on, and for sound that comes before
        // the picture has a timeline to start one (first look: already past the first sample).
        let moving = lastReading.map { reading.mediaTime > $0.mediaTime } ?? (reading.mediaTime > firstSample)
        // To join a picture's timeline, a device must be seen consuming: its reading moved, since
        // the last one, by at least half the host time between them. A reading is extrapolated
        // from the device's last report and never goes back, so a device that is only starting
        // (a sound server still filling its buffer) can show a reading ahead of what is heard that
        // then stands nearly still; joining on it put the sound one refresh (~40 ms) behind the
        // picture, to be eased out over seconds. One look, or a crawl, is not enough. (With no
        // picture timeline yet the sound starts it, and the picture follows whatever it does.)
        let consuming = lastReading.map { last in
            let elapsed = reading.hostTime - last.hostTime
            let advance = reading.mediaTime - last.mediaTime
            return elapsed > .zero && advance + advance >= elapsed
        } ?? false
        if lastReading?.mediaTime != reading.mediaTime || lastMoved == nil { lastMoved = host }
        lastReading = reading
        switch phase {
        case .joined:
            if moving { return .useAudio }
            if host - (lastMoved ?? host) > AudioJoin.stallTolerance, picture != nil {
                phase = .waiting
                return .useDisplay
            }
            return .useAudio
        case .waiting:
            guard picture == nil ? moving : consuming else { return .useDisplay }
            return check(heard: heard, picture: picture, at: host, attempts: 0)
        case .aligning(let since, let attempts):
            guard consuming, host - since >= AudioJoin.settleTime else { return .useDisplay }
            return check(heard: heard, picture: picture, at: host, attempts: attempts)
        }
    }

    private mutating func check(heard: MediaTime, picture: MediaTime?, at host: MediaTime, attempts: Int) -> Decision {
        // No picture timeline yet (sound came first): the sound starts it.
        guard let picture else {
            phase = .joined
            return .useAudio
        }
        let error = heard - picture
        if (error < .zero ? .zero - error : error) <= AudioJoin.tolerance || attempts >= AudioJoin.maximumAttempts {
            phase = .joined
            return .useAudio
        }
        phase = .aligning(since: host, attempts: attempts + 1)
        return .align(to: picture)
    }
}
