public import MediaSinks
public import MediaTime
import Synchronization
import Threading

/// An audio sink for tests: records every buffer and "plays" it in step with a ``ManualClock``
/// (a ``NullAudioSink`` underneath), and can simulate a device that is gone for good.
///
/// The heard position advances with the clock while samples are queued and the sink is not
/// paused, so ``currentReading()`` behaves like a real output's, at simulated speed.
/// ``enqueue(_:)`` blocks (in real time) while more than ``capacity`` is queued.
///
/// A long run (a soak of simulated hours) keeps only counts: `keepsBuffers: false` records how
/// many sample frames came, in how many buffers, not the samples themselves.
public final class RecordingAudioSink: AudioSink, AudioSinkBufferLevel, Sendable {
    private let player: NullAudioSink

    private struct State {
        var recorded: [AudioBuffer] = []
        var bufferCount = 0
        var frameCount = 0
        var flushes = 0
        var failureHandler: (@Sendable (MediaError) -> Void)?
        var failed = false
        var alignments: [(mediaTime: MediaTime, hostTime: MediaTime)] = []
    }

    private let state = LockedValue(State())
    private let keepsBuffers: Bool

    /// - Parameter startDelay: how long after its first sample the simulated device starts to
    ///   consume (a sound server that takes a second or two to start).
    /// - Parameter keepsBuffers: `false` keeps counts only (a soak of simulated hours).
    public init(clock: any HostClock, format: AudioFormat = AudioFormat(), capacity: MediaTime = MediaTime(value: 1, timescale: 2),
                startDelay: MediaTime = .zero, keepsBuffers: Bool = true) {
        player = NullAudioSink(format: format, capacity: capacity, clock: clock, startDelay: startDelay)
        self.keepsBuffers = keepsBuffers
    }

    /// Frames dropped and silence inserted to align the sound with the picture, in total.
    public var alignedFrames: (dropped: Int, silence: Int) { player.alignedFrames }

    /// The alignments the engine asked for, in order.
    public var alignments: [(mediaTime: MediaTime, hostTime: MediaTime)] { state.withLock { $0.alignments } }

    public func align(mediaTime: MediaTime, atHostTime hostTime: MediaTime) -> Bool {
        state.withLock { $0.alignments.append((mediaTime, hostTime)) }
        return player.align(mediaTime: mediaTime, atHostTime: hostTime)
    }

    public var format: AudioFormat { player.format }
    public var clock: any HostClock { player.clock }
    /// How much audio may be queued before ``enqueue(_:)`` blocks.
    public var capacity: MediaTime { player.capacity }
    /// Every buffer enqueued, in order (none when the sink keeps only counts).
    public var recordedBuffers: [AudioBuffer] { state.withLock { $0.recorded } }
    /// How many buffers were enqueued.
    public var enqueuedBufferCount: Int { state.withLock { $0.bufferCount } }
    /// How much audio was enqueued: sample frames over the sink's rate.
    public var enqueuedDuration: MediaTime {
        MediaTime(value: Int64(state.withLock { $0.frameCount }), timescale: Int32(player.format.sampleRate))
    }
    /// How often the engine flushed.
    public var flushCount: Int { state.withLock { $0.flushes } }
    /// The volume the engine set last.
    public var volume: Float { player.volume }
    public var queuedDuration: MediaTime { player.queuedDuration }

    public func enqueue(_ buffer: AudioBuffer) -> Bool {
        guard !state.withLock({ $0.failed }), player.enqueue(buffer) else { return false }
        return state.withLock { state in
            guard !state.failed else { return false }
            if keepsBuffers { state.recorded.append(buffer) }
            state.bufferCount += 1
            state.frameCount += buffer.frameCount
            return true
        }
    }

    public func currentReading() -> AudioClockReading? {
        state.withLock { $0.failed } ? nil : player.currentReading()
    }

    public func flush() {
        state.withLock { $0.flushes += 1 }
        player.flush()
    }

    public func setPaused(_ paused: Bool) { player.setPaused(paused) }

    public func setVolume(_ volume: Float) { player.setVolume(volume) }

    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {
        state.withLock { $0.failureHandler = handler }
    }

    /// Simulates a device that is gone for good: drops what is queued, refuses every later
    /// buffer, reads no clock, and reports `error` to the failure handler (once).
    public func reportFailure(_ error: MediaError) {
        let handler = state.withLock { state -> (@Sendable (MediaError) -> Void)? in
            guard !state.failed else { return nil }
            state.failed = true
            return state.failureHandler
        }
        player.flush()
        handler?(error)
    }
}
