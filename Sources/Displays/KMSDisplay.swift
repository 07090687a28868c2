internal import CDRM
internal import CEGL
public import Logging
import MediaAsset
public import MediaTime
import Synchronization
public import MediaSinks
#if canImport(Glibc)
import Glibc
#endif

/// A display on a real screen: DRM/KMS modesetting, GBM scanout buffers and EGL on GBM.
///
/// Opens the configured card (or the first with a connected connector), takes DRM master, picks the
/// preferred mode (or the one asked for), and flips with atomic commits where the driver has them,
/// else with legacy `drmModeSetCrtc`/`drmModePageFlip`. It never asks for explicit fences. Exactly one
/// flip is in flight; the flip event's vblank timestamp is the presentation time the engine sees. A flip
/// that does not complete within 3 s is reported (``DisplayEvent/flipTimedOut(seconds:)``) and the
/// output is set up again. An unplugged screen is re-probed every 2 s while playback goes on, and set
/// again when it returns. ``stop()`` (which `vitrine` runs on SIGTERM/SIGINT)
/// puts back the CRTC found at start and drops master.
public final class KMSDisplay: Display {
    public let mode: DisplayMode
    public let rotation: Rotation
    public let wall: WallTile
    public let name: String
    private let loop: RenderLoop

    /// The cards tried and why each was not usable, when none was.
    public struct Options: Sendable {
        /// A card path (`/dev/dri/card1`); `nil` tries each card in turn.
        public var card: String?
        /// A connector name (`HDMI-A-1`); `nil` takes the first connected one.
        public var connector: String?
        /// A mode to set; `nil` for the connector's preferred mode.
        public var mode: DisplayMode?
        /// Whether ``mode``'s refresh rate was given (`1920x1080` matches any rate).
        public var modeRateGiven: Bool
        /// Use legacy modesetting even when the driver offers atomic (also `VITRINE_KMS_LEGACY=1`).
        public var forceLegacy: Bool

        public init(card: String? = nil, connector: String? = nil, mode: DisplayMode? = nil, modeRateGiven: Bool = true,
                    forceLegacy: Bool = false) {
            self.card = card
            self.connector = connector
            self.mode = mode
            self.modeRateGiven = modeRateGiven
            self.forceLegacy = forceLegacy
        }
    }

    /// Opens the card, takes DRM master and picks the mode, then starts the render thread, which
    /// brings up GBM and EGL in the background (``waitUntilReady()`` says how that went); with
    /// `startsRendering` false, at ``startRendering()`` instead.
    ///
    /// - Throws: ``DisplayError/noDevice(tried:)`` naming each card tried and why;
    ///   ``DisplayError/drmMasterHeld(card:)``; ``DisplayError/modeUnavailable(requested:available:)``.
    ///   `wall` is the part of a video wall's picture this screen shows (``WallTile/whole``: all of it).
    public init(options: Options = Options(), rotation: Rotation = .none, gravity: VideoGravity = .resizeAspect, wall: WallTile = .whole,
                startsRendering: Bool = true, logger: Logger = Logger(label: "vitrine.display.kms")) throws(DisplayError) {
        var options = options
        // An escape hatch for drivers whose atomic support is broken.
        if let value = getenv("VITRINE_KMS_LEGACY"), String(cString: value) == "1" { options.forceLegacy = true }
        let backend = try KMSBackend.open(options: options, logger: logger)
        self.mode = backend.mode.displayMode
        self.rotation = rotation
        self.wall = wall
        self.name = "KMS \(backend.cardPath) \(backend.output.connectorName) \(backend.mode.displayMode)" + (wall.isWhole ? "" : ", \(wall)")
        let size = rotation.swapsAxes ? (backend.mode.displayMode.height, backend.mode.displayMode.width)
            : (backend.mode.displayMode.width, backend.mode.displayMode.height)
        // Read before the render thread owns the backend.
        let modesetting = backend.usesAtomic ? "atomic" : "legacy", card = backend.cardPath, connector = backend.output.connectorName
        loop = try RenderLoop(backend: backend, refreshInterval: backend.mode.displayMode.refreshInterval, rotation: rotation,
                              outputSize: size, wall: wall,
                              gravity: gravity, pacing: .timer, clock: MonotonicClock(), logger: logger, startsRendering: startsRendering)
        logger.info("KMS display ready", metadata: [
            "card": "\(card)", "connector": "\(connector)", "mode": "\(mode)", "modesetting": "\(modesetting)",
        ])
    }

    deinit { loop.stop() }

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
}

/// The KMS display's device: DRM fd, GBM surface, EGL on GBM, modesetting and flips. Render thread only
/// (the fd is opened before the thread starts, then used only there).
final class KMSBackend: RenderBackend, @unchecked Sendable {
    static let flipTimeout: Double = 3
    static let reprobeInterval: Int64 = 2_000_000_000

    let cardPath: String
    let fd: Int32
    let output: DRMOutput
    let mode: drmModeModeInfo
    private(set) var usesAtomic: Bool
    private let logger: Logger
    private let savedCrtc: UnsafeMutablePointer<drmModeCrtc>?
    private var gbmDevice: OpaquePointer?
    private var gbmSurface: OpaquePointer?
    private var egl: EGLRenderContext?
    private var scannedOut: OpaquePointer?  // the bo on screen
    private var needsModeset = true
    private var connected = true
    private var lastProbe: Int64 = 0
    private var pendingEvents: [DisplayEvent] = []
    private var atomicProperties: (connector: [String: UInt32], crtc: [String: UInt32], plane: [String: UInt32], planeID: UInt32)?
    private var modeBlob: UInt32 = 0
    /// Flips that timed out: their events may still arrive, and must find their state alive.
    private var abandonedFlips: [FlipState] = []

    private init(cardPath: String, fd: Int32, output: DRMOutput, mode: drmModeModeInfo, forceLegacy: Bool, logger: Logger) {
        self.cardPath = cardPath
        self.fd = fd
        self.output = output
        self.mode = mode
        self.logger = logger
        savedCrtc = drmModeGetCrtc(fd, output.crtcID)
        usesAtomic = false
        if !forceLegacy, drmSetClientCap(fd, UInt64(vitrine_drm_client_cap_universal_planes()), 1) == 0,
           drmSetClientCap(fd, UInt64(vitrine_drm_client_cap_atomic()), 1) == 0,
           let plane = DRMProbe.primaryPlane(fd: fd, crtcIndex: output.crtcIndex) {
            let connector = DRMProbe.properties(fd: fd, object: output.connectorID, type: vitrine_drm_mode_object_connector())
            let crtc = DRMProbe.properties(fd: fd, object: output.crtcID, type: vitrine_drm_mode_object_crtc())
            let planeProperties = DRMProbe.properties(fd: fd, object: plane, type: vitrine_drm_mode_object_plane())
            let needed = ["FB_ID", "CRTC_ID", "SRC_X", "SRC_Y", "SRC_W", "SRC_H", "CRTC_X", "CRTC_Y", "CRTC_W", "CRTC_H"]
            if connector["CRTC_ID"] != nil, crtc["MODE_ID"] != nil, crtc["ACTIVE"] != nil,
               needed.allSatisfy({ planeProperties[$0] != nil }) {
                atomicProperties = (connector, crtc, planeProperties, plane)
                usesAtomic = true
            }
        }
    }

    /// Finds a card with a connected screen, takes master and picks the mode.
    static func open(options: KMSDisplay.Options, logger: Logger) throws(DisplayError) -> KMSBackend {
        let candidates = options.card.map { [$0] } ?? DRMProbe.cardPaths()
        guard !candidates.isEmpty else { throw .noDevice(tried: ["/dev/dri/card*: no DRM devices (is the GPU driver loaded?)"]) }
        var tried: [String] = []
        for path in candidates {
            let fd = Glibc.open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                tried.append("\(path): \(errnoText())")
                continue
            }
            guard let output = DRMProbe.findOutput(fd: fd, preferredConnector: options.connector) else {
                tried.append("\(path): no connected connector\(options.connector.map { " named \($0)" } ?? "")")
                close(fd)
                continue
            }
            if drmIsMaster(fd) == 0, drmSetMaster(fd) != 0 {
                close(fd)
                throw .drmMasterHeld(card: path)
            }
            let mode: drmModeModeInfo
            do {
                mode = try DRMProbe.chooseMode(output, requested: options.mode, rateGiven: options.modeRateGiven)
            } catch {
                drmDropMaster(fd)
                close(fd)
                throw error
            }
            return KMSBackend(cardPath: path, fd: fd, output: output, mode: mode, forceLegacy: options.forceLegacy, logger: logger)
        }
        throw .noDevice(tried: tried)
    }

    // MARK: RenderBackend

    func start() throws(DisplayError) -> RenderTarget {
        let width = UInt32(mode.hdisplay), height = UInt32(mode.vdisplay)
        guard let device = gbm_create_device(fd) else { throw .drm("gbm_create_device on \(cardPath)", errnoText()) }
        gbmDevice = device
        guard let surface = gbm_surface_create(device, width, height, vitrine_gbm_format_xrgb8888(),
                                               vitrine_gbm_bo_use_scanout() | vitrine_gbm_bo_use_rendering()) else {
            throw .drm("gbm_surface_create \(width)x\(height) XRGB8888", errnoText())
        }
        gbmSurface = surface
        let egl = try EGLRenderContext.gbm(device: device, surface: surface, format: vitrine_gbm_format_xrgb8888())
        self.egl = egl
        logger.debug("EGL on GBM", metadata: ["renderer": "\(egl.rendererName)", "gles": "\(egl.glesMajorVersion)"])
        return RenderTarget(framebufferWidth: Int(width), framebufferHeight: Int(height), glesMajorVersion: egl.glesMajorVersion,
                            rendererName: egl.rendererName)
    }

    func bindDrawTarget() { glBindFramebuffer(GLenum(GL_FRAMEBUFFER), 0) }

    var canPresent: Bool { connected }

    func present(expected: MediaTime) throws(DisplayError) -> MediaTime {
        guard let egl, let gbmSurface else { throw .notRunning }
        try egl.swapBuffers()
        guard let bo = gbm_surface_lock_front_buffer(gbmSurface) else { throw .drm("locking the front buffer", errnoText()) }
        let framebuffer: UInt32
        do { framebuffer = try framebufferID(for: bo) } catch {
            gbm_surface_release_buffer(gbmSurface, bo)
            throw error
        }
        let flip = FlipState()
        let userData = Unmanaged.passUnretained(flip).toOpaque()
        let presented: MediaTime
        if needsModeset {
            do { presented = try modeset(framebuffer: framebuffer, userData: userData, flip: flip) } catch {
                gbm_surface_release_buffer(gbmSurface, bo)
                throw error
            }
            needsModeset = false
        } else {
            let status: Int32
            if usesAtomic, let properties = atomicProperties {
                let request = drmModeAtomicAlloc()
                defer { drmModeAtomicFree(request) }
                drmModeAtomicAddProperty(request, properties.planeID, properties.plane["FB_ID"]!, UInt64(framebuffer))
                status = drmModeAtomicCommit(fd, request, vitrine_drm_mode_atomic_nonblock() | vitrine_drm_mode_page_flip_event(), userData)
            } else {
                status = drmModePageFlip(fd, output.crtcID, framebuffer, vitrine_drm_mode_page_flip_event(), userData)
            }
            guard status == 0 else {
                gbm_surface_release_buffer(gbmSurface, bo)
                needsModeset = true
                throw .drm(usesAtomic ? "atomic page flip" : "drmModePageFlip", errnoText(-status))
            }
            presented = try waitForFlip(flip, releasingOnTimeout: bo)
        }
        // The old buffer left the screen at this vblank: give it back for rendering.
        if let previous = scannedOut { gbm_surface_release_buffer(gbmSurface, previous) }
        scannedOut = bo
        return presented
    }

    /// The first picture after start, a time-out or a reconnect: sets the mode.
    private func modeset(framebuffer: UInt32, userData: UnsafeMutableRawPointer, flip: FlipState) throws(DisplayError) -> MediaTime {
        var mode = self.mode
        if usesAtomic, let properties = atomicProperties {
            if modeBlob == 0 {
                drmModeCreatePropertyBlob(fd, &mode, MemoryLayout<drmModeModeInfo>.size, &modeBlob)
            }
            let request = drmModeAtomicAlloc()
            defer { drmModeAtomicFree(request) }
            let width = UInt64(mode.hdisplay), height = UInt64(mode.vdisplay)
            drmModeAtomicAddProperty(request, output.connectorID, properties.connector["CRTC_ID"]!, UInt64(output.crtcID))
            drmModeAtomicAddProperty(request, output.crtcID, properties.crtc["MODE_ID"]!, UInt64(modeBlob))
            drmModeAtomicAddProperty(request, output.crtcID, properties.crtc["ACTIVE"]!, 1)
            let plane = properties.planeID
            let values: [(String, UInt64)] = [
                ("FB_ID", UInt64(framebuffer)), ("CRTC_ID", UInt64(output.crtcID)),
                ("SRC_X", 0), ("SRC_Y", 0), ("SRC_W", width << 16), ("SRC_H", height << 16),
                ("CRTC_X", 0), ("CRTC_Y", 0), ("CRTC_W", width), ("CRTC_H", height),
            ]
            for (name, value) in values { drmModeAtomicAddProperty(request, plane, properties.plane[name]!, value) }
            let status = drmModeAtomicCommit(fd, request, vitrine_drm_mode_atomic_allow_modeset() | vitrine_drm_mode_page_flip_event(), userData)
            if status == 0 { return try waitForFlip(flip, releasingOnTimeout: nil) }
            // (A time-out here leaves the buffer to the caller, which releases it.)
            // Some drivers advertise atomic but refuse this commit: fall back to legacy for good.
            logger.warning("atomic modeset refused; using legacy modesetting", metadata: ["reason": "\(errnoText(-status))"])
            usesAtomic = false
        }
        var connector = output.connectorID
        let status = drmModeSetCrtc(fd, output.crtcID, framebuffer, 0, 0, &connector, 1, &mode)
        guard status == 0 else { throw .drm("drmModeSetCrtc \(mode.displayMode) on \(output.connectorName)", errnoText(-status)) }
        return MonotonicClock().now()
    }

    /// Waits for the page-flip event (at most ``flipTimeout``); returns its vblank timestamp.
    private func waitForFlip(_ flip: FlipState, releasingOnTimeout bo: OpaquePointer?) throws(DisplayError) -> MediaTime {
        var context = drmEventContext()
        context.version = 2
        context.page_flip_handler = { _, _, seconds, microseconds, userData in
            guard let userData else { return }
            let flip = Unmanaged<FlipState>.fromOpaque(userData).takeUnretainedValue()
            flip.completed = true
            flip.nanoseconds = Int64(seconds) * 1_000_000_000 + Int64(microseconds) * 1000
        }
        let deadline = MonotonicClock.nanosecondsNow() + Int64(KMSBackend.flipTimeout * 1e9)
        while !flip.completed {
            let remaining = deadline - MonotonicClock.nanosecondsNow()
            if remaining <= 0 {
                pendingEvents.append(.flipTimedOut(seconds: KMSBackend.flipTimeout))
                logger.error("page flip did not complete", metadata: ["timeout_s": "\(KMSBackend.flipTimeout)", "connector": "\(output.connectorName)"])
                if let bo, let gbmSurface { gbm_surface_release_buffer(gbmSurface, bo) }
                abandonedFlips.append(flip)
                needsModeset = true
                pendingEvents.append(.reinitialised("modeset again after a flip time-out"))
                throw .drm("page flip", "no flip event within \(KMSBackend.flipTimeout) s")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(remaining / 1_000_000, 1)))
            if ready > 0 { drmHandleEvent(fd, &context) }
        }
        return .nanoseconds(flip.nanoseconds)
    }

    /// The DRM framebuffer of a GBM buffer: made the first time the buffer is scanned out, kept as
    /// the buffer's user data, and removed by GBM's destroy callback when the buffer goes (the
    /// surface is destroyed), as kmscube does — so a framebuffer lives exactly as long as its buffer.
    /// The corresponding C functions are `drmModeAddFB`, `gbm_bo_set_user_data` and `drmModeRmFB`.
    private func framebufferID(for bo: OpaquePointer) throws(DisplayError) -> UInt32 {
        if let data = gbm_bo_get_user_data(bo) { return Unmanaged<ScanoutFramebuffer>.fromOpaque(data).takeUnretainedValue().id }
        var id: UInt32 = 0
        let status = drmModeAddFB(fd, gbm_bo_get_width(bo), gbm_bo_get_height(bo), 24, 32,
                                  gbm_bo_get_stride(bo), gbm_bo_get_handle(bo).u32, &id)
        guard status == 0 else { throw .drm("drmModeAddFB", errnoText(-status)) }
        let record = Unmanaged.passRetained(ScanoutFramebuffer(fd: fd, id: id)).toOpaque()
        gbm_bo_set_user_data(bo, record) { _, data in
            guard let data else { return }
            let framebuffer = Unmanaged<ScanoutFramebuffer>.fromOpaque(data).takeRetainedValue()
            drmModeRmFB(framebuffer.fd, framebuffer.id)
        }
        return id
    }

    func readBack() -> ReadbackPixels {
        let width = Int(mode.hdisplay), height = Int(mode.vdisplay)
        let empty = ReadbackPixels(layout: .xrgbTopDown, width: width, height: height, bytes: [UInt8](repeating: 0, count: width * height * 4))
        guard let bo = scannedOut else { return empty }
        var stride: UInt32 = 0
        var mapping: UnsafeMutableRawPointer?
        guard let data = gbm_bo_map(bo, 0, 0, UInt32(width), UInt32(height), UInt32(GBM_BO_TRANSFER_READ.rawValue), &stride, &mapping) else {
            logger.error("screenshot: the scanout buffer cannot be mapped")
            return empty
        }
        defer { gbm_bo_unmap(bo, mapping) }
        // Only the rows are copied here (XRGB8888: B, G, R, X in memory); the conversion is the caller's.
        let row = width * 4
        let bytes = [UInt8](unsafeUninitializedCapacity: row * height) { buffer, count in
            for y in 0..<height {
                (buffer.baseAddress! + y * row).update(from: (data + y * Int(stride)).assumingMemoryBound(to: UInt8.self), count: row)
            }
            count = row * height
        }
        return ReadbackPixels(layout: .xrgbTopDown, width: width, height: height, bytes: bytes)
    }

    func maintain() -> [DisplayEvent] {
        var events = pendingEvents
        pendingEvents.removeAll()
        let now = MonotonicClock.nanosecondsNow()
        guard now - lastProbe >= KMSBackend.reprobeInterval else { return events }
        lastProbe = now
        let isConnected = DRMProbe.isConnected(fd: fd, connectorID: output.connectorID)
        if connected, !isConnected {
            connected = false
            logger.warning("screen unplugged; playback goes on", metadata: ["connector": "\(output.connectorName)"])
            events.append(.disconnected(connector: output.connectorName))
        } else if !connected, isConnected {
            connected = true
            needsModeset = true
            logger.info("screen back; setting the mode again", metadata: ["connector": "\(output.connectorName)"])
            events.append(.connected(connector: output.connectorName, mode: mode.displayMode))
        }
        return events
    }

    func shutdown() {
        // Put back what was on screen before us, then let go of the device.
        if let saved = savedCrtc {
            var connector = output.connectorID
            var savedMode = saved.pointee.mode
            if saved.pointee.mode_valid != 0 {
                drmModeSetCrtc(fd, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y,
                               &connector, 1, &savedMode)
            } else {
                drmModeSetCrtc(fd, saved.pointee.crtc_id, 0, 0, 0, nil, 0, nil)
            }
            drmModeFreeCrtc(saved)
        }
        if modeBlob != 0 { drmModeDestroyPropertyBlob(fd, modeBlob) }
        if let previous = scannedOut, let gbmSurface { gbm_surface_release_buffer(gbmSurface, previous) }
        scannedOut = nil
        egl?.destroy()
        egl = nil
        if let gbmSurface { gbm_surface_destroy(gbmSurface) }
        gbmSurface = nil
        if let gbmDevice { gbm_device_destroy(gbmDevice) }
        gbmDevice = nil
        drmDropMaster(fd)
        close(fd)
    }
}

/// A DRM framebuffer id and the device it belongs to: a GBM buffer's user data.
private final class ScanoutFramebuffer {
    let fd: Int32
    let id: UInt32
    init(fd: Int32, id: UInt32) {
        self.fd = fd
        self.id = id
    }
}

/// Filled in by the page-flip handler.
private final class FlipState {
    var completed = false
    var nanoseconds: Int64 = 0
}
