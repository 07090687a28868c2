import Dispatch
public import MediaAsset
public import MediaTime
public import MediaSinks

/// A screen Vitrine draws on: a ``VideoSink`` with layers, a screenshot and a lifecycle.
///
/// As a ``VideoSink`` the display is its own full-screen video layer (``LayerStack/rootLayer``);
/// other players show in the ``PlayerLayer``s added to ``layers``. Every method is safe from any
/// thread or task. Rendering happens on the display's own render thread, which owns the EGL
/// context (and on KMS the DRM file descriptor).
public protocol Display: VideoSink {
    /// What this display is, for logs: `headless 1920x1080@60`, `KMS /dev/dri/card0 Virtual-1 1280x800@60`.
    var name: String { get }
    /// The mode being driven (before output rotation).
    var mode: DisplayMode { get }
    /// The output rotation (portrait screens).
    var rotation: Rotation { get }
    /// The part of a video wall's picture this screen shows; ``WallTile/whole`` for a screen of its own.
    var wall: WallTile { get }
    /// The layer tree: the root video layer (and its gravity), the player layers and the overlays;
    /// changes show on the next refresh.
    var layers: LayerStack { get }
    /// Waits until the render thread has brought up the device and GL, which it does in the
    /// background after the display is made (so that the media can open meanwhile); throws why it
    /// could not (then every screenshot and refresh throws the same). Returns at once afterwards.
    /// A display made not to start rendering yet starts now.
    func waitUntilReady() throws(DisplayError)
    /// Starts the render thread of a display made with `startsRendering: false` (once; a display
    /// that started at creation does nothing). Make the display first, queue what it will show,
    /// then start it: the media's threads then exist before the renderer loads its driver (a
    /// thread created during another thread's `dlopen` waits for it).
    func startRendering() throws(DisplayError)
    /// The last presented frame exactly as presented. Blocks until the render thread has read it back.
    func screenshot() throws(DisplayError) -> Screenshot
    /// Receives display events (flip time-outs, re-initialisation, hotplug) on the render thread.
    func setEventHandler(_ handler: (@Sendable (DisplayEvent) -> Void)?)
    /// Stops rendering and releases the device (restoring the screen on KMS). Idempotent.
    func stop()
    /// How many times the render loop has gone round (a refresh presented or skipped, a job run):
    /// it grows while the render thread is alive and not stuck, whatever is on screen. A
    /// watchdog reads it.
    var heartbeat: UInt64 { get }
}

extension Display {
    public var wall: WallTile { .whole }

    public func startRendering() throws(DisplayError) {}

    /// ``waitUntilReady()`` for async code: the wait happens on a Dispatch worker, not on the
    /// caller's cooperative thread.
    public func ready() async throws(DisplayError) {
        let outcome: Result<Void, DisplayError> = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(DisplayError) in try self.waitUntilReady() })
            }
        }
        try outcome.get()
    }

    /// The canvas the layers are laid out on, in whole pixels: the upright screen
    /// (``VideoSink/outputSize``), or on a video wall the whole wall's picture in this screen's
    /// pixels, bezels included. Layer and overlay frames in pixels are pixels of this canvas.
    public var canvasSize: (width: Int, height: Int) {
        let screen = outputSize
        guard !wall.isWhole else { return screen }
        let canvas = wall.canvas(screenWidth: screen.width, screenHeight: screen.height)
        return (Int(canvas.width.rounded()), Int(canvas.height.rounded()))
    }

    /// `frame` given on this screen alone, as a frame on the canvas: for what a screen says about
    /// itself (the setup hint, an import's progress), which every screen of a wall shows whole.
    public func screenFrame(_ frame: LayerFrame) -> LayerFrame {
        guard !wall.isWhole else { return frame }
        let screen = outputSize
        let rect = frame.resolve(canvasWidth: screen.width, canvasHeight: screen.height)
        let origin = wall.origin(screenWidth: screen.width, screenHeight: screen.height)
        return .pixels(x: Int((origin.x + rect.x).rounded()), y: Int((origin.y + rect.y).rounded()),
                       width: Int(rect.width.rounded()), height: Int(rect.height.rounded()))
    }
}

/// Something that happened to a display, reported to its event handler.
public enum DisplayEvent: Sendable, Hashable {
    /// A page flip did not complete within the time-out; the display re-initialises.
    case flipTimedOut(seconds: Double)
    /// The display re-initialised its device after a failure or a reconnect.
    case reinitialised(String)
    /// The screen was unplugged: playback goes on without a picture.
    case disconnected(connector: String)
    /// The screen came back and was set to `mode`.
    case connected(connector: String, mode: DisplayMode)
}

/// A captured screen: the pixels of one presented frame and which frame it was.
public struct Screenshot: Sendable {
    /// The framebuffer as scanned out (rotated with the output rotation), top row first.
    public var image: RGBAImage
    /// The root layer's source's frame id of the picture shown, if one was presented.
    public var frameID: UInt64?
    /// When that frame was presented (host time), if anything was.
    public var presentationTime: MediaTime?

    /// The screenshot as PNG bytes.
    public func pngData() throws(DisplayError) -> [UInt8] {
        do { return try image.pngData() } catch { throw .encoding(error.description) }
    }
}

/// What one refresh did (returned by ``HeadlessDisplay/refresh()`` in manual pacing).
public enum RefreshOutcome: Sendable, Hashable {
    /// The screen was redrawn and presented; `frameID` is the source's frame when it brought new content.
    case presented(frameID: UInt64?, at: RefreshTick)
    /// Nothing changed: no draw, no flip.
    case skipped(RefreshTick)
}
