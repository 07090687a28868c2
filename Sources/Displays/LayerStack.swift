import MediaAsset
public import MediaSinks
public import MediaTime
import Logging
import Synchronization
import Threading

/// The layers a display composites, changeable from any thread or task.
///
/// Changes are queued and the render thread applies them before its next frame, so callers never
/// touch GL. Adding starts the overlay's fade-in at that frame; removing starts its fade-out, after
/// which it is gone.
public final class LayerStack: Sendable {
    enum Change: Sendable {
        case add(OverlayID, OverlayLayer)
        case move(OverlayID, OverlayFrame)
        case remove(OverlayID)
        case gravity(VideoGravity)
    }

    /// A queued change, and whether it was made while the display's source was handing out a
    /// frame (then it belongs to that frame, see ``RenderLoop``).
    struct PendingChange: Sendable {
        var change: Change
        var withFrame: Bool
    }

    private struct State {
        var nextID: UInt64 = 1
        var pending: [PendingChange] = []
        var live: Set<OverlayID> = []
        var gravity: VideoGravity
        /// Set by the render thread while its source hands out the refresh's frame.
        var handingOut = false

        mutating func queue(_ change: Change) { pending.append(PendingChange(change: change, withFrame: handingOut)) }
    }

    private let state: LockedValue<State>
    private let logger: Logger

    init(gravity: VideoGravity, logger: Logger) {
        state = LockedValue(State(gravity: gravity))
        self.logger = logger
    }

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
        contentsOf path: String, frame: OverlayFrame, zIndex: Int = 0, opacity: Double = 1,
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
    public func move(_ id: OverlayID, to frame: OverlayFrame) {
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

    /// How the video fills the screen; a change shows on the next frame.
    public var gravity: VideoGravity {
        get { state.withLock { $0.gravity } }
        set {
            state.withLock { state in
                state.gravity = newValue
                state.queue(.gravity(newValue))
            }
        }
    }

    /// The render thread is about to ask its source for this refresh's content: changes from now on
    /// belong to that frame.
    func beginHandingOut() { state.withLock { $0.handingOut = true } }

    /// Takes the queued changes, once per refresh after the source handed out its content (render thread).
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
