public import MediaSinks
public import MediaTime
import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// A video sink for tests: each simulated refresh pulls from the source, "presents" at once and
/// advances a ``ManualClock`` by one refresh interval, recording what was shown.
///
/// Refreshes run only when ``run(refreshes:)`` or ``run(until:maxRefreshes:)`` is called, so a
/// test runs faster than real time. Before each refresh the sink waits (in real time) while the
/// engine reports data on its way, so decode speed never changes what is presented.
/// Drive it from one thread at a time.
public final class RecordingVideoSink: VideoSink, @unchecked Sendable {
    /// One presented frame.
    public struct Presentation: Sendable, Hashable {
        /// The refresh counter.
        public var refresh: UInt64
        /// The refresh's host time.
        public var hostTime: MediaTime
        /// The frame's presentation time in its item.
        public var presentationTime: MediaTime
        public var width: Int
        public var height: Int
    }

    public let refreshInterval: MediaTime
    public let outputSize: (width: Int, height: Int)
    public let clock: ManualClock
    private let source = LockedValue<(any VideoFrameSource)?>(nil)
    private let records = LockedValue<[Presentation]>([])
    private let lastFrame = LockedValue<VideoFrame?>(nil)
    private let subtitleLog = LockedValue<[SubtitleChange]>([])

    /// The subtitle on screen changed at a refresh (text, or `nil` when it went away).
    public struct SubtitleChange: Sendable, Hashable {
        public var refresh: UInt64
        public var hostTime: MediaTime
        /// The text shown, `"<bitmap>"` for a bitmap subtitle, nil for none.
        public var text: String?
    }

    /// Every change of the subtitle shown.
    public var subtitleChanges: [SubtitleChange] { subtitleLog.withLock { $0 } }
    private var sequence: UInt64 = 0
    private let unansweredWaits = LockedValue(0)

    /// Refreshes that ran after waiting the bound (10 s) for data the engine said was on its way:
    /// the engine waited for something that never came. Zero in a healthy run.
    public var pacingTimeouts: Int { unansweredWaits.withLock { $0 } }

    public init(clock: ManualClock, refreshInterval: MediaTime = MediaTime(value: 1, timescale: 60), outputSize: (width: Int, height: Int) = (1920, 1080)) {
        self.clock = clock
        self.refreshInterval = refreshInterval
        self.outputSize = outputSize
    }

    public func setSource(_ source: (any VideoFrameSource)?) {
        self.source.withLock { $0 = source }
    }

    private let failure = LockedValue<(handler: (@Sendable (MediaError) -> Void)?, failed: Bool)>((nil, false))

    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {
        failure.withLock { $0.handler = handler }
    }

    /// Simulates a display that died for good: reports `error` to the failure handler (once)
    /// and stops pulling from the source; later refreshes only advance the clock.
    public func reportFailure(_ error: MediaError) {
        let handler = failure.withLock { state -> (@Sendable (MediaError) -> Void)? in
            guard !state.failed else { return nil }
            state.failed = true
            return state.handler
        }
        handler?(error)
    }

    /// Everything presented so far.
    public var presentations: [Presentation] { records.withLock { $0 } }
    /// The frame on screen now.
    public var currentFrame: VideoFrame? { lastFrame.withLock { $0 } }
    /// Refreshes run so far.
    public var refreshCount: UInt64 { sequence }

    /// Runs `refreshes` refreshes.
    public func run(refreshes: Int) {
        for _ in 0..<refreshes { step() }
    }

    /// Runs refreshes until `condition` holds (checked after each) or `maxRefreshes` ran.
    /// Returns whether the condition was met.
    @discardableResult
    public func run(until condition: () -> Bool, maxRefreshes: Int = 100_000) -> Bool {
        for _ in 0..<maxRefreshes {
            step()
            if condition() { return true }
        }
        return false
    }

    /// One refresh: wait for data on its way, pull, present, advance the clock.
    public func step() {
        let current = failure.withLock { $0.failed } ? nil : source.withLock { $0 }
        if let paced = current as? any PacedFrameSource {
            // Real-time wait for the decoder; bounded so a bug cannot hang a test.
            var waited = 0
            while paced.isWaitingForData() && waited < 20_000 {
                usleep(500)
                waited += 1
            }
            if waited == 20_000 { unansweredWaits.withLock { $0 += 1 } }
        }
        let tick = RefreshTick(sequence: sequence, hostTime: clock.now())
        if let current {
            if let content = current.content(for: tick) {
                if let frame = content.frame {
                    lastFrame.withLock { $0 = frame }
                    records.withLock {
                        $0.append(Presentation(
                            refresh: tick.sequence, hostTime: tick.hostTime, presentationTime: frame.presentationTime,
                            width: frame.width, height: frame.height))
                    }
                }
                var text: String?
                switch content.subtitle {
                case .text(let value): text = value
                case .bitmap: text = "<bitmap>"
                case nil: text = nil
                }
                subtitleLog.withLock { log in
                    if (log.last?.text) != text { log.append(SubtitleChange(refresh: tick.sequence, hostTime: tick.hostTime, text: text)) }
                }
                current.didPresent(frameID: content.frameID, at: tick)
            } else {
                current.didSkipRefresh(tick)
            }
        }
        sequence += 1
        clock.advance(by: refreshInterval)
    }
}
