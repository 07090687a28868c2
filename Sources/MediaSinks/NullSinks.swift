public import MediaTime
import DequeModule
import Synchronization
public import Threading
#if canImport(Glibc)
import Glibc
#endif

/// A video sink with no screen: a thread paced by a host clock pulls a frame at every refresh
/// and reports it presented at the refresh time. For `vitrine play --display headless` until a
/// real display is wired in, and for benchmarks (what the engine costs, without drawing).
///
/// Given a ``ManualClock`` it runs as fast as decoding allows instead: before each refresh it
/// waits for frames on their way, then advances the clock by one refresh, so the presentation
/// log is the one a real-time run on an idle machine would write.
public final class NullVideoSink: VideoSink, Sendable {
    public let refreshInterval: MediaTime
    public let outputSize: (width: Int, height: Int)
    private let clock: any HostClock
    private let source = LockedValue<(any VideoFrameSource)?>(nil)
    private let running = Atomic<Bool>(true)
    private let thread = LockedValue<NamedThread?>(nil)

    /// Starts the refresh thread, refreshing `refreshRate` times a second.
    public convenience init(
        refreshRate: Int32 = 60, outputSize: (width: Int, height: Int) = (1920, 1080), clock: any HostClock = MonotonicClock()
    ) throws(ThreadStartError) {
        try self.init(refreshInterval: MediaTime(value: 1, timescale: refreshRate), outputSize: outputSize, clock: clock)
    }

    /// Starts the refresh thread, refreshing every `refreshInterval` (a display mode's exact
    /// interval: 1000/59940 s at 59.94 Hz).
    public init(
        refreshInterval: MediaTime, outputSize: (width: Int, height: Int) = (1920, 1080), clock: any HostClock = MonotonicClock()
    ) throws(ThreadStartError) {
        self.refreshInterval = refreshInterval
        self.outputSize = outputSize
        self.clock = clock
        let started = try NamedThread.start(name: "vitrine-nullvo") { [self] in loop() }
        thread.withLock { $0 = started }
    }

    deinit { stop() }

    public func setSource(_ source: (any VideoFrameSource)?) {
        self.source.withLock { $0 = source }
    }

    /// Stops the refresh thread and waits for it.
    public func stop() {
        running.store(false, ordering: .relaxed)
        thread.withLock { $0.take() }?.join()
        source.withLock { $0 = nil }
    }

    private func loop() {
        var sequence: UInt64 = 0
        var next = clock.now()
        let manual = clock as? ManualClock
        while running.load(ordering: .relaxed) {
            if let manual {
                if let paced = source.withLock({ $0 }) as? any PacedFrameSource {
                    var waited = 0
                    while paced.isWaitingForData() && waited < 100_000 && running.load(ordering: .relaxed) {
                        usleep(200)
                        waited += 1
                    }
                }
                manual.advance(to: next)
            } else {
                clock.sleep(until: next)
            }
            let tick = RefreshTick(sequence: sequence, hostTime: next)
            if let current = source.withLock({ $0 }) {
                if let content = current.content(for: tick) {
                    current.didPresent(frameID: content.frameID, at: tick)
                } else {
                    current.didSkipRefresh(tick)
                }
            }
            sequence += 1
            next = next + refreshInterval
            let now = clock.now()
            if manual == nil && now > next + refreshInterval * 4 {
                // Fell behind (machine busy): skip the missed refreshes rather than racing.
                next = now
            }
        }
    }
}

/// An audio sink with no device: "plays" the samples at the format's rate on a host clock and
/// reports the heard position, so the audio clock behaves like a real output's. For
/// `vitrine play --display null` (what the engine costs without devices), and the base of the
/// tests' recording sink. With a ``ManualClock`` it plays at the clock's simulated speed.
///
/// ``enqueue(_:)`` blocks (in real time) while more than ``capacity`` is queued.
public final class NullAudioSink: AudioSink, AudioSinkBufferLevel, Sendable {
    public let format: AudioFormat
    public let clock: any HostClock
    /// How much audio may be queued before ``enqueue(_:)`` blocks.
    public let capacity: MediaTime

    private struct Segment {
        var presentationTime: MediaTime
        var frames: Int
        var played: Int
        /// The media time the frames cover: their count over the rate, or more or less when the
        /// engine resampled them to run a little faster or slower (``AudioBuffer/duration``).
        var duration: MediaTime
        /// Silence inserted by ``align(mediaTime:atHostTime:)``: heard, but its media time holds
        /// at ``presentationTime`` (the sample after it).
        var isSilence = false

        /// The media time heard once `count` of the frames have been played.
        func time(after count: Int) -> MediaTime {
            if isSilence || frames == 0 { return presentationTime }
            return presentationTime + duration.multiplied(byRatio: Int32(clamping: count), over: Int32(clamping: frames))
        }
    }

    private struct State {
        var queue = Deque<Segment>()
        var paused = false
        var lastUpdate: MediaTime?
        var flushes = 0
        var volume: Float = 1
        var lastHeard: MediaTime?
        /// The "device" consumes nothing before this host time (a device that starts late).
        var consumesFrom: MediaTime?
        /// Frames dropped and silence frames inserted by alignments, in total.
        var alignedAway = 0, alignedSilence = 0
        /// An alignment still dropping what comes (more had to go than was queued).
        var alignment: (mediaTime: MediaTime, hostTime: MediaTime)?
    }

    private let state = LockedValue(State())

    /// - Parameter startDelay: how long after the first sample is queued the "device" starts to
    ///   consume (a sound server that takes seconds to start): until then nothing is heard.
    public init(format: AudioFormat = AudioFormat(), capacity: MediaTime = MediaTime(value: 1, timescale: 5),
                clock: any HostClock = MonotonicClock(), startDelay: MediaTime = .zero) {
        self.format = format
        self.capacity = capacity
        self.clock = clock
        self.startDelay = startDelay
    }

    private let startDelay: MediaTime

    /// Frames dropped (`dropped`) and silence inserted (`silence`) to align the sound, in total.
    public var alignedFrames: (dropped: Int, silence: Int) { state.withLock { ($0.alignedAway, $0.alignedSilence) } }

    public func align(mediaTime: MediaTime, atHostTime hostTime: MediaTime) -> Bool {
        state.withLock { state in
            advance(&state)
            state.alignment = (mediaTime, hostTime)
            applyAlignment(&state)
            return true
        }
    }

    /// Shifts the queue so that the sample heard now is the one the pending alignment wants: drops
    /// queued samples (what is not queued yet is dropped as it comes) or puts silence first.
    private func applyAlignment(_ state: inout State) {
        guard let (mediaTime, hostTime) = state.alignment, let first = state.queue.first else { return }
        // The sample heard now must be `mediaTime + (now - hostTime)`.
        let wanted = mediaTime + (clock.now() - hostTime)
        let heard = first.time(after: first.played)
        let shift = (wanted - heard).convertScale(Int32(format.sampleRate), method: .roundHalfAwayFromZero).value
        if shift > 0 {
            var dropping = Int(shift)
            while dropping > 0, var head = state.queue.first {
                let take = min(dropping, head.frames - head.played)
                head.played += take
                dropping -= take
                state.alignedAway += head.isSilence ? 0 : take
                if head.played >= head.frames { state.queue.removeFirst() } else { state.queue[0] = head }
            }
            if dropping == 0 { state.alignment = nil }
        } else {
            if shift < 0 {
                let silence = Int(-shift)
                state.alignedSilence += silence
                // Split the head at what was heard: silence, then the rest of it.
                var head = first
                if !head.isSilence && head.played > 0 {
                    head.duration = head.duration - (heard - head.presentationTime)
                    head.presentationTime = heard
                    head.frames -= head.played
                    head.played = 0
                    state.queue[0] = head
                }
                state.queue.prepend(Segment(presentationTime: heard, frames: silence, played: 0, duration: .zero, isSilence: true))
            }
            state.alignment = nil
        }
    }

    public var queuedDuration: MediaTime {
        state.withLock { state in
            advance(&state)
            let frames = state.queue.reduce(0) { $0 + $1.frames - $1.played }
            return MediaTime(value: Int64(frames), timescale: Int32(format.sampleRate))
        }
    }

    /// The volume last set (the samples are not scaled: nothing is heard).
    public var volume: Float { state.withLock { $0.volume } }

    public func enqueue(_ buffer: AudioBuffer) -> Bool {
        let flushesBefore = state.withLock { $0.flushes }
        let simulated = clock is ManualClock
        var waitedNanoseconds: Int64 = 0
        while true {
            let excess = queuedDuration - capacity
            if excess < .zero { break }
            if state.withLock({ $0.flushes }) != flushesBefore { return false }
            // A manual clock moves in another thread's steps: poll. A real one: sleep until room.
            let nap: Int64 = simulated ? 500_000 : min(max(excess.nanoseconds, 1_000_000), 20_000_000)
            usleep(UInt32(nap / 1000))
            waitedNanoseconds += nap
            if simulated && waitedNanoseconds > 10_000_000_000 { return false }
        }
        return state.withLock { state in
            guard state.flushes == flushesBefore else { return false }
            advance(&state)
            if state.queue.isEmpty { state.lastUpdate = clock.now() }
            if state.consumesFrom == nil { state.consumesFrom = clock.now() + startDelay }
            state.queue.append(Segment(presentationTime: buffer.presentationTime, frames: buffer.frameCount, played: 0, duration: buffer.duration))
            applyAlignment(&state)
            return true
        }
    }

    public func currentReading() -> AudioClockReading? {
        state.withLock { state in
            advance(&state)
            let now = clock.now()
            guard let first = state.queue.first else {
                return state.lastHeard.map { AudioClockReading(mediaTime: $0, hostTime: now) }
            }
            let heard = first.time(after: first.played)
            return AudioClockReading(mediaTime: heard, hostTime: now)
        }
    }

    public func flush() {
        state.withLock { state in
            state.queue.removeAll()
            state.alignment = nil
            state.flushes += 1
            state.lastUpdate = nil
            state.lastHeard = nil
        }
    }

    public func setPaused(_ paused: Bool) {
        state.withLock { state in
            advance(&state)
            state.paused = paused
            state.lastUpdate = clock.now()
        }
    }

    public func setVolume(_ volume: Float) { state.withLock { $0.volume = volume } }

    /// Plays the samples the clock has moved past since the last update.
    private func advance(_ state: inout State) {
        let now = clock.now()
        defer { state.lastUpdate = now }
        guard var last = state.lastUpdate, !state.paused, !state.queue.isEmpty else { return }
        if let start = state.consumesFrom {
            // A device that starts late: nothing is consumed before it starts.
            if now <= start { return }
            last = max(last, start)
        }
        var frames = Int((now - last).convertScale(Int32(format.sampleRate), method: .roundTowardNegativeInfinity).value)
        while frames > 0, var first = state.queue.first {
            let take = min(frames, first.frames - first.played)
            first.played += take
            frames -= take
            if first.played >= first.frames {
                state.queue.removeFirst()
                state.lastHeard = first.time(after: first.frames)
            } else {
                state.queue[0] = first
            }
        }
    }
}
