internal import CEGL
import Dispatch
import Logging
import MediaAsset
import MediaTime
import Synchronization
import Threading
import MediaSinks
#if canImport(Glibc)
import Glibc
#endif

/// The device side of a display, driven by a ``RenderLoop`` on its render thread.
protocol RenderBackend: AnyObject {
    /// Opens the device and makes a GL context current on the calling (render) thread.
    func start() throws(DisplayError) -> (framebufferWidth: Int, framebufferHeight: Int, glesMajorVersion: Int)
    /// Binds the framebuffer the compositor draws into.
    func bindDrawTarget()
    /// Makes the drawn picture visible; returns the host time it became visible (vblank on KMS).
    func present(expected: MediaTime) throws(DisplayError) -> MediaTime
    /// Copies the last presented picture off the device (the conversion happens off the render thread).
    func readBack() -> ReadbackPixels
    /// Called once per loop iteration before pacing: hotplug checks, recovery. Returns events to report.
    func maintain() -> [DisplayEvent]
    /// Whether presenting is possible now (false while a KMS screen is unplugged).
    var canPresent: Bool { get }
    /// Releases the device (restoring what was found at start on KMS).
    func shutdown()
}

/// How refreshes are paced.
public enum RefreshPacing: Sendable, Hashable {
    /// A refresh every refresh interval of the host clock (the display's real clock).
    case timer
    /// A refresh only when ``HeadlessDisplay/refresh()`` is called: tests step frame by frame.
    case manual
}

/// The render thread: runs jobs from other threads, paces refreshes, pulls from the source, composites,
/// presents and reports. Everything GL happens on this thread.
final class RenderLoop: Sendable {
    typealias Job = @Sendable (RenderLoop.Context) -> Void

    /// Render-thread-only state: the backend (the DRM fd, GBM and EGL on KMS) and the compositor (GL).
    /// Reached only through ``RenderLoop/context``, which the render thread claims as it starts, so
    /// debug builds stop any other thread that touches it.
    final class Context {
        let backend: any RenderBackend
        var compositor: Compositor?
        var sequence: UInt64 = 0
        var lastFrameID: UInt64?
        var lastPresentation: MediaTime?
        var presentedAnything = false
        /// Presents that failed in a row (a flip time-out each, or a lost context).
        var failedPresents = 0
        init(backend: any RenderBackend) { self.backend = backend }
    }

    private struct Shared {
        var jobs: [Job] = []
        /// Jobs that wait for the next refresh to be done (screenshots: the slack after a present).
        var afterRefresh: [Job] = []
        var stopping = false
        var source: (any VideoFrameSource)?
        var eventHandler: (@Sendable (DisplayEvent) -> Void)?
        var failureHandler: (@Sendable (MediaError) -> Void)?
        var thread: NamedThread?
    }

    /// Presents that may fail in a row, each followed by the backend's recovery (on KMS a flip
    /// time-out re-initialises the CRTC), before the display reports that it can no longer work.
    static let failedPresentsBeforeGivingUp = 3

    let layers: LayerStack
    let refreshInterval: MediaTime
    let rotation: Rotation
    private let shared = LockedValue(Shared())
    /// Counts the render loop's rounds (see ``Display/heartbeat``).
    private let rounds = Atomic<UInt64>(0)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let clock: any HostClock
    private let pacing: RefreshPacing
    private let logger: Logger
    private let context: ThreadBound<Context>

    /// Starts the render thread, which opens the backend; throws what opening threw.
    init(backend: any RenderBackend, refreshInterval: MediaTime, rotation: Rotation, gravity: VideoGravity,
         pacing: RefreshPacing, clock: any HostClock, logger: Logger) throws(DisplayError) {
        self.layers = LayerStack(gravity: gravity, logger: logger)
        self.refreshInterval = refreshInterval
        self.rotation = rotation
        self.clock = clock
        self.pacing = pacing
        self.logger = logger
        self.context = ThreadBound(Context(backend: backend), resource: "the display device and its GL context")
        let started = LockedValue<Result<Void, DisplayError>?>(nil)
        let ready = DispatchSemaphore(value: 0)
        do {
            let thread = try NamedThread.start(name: "vitrine-render") { [self] in
                self.context.claim()
                let result = self.setUp()
                started.withLock { $0 = result }
                ready.signal()
                if case .success = result { self.run() }
                self.finished.signal()
            }
            shared.withLock { $0.thread = thread }
        } catch {
            throw .gl("\(error)")
        }
        ready.wait()
        if case .failure(let error) = started.withLock({ $0! }) { throw error }
    }

    private func setUp() -> Result<Void, DisplayError> {
        let context = self.context.value
        do {
            let geometry = try context.backend.start()
            context.compositor = try Compositor(
                framebufferWidth: geometry.framebufferWidth, framebufferHeight: geometry.framebufferHeight,
                rotation: rotation, gravity: layers.gravity, glesMajorVersion: geometry.glesMajorVersion, logger: logger)
            return .success(())
        } catch {
            context.backend.shutdown()
            return .failure(error)
        }
    }

    // MARK: Any thread

    /// The render loop's rounds so far.
    var heartbeat: UInt64 { rounds.load(ordering: .relaxed) }

    func setSource(_ source: (any VideoFrameSource)?) { shared.withLock { $0.source = source } }

    func setEventHandler(_ handler: (@Sendable (DisplayEvent) -> Void)?) { shared.withLock { $0.eventHandler = handler } }
    func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) { shared.withLock { $0.failureHandler = handler } }

    private var onRenderThread: Bool { context.isOwnedByCurrentThread }

    /// Runs `body` on the render thread and returns its result; inline when already there.
    /// Runs `body` on the render thread and returns its result; `afterRefresh`: right after the next
    /// refresh (timer pacing), where it delays no frame.
    func perform<T: Sendable>(afterRefresh: Bool = false, _ body: @escaping @Sendable (Context) -> T) throws(DisplayError) -> T {
        if onRenderThread { return body(context.value) }
        let result = LockedValue<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let deferred = afterRefresh && pacing == .timer
        let accepted = shared.withLock { state -> Bool in
            guard !state.stopping else { return false }
            let job: Job = { context in
                let value = body(context)
                result.withLock { $0 = value }
                done.signal()
            }
            if deferred { state.afterRefresh.append(job) } else { state.jobs.append(job) }
            return true
        }
        guard accepted else { throw .notRunning }
        if !deferred { wake.signal() }
        done.wait()
        return result.withLock { $0! }
    }

    /// One refresh now (manual pacing).
    func refreshNow() throws(DisplayError) -> RefreshOutcome {
        try perform { [self] context in self.refresh(context, expected: self.clock.now()) }
    }

    func screenshot() throws(DisplayError) -> Screenshot {
        // The copy off the device right after a refresh; the conversion here, on the caller's thread.
        let captured = try perform(afterRefresh: true) { context -> (ReadbackPixels, UInt64?, MediaTime?)? in
            guard context.presentedAnything else { return nil }
            return (context.backend.readBack(), context.lastFrameID, context.lastPresentation)
        }
        guard let (pixels, frameID, presented) = captured else { throw .nothingPresented }
        return Screenshot(image: pixels.image(), frameID: frameID, presentationTime: presented)
    }

    /// Stops the thread and waits for it to release the device. Idempotent; safe from the render thread
    /// (then the device is released when the current refresh returns).
    func stop() {
        let first = shared.withLock { state -> Bool in
            defer { state.stopping = true }
            return !state.stopping
        }
        guard first else { return }
        wake.signal()
        if !onRenderThread {
            finished.wait()
            shared.withLock { $0.thread }?.join()
        }
    }

    // MARK: Render thread

    private func run() {
        let context = self.context.value
        var deadline = clock.now()
        while true {
            let (jobs, stopping) = shared.withLock { state in
                defer { state.jobs.removeAll() }
                return (state.jobs, state.stopping)
            }
            for job in jobs { job(context) }
            if stopping { break }
            rounds.add(1, ordering: .relaxed)
            for event in context.backend.maintain() { report(event) }
            switch pacing {
            case .manual:
                wake.wait()
            case .timer:
                let now = clock.now()
                if now >= deadline {
                    let outcome = refresh(context, expected: deadline)
                    runAfterRefreshJobs(context)
                    var next = deadline + refreshInterval
                    if case .presented(_, let tick) = outcome, tick.hostTime > deadline {
                        // Pace from the real presentation (vblank) so the next refresh targets the next one.
                        next = tick.hostTime + refreshInterval
                    }
                    let after = clock.now()
                    if next < after {
                        // Late: skip the refreshes that passed instead of rushing through them.
                        let missed = (after - next).nanoseconds / max(refreshInterval.nanoseconds, 1) + 1
                        next = next + .nanoseconds(missed * refreshInterval.nanoseconds)
                        context.sequence += UInt64(missed)
                    }
                    deadline = next
                } else {
                    let wait = (deadline - now).nanoseconds
                    _ = wake.wait(timeout: .now() + .nanoseconds(Int(wait)))
                }
            }
        }
        runAfterRefreshJobs(context)  // none may wait forever
        context.compositor = nil
        context.backend.shutdown()
    }

    private func runAfterRefreshJobs(_ context: Context) {
        let jobs = shared.withLock { state in
            defer { state.afterRefresh.removeAll() }
            return state.afterRefresh
        }
        for job in jobs { job(context) }
    }

    private func report(_ event: DisplayEvent) {
        let handler = shared.withLock { $0.eventHandler }
        logger.info("display event", metadata: ["event": "\(event)"])
        handler?(event)
    }

    private func refresh(_ context: Context, expected: MediaTime) -> RefreshOutcome {
        guard let compositor = context.compositor else { return .skipped(RefreshTick(sequence: context.sequence, hostTime: expected)) }
        let tick = RefreshTick(sequence: context.sequence, hostTime: expected)
        context.sequence += 1
        let source = shared.withLock { $0.source }
        layers.beginHandingOut()
        let content = source?.content(for: tick)
        // The layer changes are taken once per refresh, after the source handed out this refresh's
        // content. Those made since the last refresh start (and fade) at this refresh; those the source
        // made while handing out its frame (an overlay whose cue that frame reached, a ticker's move)
        // belong to that frame: their fades count it as their first step, so a fading-in overlay is
        // already visible with the frame that brought it.
        compositor.apply(layers.drainChanges(), at: expected, withFrameAt: expected - refreshInterval)
        if let content {
            if let frame = content.frame { compositor.setVideo(frame) }
            compositor.setSubtitle(content.subtitle)
        }
        guard content != nil || compositor.needsDrawing(at: expected), context.backend.canPresent else {
            source?.didSkipRefresh(tick)
            return .skipped(tick)
        }
        context.backend.bindDrawTarget()
        compositor.draw(at: expected)
        let presentedAt: MediaTime
        do {
            presentedAt = try context.backend.present(expected: expected)
        } catch {
            logger.error("present failed", metadata: ["reason": "\(error)"])
            for event in context.backend.maintain() { report(event) }
            context.failedPresents += 1
            if context.failedPresents >= RenderLoop.failedPresentsBeforeGivingUp {
                // Recovery did not cure it: whoever plays into this display must know (the
                // supervisor rebuilds the pipeline, then lets systemd restart the process).
                context.failedPresents = 0
                let failure = MediaError(source: "display", operation: "present", reason: .other,
                                         detail: "(\(RenderLoop.failedPresentsBeforeGivingUp) presents failed in a row: \(error))")
                shared.withLock { $0.failureHandler }?(failure)
            }
            source?.didSkipRefresh(tick)
            return .skipped(tick)
        }
        context.failedPresents = 0
        let presented = RefreshTick(sequence: tick.sequence, hostTime: presentedAt)
        context.presentedAnything = true
        context.lastPresentation = presentedAt
        if let content {
            context.lastFrameID = content.frameID
            source?.didPresent(frameID: content.frameID, at: presented)
        } else {
            source?.didSkipRefresh(tick)
        }
        return .presented(frameID: content?.frameID, at: presented)
    }
}
