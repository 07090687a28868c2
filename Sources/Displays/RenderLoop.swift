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
    func start() throws(DisplayError) -> RenderTarget
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

/// What a backend's start brought up: the framebuffer the compositor draws into and the GL behind it.
struct RenderTarget {
    var framebufferWidth: Int, framebufferHeight: Int
    var glesMajorVersion: Int
    /// `GL_RENDERER`, as ``EGLRenderContext/rendererName`` reads it.
    var rendererName: String
}

/// How refreshes are paced.
public enum RefreshPacing: Sendable, Hashable {
    /// A refresh every refresh interval of the host clock (the display's real clock).
    case timer
    /// A refresh only when ``HeadlessDisplay/refresh()`` is called: tests step frame by frame.
    case manual
}

/// The render thread: runs jobs from other threads, paces refreshes, pulls from the sources of its video
/// layers, composites, presents and reports. Everything GL happens on this thread.
final class RenderLoop: Sendable {
    /// Work for the render thread; given `nil` when the thread will never run it (the renderer
    /// could not start), so whoever waits for it is released.
    typealias Job = @Sendable (RenderLoop.Context?) -> Void

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
        /// `nil` while the render thread brings up the device and GL; then how that went.
        var startup: Result<Void, DisplayError>?
        var eventHandler: (@Sendable (DisplayEvent) -> Void)?
        /// Whether ``RenderLoop/start()`` has begun the render thread (it may not have been asked yet).
        var startRequested = false
        var thread: NamedThread?
    }

    /// Presents that may fail in a row, each followed by the backend's recovery (on KMS a flip
    /// time-out re-initialises the CRTC), before the display reports that it can no longer work.
    static let failedPresentsBeforeGivingUp = 3

    let layers: LayerStack
    let refreshInterval: MediaTime
    let rotation: Rotation
    /// This screen's tile of a video wall (the compositor lays the layers out on the whole).
    let wall: WallTile
    private let shared = LockedValue(Shared())
    /// Counts the render loop's rounds (see ``Display/heartbeat``).
    private let rounds = Atomic<UInt64>(0)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Signalled once the renderer's start is known (and passed on by every waiter).
    private let started = DispatchSemaphore(value: 0)
    private let clock: any HostClock
    private let pacing: RefreshPacing
    private let logger: Logger
    private let context: ThreadBound<Context>

    /// Makes the loop and, with `startsRendering`, starts its render thread, which then opens the
    /// backend and builds the compositor while the caller goes on (opening the media meanwhile: on
    /// a CPU renderer the start costs ~100 ms). Without it the thread starts at ``start()``, or at
    /// the first ``waitUntilReady()`` or job. ``waitUntilReady()`` says how the start went; jobs and
    /// refreshes wait for it. `outputSize` is the upright screen's size (after rotation), told to
    /// the player layers that join.
    init(backend: any RenderBackend, refreshInterval: MediaTime, rotation: Rotation, outputSize: (width: Int, height: Int),
         wall: WallTile = .whole, gravity: VideoGravity, pacing: RefreshPacing, clock: any HostClock, logger: Logger,
         startsRendering: Bool = true) throws(DisplayError) {
        self.layers = LayerStack(gravity: gravity, logger: logger) { tree in
            PlayerLayer.Host(tree: tree, refreshInterval: refreshInterval, outputWidth: outputSize.width, outputHeight: outputSize.height)
        }
        self.refreshInterval = refreshInterval
        self.rotation = rotation
        self.wall = wall
        self.clock = clock
        self.pacing = pacing
        self.logger = logger
        self.context = ThreadBound(Context(backend: backend), resource: "the display device and its GL context")
        if startsRendering { try start() }
    }

    /// Starts the render thread (once; later calls, and calls after ``stop()``, do nothing).
    func start() throws(DisplayError) {
        let first = shared.withLock { state -> Bool in
            guard !state.startRequested, !state.stopping else { return false }
            state.startRequested = true
            return true
        }
        guard first else { return }
        do {
            let thread = try NamedThread.start(name: "vitrine-render") { [self] in
                self.context.claim()
                let begun = MonotonicClock.nanosecondsNow()
                let result = self.setUp()
                if case .success = result {
                    self.logger.debug("display renderer ready", metadata: [
                        "took_ms": "\((MonotonicClock.nanosecondsNow() - begun) / 1_000_000)"])
                }
                let abandoned = self.shared.withLock { state -> [Job] in
                    state.startup = result
                    guard case .failure = result else { return [] }
                    defer {
                        state.jobs.removeAll()
                        state.afterRefresh.removeAll()
                    }
                    return state.jobs + state.afterRefresh
                }
                self.started.signal()
                if case .failure(let error) = result {
                    self.logger.error("the display could not start", metadata: ["reason": "\(error)"])
                    for job in abandoned { job(nil) }
                } else {
                    self.run()
                }
                self.finished.signal()
            }
            shared.withLock { $0.thread = thread }
        } catch {
            let failure = DisplayError.gl("\(error)")
            shared.withLock { $0.startup = .failure(failure) }
            started.signal()
            throw failure
        }
    }

    /// Waits until the render thread has opened the device and built the compositor (starting
    /// it if nothing has); throws why it could not. Returns at once once that is known.
    func waitUntilReady() throws(DisplayError) {
        try start()
        guard shared.withLock({ $0.startRequested }) else { throw .notRunning }  // stopped before it started
        if shared.withLock({ $0.startup }) == nil {
            started.wait()
            started.signal()
        }
        if case .failure(let error) = shared.withLock({ $0.startup! }) { throw error }
    }

    private func setUp() -> Result<Void, DisplayError> {
        let context = self.context.value
        do {
            let geometry = try context.backend.start()
            context.compositor = try Compositor(
                framebufferWidth: geometry.framebufferWidth, framebufferHeight: geometry.framebufferHeight,
                rotation: rotation, wall: wall, glesMajorVersion: geometry.glesMajorVersion,
                rendererName: geometry.rendererName, logger: logger)
            return .success(())
        } catch {
            context.backend.shutdown()
            return .failure(error)
        }
    }

    // MARK: Any thread

    /// The render loop's rounds so far.
    var heartbeat: UInt64 { rounds.load(ordering: .relaxed) }

    func setEventHandler(_ handler: (@Sendable (DisplayEvent) -> Void)?) { shared.withLock { $0.eventHandler = handler } }

    /// Whether a source of a video layer says that data it will need is on its way (manual pacing
    /// waits for it, so decode speed never changes what is shown).
    func isWaitingForData() -> Bool {
        layers.videoLayersForRefresh().contains { ($0.source as? any PacedFrameSource)?.isWaitingForData() == true }
    }

    private var onRenderThread: Bool { context.isOwnedByCurrentThread }

    /// Runs `body` on the render thread and returns its result; `afterRefresh`: right after the next
    /// refresh (timer pacing), where it delays no frame.
    func perform<T: Sendable>(afterRefresh: Bool = false, _ body: @escaping @Sendable (Context) -> T) throws(DisplayError) -> T {
        if onRenderThread { return body(context.value) }
        try start()
        let result = LockedValue<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        let deferred = afterRefresh && pacing == .timer
        let accepted = shared.withLock { state -> Bool in
            guard !state.stopping else { return false }
            if case .failure = state.startup { return false }
            let job: Job = { context in
                if let context { result.withLock { $0 = body(context) } }
                done.signal()
            }
            if deferred { state.afterRefresh.append(job) } else { state.jobs.append(job) }
            return true
        }
        guard accepted else { throw refusal() }
        if !deferred { wake.signal() }
        done.wait()
        guard let value = result.withLock({ $0.take() }) else { throw refusal() }
        return value
    }

    /// Why a job was not run: the renderer's failed start, else the loop has stopped.
    private func refusal() -> DisplayError {
        if case .failure(let error) = shared.withLock({ $0.startup }) { return error }
        return .notRunning
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
        let (first, running) = shared.withLock { state -> (Bool, Bool) in
            defer { state.stopping = true }
            return (!state.stopping, state.startRequested)
        }
        guard first, running else { return }
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

    /// What one video layer's source handed out at a refresh.
    private struct Pull {
        var layer: PlayerLayer
        var source: (any VideoFrameSource)?
        var content: VideoSinkContent?
    }

    private func refresh(_ context: Context, expected: MediaTime) -> RefreshOutcome {
        guard let compositor = context.compositor else { return .skipped(RefreshTick(sequence: context.sequence, hostTime: expected)) }
        let tick = RefreshTick(sequence: context.sequence, hostTime: expected)
        context.sequence += 1
        let videoLayers = layers.videoLayersForRefresh()
        layers.beginHandingOut()
        // Every layer's source is asked at the same tick: each player keeps its own clock, all of
        // them paced by this display's refreshes.
        let pulls = videoLayers.map { layer in
            let source = layer.source
            return Pull(layer: layer, source: source, content: source?.content(for: tick))
        }
        // The layer changes are taken once per refresh, after the sources handed out this refresh's
        // content. Those made since the last refresh start (and fade) at this refresh; those a source
        // made while handing out its frame (an overlay whose cue that frame reached, a ticker's move)
        // belong to that frame: their fades count it as their first step, so a fading-in overlay is
        // already visible with the frame that brought it. The video layers' appearance is read now
        // too, so a gravity set while handing out a frame applies to that frame.
        compositor.apply(layers.drainChanges(), at: expected, withFrameAt: expected - refreshInterval)
        compositor.syncVideoLayers(videoLayers.map { ($0, $0.refreshSnapshot().appearance) })
        for pull in pulls {
            guard let content = pull.content else { continue }
            if let frame = content.frame { compositor.setVideo(frame, in: pull.layer) }
            compositor.setSubtitle(content.subtitle, in: pull.layer)
        }
        compositor.reportVideoRects()
        let hasContent = pulls.contains { $0.content != nil }
        guard hasContent || compositor.needsDrawing(at: expected), context.backend.canPresent else {
            for pull in pulls { pull.source?.didSkipRefresh(tick) }
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
                for layer in videoLayers { layer.reportFailure(failure) }
            }
            for pull in pulls { pull.source?.didSkipRefresh(tick) }
            return .skipped(tick)
        }
        context.failedPresents = 0
        let presented = RefreshTick(sequence: tick.sequence, hostTime: presentedAt)
        context.presentedAnything = true
        context.lastPresentation = presentedAt
        // The root layer's frame is the display's frame (screenshots, ``RefreshOutcome``): known
        // before the sources hear of the present, so a screenshot taken there names it.
        let rootContent = pulls.first?.content
        if let rootContent { context.lastFrameID = rootContent.frameID }
        for pull in pulls {
            if let content = pull.content {
                pull.source?.didPresent(frameID: content.frameID, at: presented)
            } else {
                pull.source?.didSkipRefresh(tick)
            }
        }
        return .presented(frameID: rootContent?.frameID, at: presented)
    }
}
