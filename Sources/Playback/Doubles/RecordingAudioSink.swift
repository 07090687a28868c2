public import MediaAsset
public import MediaTime
import DequeModule
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An audio sink for tests: records every buffer and "plays" it in step with a ``ManualClock``.
///
/// The heard position advances with the clock while samples are queued and the sink is not
/// paused, so ``currentReading()`` behaves like a real output's, at simulated speed.
/// ``enqueue(_:)`` blocks (in real time) while more than ``capacity`` is queued.
public final class RecordingAudioSink: AudioSink, AudioSinkBufferLevel, @unchecked Sendable {
    public let format: AudioFormat
    public let clock: any HostClock
    /// How much audio may be queued before ``enqueue(_:)`` blocks.
    public let capacity: MediaTime

    struct Segment {
        var presentationTime: MediaTime
        var frames: Int
        var played: Int
    }

    struct State {
        var queue = Deque<Segment>()
        var recorded: [AudioBuffer] = []
        var paused = false
        var lastUpdate: MediaTime?
        var fraction: Int64 = 0
        var flushes = 0
        var volume: Float = 1
        var lastHeard: MediaTime?
        var failureHandler: (@Sendable (MediaError) -> Void)?
        var failed = false
    }

    private let state = Mutex(State())

    private let recording: Bool

    public convenience init(clock: any HostClock, format: AudioFormat = AudioFormat(), capacity: MediaTime = MediaTime(value: 1, timescale: 2)) {
        self.init(clock: clock, format: format, capacity: capacity, recording: true)
    }

    init(clock: any HostClock, format: AudioFormat, capacity: MediaTime, recording: Bool) {
        self.clock = clock
        self.format = format
        self.capacity = capacity
        self.recording = recording
    }

    /// Every buffer enqueued (and not flushed before it was heard), in order.
    public var recordedBuffers: [AudioBuffer] { state.withLock { $0.recorded } }
    /// How often the engine flushed.
    public var flushCount: Int { state.withLock { $0.flushes } }

    package var queuedDuration: MediaTime {
        state.withLock { state in
            advance(&state)
            let frames = state.queue.reduce(0) { $0 + $1.frames - $1.played }
            return MediaTime(value: Int64(frames), timescale: Int32(format.sampleRate))
        }
    }

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
            guard state.flushes == flushesBefore, !state.failed else { return false }
            advance(&state)
            if state.queue.isEmpty { state.lastUpdate = clock.now() }
            state.queue.append(Segment(presentationTime: buffer.presentationTime, frames: buffer.frameCount, played: 0))
            if recording { state.recorded.append(buffer) }
            return true
        }
    }

    public func currentReading() -> AudioClockReading? {
        state.withLock { state in
            guard !state.failed else { return nil }
            advance(&state)
            let now = clock.now()
            guard let first = state.queue.first else {
                return state.lastHeard.map { AudioClockReading(mediaTime: $0, hostTime: now) }
            }
            let heard = first.presentationTime + MediaTime(value: Int64(first.played), timescale: Int32(format.sampleRate))
            return AudioClockReading(mediaTime: heard, hostTime: now)
        }
    }

    public func flush() {
        state.withLock { state in
            state.queue.removeAll()
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

    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {
        state.withLock { $0.failureHandler = handler }
    }

    /// Simulates a device that is gone for good: drops what is queued, refuses every later
    /// buffer, reads no clock, and reports `error` to the failure handler (once).
    public func reportFailure(_ error: MediaError) {
        let handler = state.withLock { state -> (@Sendable (MediaError) -> Void)? in
            guard !state.failed else { return nil }
            state.failed = true
            state.queue.removeAll()
            state.lastHeard = nil
            return state.failureHandler
        }
        handler?(error)
    }

    /// Plays the samples the clock has moved past since the last update.
    private func advance(_ state: inout State) {
        let now = clock.now()
        defer { state.lastUpdate = now }
        guard let last = state.lastUpdate, !state.paused, !state.queue.isEmpty else { return }
        var frames = Int((now - last).convertScale(Int32(format.sampleRate), method: .roundTowardNegativeInfinity).value)
        while frames > 0, var first = state.queue.first {
            let take = min(frames, first.frames - first.played)
            first.played += take
            frames -= take
            if first.played >= first.frames {
                state.queue.removeFirst()
                state.lastHeard = first.presentationTime + MediaTime(value: Int64(first.frames), timescale: Int32(format.sampleRate))
            } else {
                state.queue[0] = first
            }
        }
    }
}
