import MediaAsset
public import MediaSinks
public import MediaTime
import Logging
import Synchronization
import Threading

/// A display's layer tree, changeable from any thread or task: its own full-screen video layer
/// (``rootLayer``), the ``PlayerLayer``s added to it, and the image and text overlays, all
/// composited at every refresh in one z-order.
///
/// Changes are queued (overlays) or read from the layers (player layers' appearance) by the render
/// thread before its next frame, so callers never touch GL. Adding an overlay starts its fade-in at
/// that frame; removing one starts its fade-out, after which it is gone. See docs/layers.md.
public final class LayerStack: Sendable {
    enum Change: Sendable {
        case add(OverlayID, OverlayLayer)
        case move(OverlayID, LayerFrame)
        case remove(OverlayID)
    }

    /// A queued change, and whether it was made while the display's sources were handing out their
    /// frames (then it belongs to those frames, see ``RenderLoop``).
    struct PendingChange: Sendable {
        var change: Change
        var withFrame: Bool
    }

    private struct State {
        var nextID: UInt64 = 1
        var pending: [PendingChange] = []
        var live: Set<OverlayID> = []
        /// The player layers added, in the order they were added (the root layer is not among them).
        var playerLayers: [PlayerLayer] = []
        /// Set by the render thread while its sources hand out the refresh's frames.
        var handingOut = false

        mutating func queue(_ change: Change) { pending.append(PendingChange(change: change, withFrame: handingOut)) }
    }

    /// The display's own full-screen video layer, named `screen`: what the display shows as a
    /// ``VideoSink`` (`Player(videoSink: display)` plays into it). It sits at z-position −∞,
    /// below every other layer and overlay, unless its ``PlayerLayer/zPosition`` is changed.
    public let rootLayer: PlayerLayer
    private let state: LockedValue<State>
    private let logger: Logger
    private let host: @Sendable (ObjectIdentifier) -> PlayerLayer.Host

    /// `host` describes the display to the layers that join it.
    init(gravity: VideoGravity, logger: Logger, host: @escaping @Sendable (ObjectIdentifier) -> PlayerLayer.Host) {
        state = LockedValue(State())
        self.logger = logger
        self.host = host
        rootLayer = PlayerLayer(name: LayerStack.rootLayerName)
        rootLayer.videoGravity = gravity
        rootLayer.zPosition = -.infinity
        rootLayer.join(host(ObjectIdentifier(self)))
    }

    /// The root layer's name in the presentation log.
    public static let rootLayerName = "screen"

    // MARK: Player layers

    /// Adds a player layer above the others (at equal ``PlayerLayer/zPosition``); the display pulls
    /// its player from the next refresh on. A layer already in another display leaves that one.
    /// Adding a layer twice, or the root layer, changes nothing.
    public func add(_ layer: PlayerLayer) {
        guard layer !== rootLayer else { return }
        let tree = ObjectIdentifier(self)
        layer.join(host(tree))
        state.withLock { state in
            if !state.playerLayers.contains(where: { $0 === layer }) { state.playerLayers.append(layer) }
        }
    }

    /// Takes a player layer out: it is no longer drawn nor pulled (its player then presents
    /// nothing, and its clock waits, until the layer is in a display again). Unknown layers are ignored.
    public func remove(_ layer: PlayerLayer) {
        let removed = state.withLock { state -> Bool in
            guard let index = state.playerLayers.firstIndex(where: { $0 === layer }) else { return false }
            state.playerLayers.remove(at: index)
            return true
        }
        if removed { layer.leave(tree: ObjectIdentifier(self)) }
    }

    /// The player layers added and not removed (or moved to another display), in the order they
    /// were added; the root layer is not among them.
    public var playerLayers: [PlayerLayer] {
        let tree = ObjectIdentifier(self)
        return state.withLock { $0.playerLayers }.filter { $0.isIn(tree: tree) }
    }

    /// The video layers a refresh pulls and draws: the root layer first, then the added ones in
    /// order. Layers that moved to another display are dropped here (render thread).
    func videoLayersForRefresh() -> [PlayerLayer] {
        let tree = ObjectIdentifier(self)
        let layers = state.withLock { $0.playerLayers }
        let kept = layers.filter { $0.isIn(tree: tree) }
        if kept.count != layers.count {
            state.withLock { state in state.playerLayers.removeAll { !$0.isIn(tree: tree) } }
        }
        return [rootLayer] + kept
    }

    // MARK: Overlays

    /// Adds an overlay; it appears (fading in) on the next frame.
    @discardableResult
    public func add(_ overlay: OverlayLayer) -> OverlayID {
        state.withLock { state in
            let id = OverlayID(rawValue: state.nextID)
            state.nextID += 1
            state.queue(.add(id, overlay))
            state.live.insert(id)
            return id
        }
    }

    /// Adds an image overlay decoded from a PNG or JPEG file.
    ///
    /// A missing or corrupt file is logged as an error naming the file and FFmpeg's reason, and the
    /// overlay is skipped (`nil`): the video goes on without it.
    @discardableResult
    public func addImage(
        contentsOf path: String, frame: LayerFrame, zIndex: Int = 0, opacity: Double = 1,
        fadeIn: MediaTime = .zero, fadeOut: MediaTime = .zero
    ) -> OverlayID? {
        let image: RGBAImage
        do {
            image = try RGBAImage(contentsOf: path)
        } catch {
            logger.error("overlay image skipped", metadata: ["file": "\(path)", "reason": "\(error)"])
            return nil
        }
        return add(OverlayLayer(.image(image), frame: frame, zIndex: zIndex, opacity: opacity, fadeIn: fadeIn, fadeOut: fadeOut))
    }

    /// Moves an overlay to `frame` on the next frame, keeping its pixels (no re-rasterising, no new
    /// texture) and its fades: a scrolling text moves this way at every refresh. The overlay keeps
    /// its size; only the frame's position is used. Unknown ids are ignored.
    public func move(_ id: OverlayID, to frame: LayerFrame) {
        state.withLock { state in
            guard state.live.contains(id) else { return }
            state.queue(.move(id, frame))
        }
    }

    /// Removes an overlay: it fades out over its `fadeOut` and is then gone. Unknown ids are ignored.
    public func remove(_ id: OverlayID) {
        state.withLock { state in
            guard state.live.remove(id) != nil else { return }
            state.queue(.remove(id))
        }
    }

    /// Removes every overlay (each fades out).
    public func removeAll() {
        state.withLock { state in
            for id in state.live.sorted() { state.queue(.remove(id)) }
            state.live.removeAll()
        }
    }

    /// The overlays added and not yet removed.
    public var overlayIDs: [OverlayID] { state.withLock { $0.live.sorted() } }

    /// How the video fills the screen: the root layer's ``PlayerLayer/videoGravity``; a change
    /// shows on the next frame.
    public var gravity: VideoGravity {
        get { rootLayer.videoGravity }
        set { rootLayer.videoGravity = newValue }
    }

    /// The render thread is about to ask its sources for this refresh's content: changes from now on
    /// belong to their frames.
    func beginHandingOut() { state.withLock { $0.handingOut = true } }

    /// Takes the queued changes, once per refresh after the sources handed out their content (render thread).
    func drainChanges() -> [PendingChange] {
        state.withLock { state in
            defer {
                state.pending.removeAll()
                state.handingOut = false
            }
            return state.pending
        }
    }
}
