internal import CEGL
public import Logging
import MediaAsset
public import MediaTime
public import MediaSinks

/// A display without a screen: Mesa's EGL surfaceless platform rendering into a framebuffer object at a
/// configured mode, paced by a timer at its refresh rate (or stepped by hand in tests).
///
/// The present time of each refresh is the presentation time reported to the source, so the engine's
/// observers run on the same "what the viewer saw" rule as on KMS. ``screenshot()`` reads back the
/// framebuffer, which holds exactly the last presented frame (nothing draws between presents).
public final class HeadlessDisplay: Display {
    public let mode: DisplayMode
    public let rotation: Rotation
    public let wall: WallTile
    private let loop: RenderLoop

    /// Starts the render thread, which opens the surfaceless EGL platform in the background
    /// (``waitUntilReady()`` says how that went); with `startsRendering` false, at
    /// ``startRendering()`` instead.
    ///
    /// - Parameters:
    ///   - pacing: `.timer` for real playback; `.manual` to step with ``refresh()``.
    ///   - clock: the host clock presentation times are read from.
    ///   - maximumGLESVersion: 2 keeps the compositor on its GLES 2 paths even where GLES 3 exists.
    ///   - wall: the part of a video wall's picture this screen shows (``WallTile/whole``: all of it).
    public init(
        mode: DisplayMode = .fullHD, rotation: Rotation = .none, gravity: VideoGravity = .resizeAspect, wall: WallTile = .whole,
        pacing: RefreshPacing = .timer, clock: any HostClock = MonotonicClock(), maximumGLESVersion: Int = 3,
        startsRendering: Bool = true, logger: Logger = Logger(label: "vitrine.display.headless")
    ) throws(DisplayError) {
        self.mode = mode
        self.rotation = rotation
        self.wall = wall
        loop = try RenderLoop(
            backend: SurfacelessBackend(width: mode.width, height: mode.height, refreshInterval: mode.refreshInterval,
                                        maximumGLESVersion: maximumGLESVersion, clock: clock, logger: logger),
            refreshInterval: mode.refreshInterval, rotation: rotation,
            outputSize: rotation.swapsAxes ? (mode.height, mode.width) : (mode.width, mode.height), wall: wall, gravity: gravity,
            pacing: pacing, clock: clock, logger: logger, startsRendering: startsRendering)
        logger.debug("headless display ready", metadata: ["mode": "\(mode)", "rotation": "\(rotation.rawValue)"])
    }

    deinit { loop.stop() }

    public var name: String { "headless \(mode)" + (wall.isWhole ? "" : ", \(wall)") }
    public var refreshInterval: MediaTime { mode.refreshInterval }
    public var outputSize: (width: Int, height: Int) {
        rotation.swapsAxes ? (mode.height, mode.width) : (mode.width, mode.height)
    }
    public var layers: LayerStack { loop.layers }
    /// Sets what the display's own full-screen layer (``LayerStack/rootLayer``) shows.
    public func setSource(_ source: (any VideoFrameSource)?) { loop.layers.rootLayer.setSource(source) }
    public func removeSource(_ source: any VideoFrameSource) { loop.layers.rootLayer.removeSource(source) }
    /// The display's own full-screen layer.
    public var videoLayer: PlayerLayer? { loop.layers.rootLayer }
    public func setEventHandler(_ handler: (@Sendable (DisplayEvent) -> Void)?) { loop.setEventHandler(handler) }
    /// Told when presenting keeps failing after the display's own recovery (flip time-outs, a lost
    /// EGL context): the display can no longer work. Whoever plays into one of its other layers
    /// is told through that layer.
    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) { loop.layers.rootLayer.setFailureHandler(handler) }
    public func waitUntilReady() throws(DisplayError) { try loop.waitUntilReady() }
    public func startRendering() throws(DisplayError) { try loop.start() }
    public func screenshot() throws(DisplayError) -> Screenshot { try loop.screenshot() }
    public func stop() { loop.stop() }
    public var heartbeat: UInt64 { loop.heartbeat }

    /// Runs one refresh now and says what it did (manual pacing; with timer pacing it adds an extra refresh).
    @discardableResult
    public func refresh() throws(DisplayError) -> RefreshOutcome { try loop.refreshNow() }

    /// Whether a player shown in one of the display's layers has data on its way that the coming
    /// refresh may need (a frame being decoded). With manual pacing on a ``ManualClock``, wait while
    /// this holds before each ``refresh()``: what is shown then never depends on decode speed.
    public func isWaitingForData() -> Bool { loop.isWaitingForData() }
}

/// Surfaceless EGL + an FBO: the headless display's device.
final class SurfacelessBackend: RenderBackend {
    private let width: Int, height: Int
    private let refreshInterval: MediaTime
    private let maximumGLESVersion: Int
    private let clock: any HostClock
    private let logger: Logger
    private var egl: EGLRenderContext?
    private var framebuffer: GLFramebuffer?

    init(width: Int, height: Int, refreshInterval: MediaTime, maximumGLESVersion: Int, clock: any HostClock, logger: Logger) {
        self.width = width
        self.height = height
        self.refreshInterval = refreshInterval
        self.maximumGLESVersion = maximumGLESVersion
        self.clock = clock
        self.logger = logger
    }

    func start() throws(DisplayError) -> RenderTarget {
        let egl = try EGLRenderContext.surfaceless(maximumVersion: maximumGLESVersion)
        self.egl = egl
        framebuffer = try GLFramebuffer(width: width, height: height)
        logger.debug("surfaceless EGL", metadata: ["renderer": "\(egl.rendererName)", "gles": "\(egl.glesMajorVersion)"])
        return RenderTarget(framebufferWidth: width, framebufferHeight: height, glesMajorVersion: egl.glesMajorVersion,
                            rendererName: egl.rendererName)
    }

    func bindDrawTarget() { framebuffer?.bind() }

    func present(expected: MediaTime) throws(DisplayError) -> MediaTime {
        glFinish()
        // The timer's ticks are this display's vblanks: a picture finished within its refresh period
        // is on glass at that refresh, one finished later at the last tick before it was done. Times
        // stay on the refresh grid, as KMS's vblank timestamps do; reporting the finish time instead
        // made the loop re-phase after every refresh, stretching each period by the render time.
        let finished = clock.now()
        let interval = refreshInterval.nanoseconds
        guard interval > 0, finished > expected else { return finished }
        let periods = (finished - expected).nanoseconds / interval
        return expected + .nanoseconds(periods * interval)
    }

    func readBack() -> ReadbackPixels {
        framebuffer?.bind()
        return GLReadback.readRGBA(width: width, height: height)
    }

    func maintain() -> [DisplayEvent] { [] }
    var canPresent: Bool { true }

    func shutdown() {
        framebuffer = nil
        egl?.destroy()
        egl = nil
    }
}
