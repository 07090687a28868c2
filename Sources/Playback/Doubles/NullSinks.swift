public import MediaTime
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
    private let source = Mutex<(any VideoFrameSource)?>(nil)
    private let running = Atomic<Bool>(true)
    private let thread = Mutex<NamedThread?>(nil)

    /// Starts the refresh thread.
    public init(
        refreshRate: Int32 = 60, outputSize: (width: Int, height: Int) = (1920, 1080), clock: any HostClock = MonotonicClock()
    ) throws(ThreadStartError) {
        refreshInterval = MediaTime(value: 1, timescale: refreshRate)
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

/// An audio sink with no device: consumes samples at the format's rate on the host clock and
/// reports the heard position, so the audio clock behaves like a real output's. For
/// `vitrine play` until an ALSA output is wired in.
public final class NullAudioSink: AudioSink, AudioSinkBufferLevel, @unchecked Sendable {
    private let inner: RecordingAudioSink
    private let clock: any HostClock

    public init(format: AudioFormat = AudioFormat(), clock: any HostClock = MonotonicClock()) {
        inner = RecordingAudioSink(clock: clock, format: format, capacity: MediaTime(value: 1, timescale: 5), recording: false)
        self.clock = clock
    }

    public var format: AudioFormat { inner.format }
    public func enqueue(_ buffer: AudioBuffer) -> Bool { inner.enqueue(buffer) }
    public func currentReading() -> AudioClockReading? { inner.currentReading() }
    public func flush() { inner.flush() }
    public func setPaused(_ paused: Bool) { inner.setPaused(paused) }
    public func setVolume(_ volume: Float) { inner.setVolume(volume) }
    package var queuedDuration: MediaTime { inner.queuedDuration }
}
