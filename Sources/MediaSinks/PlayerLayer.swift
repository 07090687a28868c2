public import MediaTime
import Synchronization
import Threading

/// A rectangle of a display showing one player's pictures: `AVPlayerLayer` on Linux.
///
/// A display composites a tree of layers at every refresh: its own full-screen video layer (the one
/// a player made with `videoSink: display` plays into), any number of player layers added with
/// `display.layers.add(_:)`, and image and text overlays, all in one z-order. Each player layer
/// pulls its player's picture at every refresh of the display it is in and draws it into ``frame``
/// with ``videoGravity``, ``opacity`` and ``zPosition``; its player keeps its own clock, observers
/// and presentation log, paced by that display's refreshes.
///
/// ```swift
/// let main = QueuePlayer(items: programme)          // no video output yet
/// let layer = PlayerLayer(player: main, name: "main")
/// layer.frame = .relative(x: 0, y: 0, width: 0.75, height: 0.88)
/// layer.videoGravity = .resizeAspectFill
/// display.layers.add(layer)
/// main.play()
/// ```
///
/// The layer is the player's ``VideoSink``: the `Playback` module adds `init(player:name:)` and the
/// settable `player`. A player is in at most one layer at a time (giving it to another layer takes
/// it out of this one), and a layer shows at most one player. The layer does not keep its player
/// alive (keep a reference to the player; when it goes away the layer is left empty), and a layer
/// is in at most one display (adding it to another display moves it).
///
/// Every property is safe to read and change from any thread or task; changes show at the
/// display's next refresh.
public final class PlayerLayer: VideoSink, Sendable {
    /// How the display draws the layer: read by its render thread once per refresh.
    package struct Appearance: Sendable, Equatable {
        package var frame: LayerFrame = .fullScreen
        package var videoGravity: VideoGravity = .resizeAspect
        package var zPosition: Double = 0
        package var opacity: Double = 1
        package var isHidden = false
    }

    /// The display's layer tree the layer is in, and that display's refresh interval and size.
    package struct Host: Sendable {
        package var tree: ObjectIdentifier
        package var refreshInterval: MediaTime
        package var outputWidth: Int
        package var outputHeight: Int

        package init(tree: ObjectIdentifier, refreshInterval: MediaTime, outputWidth: Int, outputHeight: Int) {
            self.tree = tree
            self.refreshInterval = refreshInterval
            self.outputWidth = outputWidth
            self.outputHeight = outputHeight
        }
    }

    private struct State {
        var appearance = Appearance()
        var source: (any VideoFrameSource)?
        var failureHandler: (@Sendable (MediaError) -> Void)?
        var host: Host?
        var isReady = false
        /// The player that reports readiness (its engine), and the number of the last change it
        /// reported: an older change arriving late from another thread, or one from a player that
        /// left, is ignored.
        var reporter: ObjectIdentifier?
        var reportedVersion: UInt64?
        var videoRect: ScreenRect = .zero
        var subscribers: [Int: AsyncStream<Bool>.Continuation] = [:]
        var nextSubscriber = 0

        mutating func setReady(_ ready: Bool) {
            guard ready != isReady else { return }
            isReady = ready
            // AsyncStream's own lock is a leaf that calls nothing back: yielding here keeps the
            // changes in order for every subscriber.
            for continuation in subscribers.values { continuation.yield(ready) }
        }
    }

    /// Names the layer in the presentation log (`"layer"` of frame lines) and in logs.
    public let name: String
    private let state: LockedValue<State>
    /// Serialises changes of the layer's player (`Playback`'s `player` setter): taken before the
    /// players' own locks, so two threads handing the layer different players cannot interleave.
    private let assignment = LockedValue<Void>(())
    private static let madeCount = Atomic<Int>(0)

    /// A layer showing nothing yet, named `name` (default `layer-N`, N counting the layers made
    /// without a name, from 1).
    public init(name: String? = nil) {
        self.name = name ?? "layer-\(PlayerLayer.madeCount.add(1, ordering: .relaxed).newValue)"
        state = LockedValue(State())
    }

    deinit {
        let subscribers = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    // MARK: Appearance

    /// How the picture fills ``frame``: `.resizeAspect` (the default: fit, with bars),
    /// `.resizeAspectFill` (fill, cropped to the frame) or `.resize` (stretch).
    public var videoGravity: VideoGravity {
        get { state.withLock { $0.appearance.videoGravity } }
        set { state.withLock { $0.appearance.videoGravity = newValue } }
    }

    /// Where the layer sits on the upright screen; the whole screen by default.
    public var frame: LayerFrame {
        get { state.withLock { $0.appearance.frame } }
        set { state.withLock { $0.appearance.frame = newValue } }
    }

    /// The layer's place in the display's z-order, shared with overlays' `zIndex`: higher draws
    /// above. At equal values video layers draw below overlays, and layers in the order they
    /// were added. 0 by default; a display's own full-screen layer is at −∞ (below everything).
    public var zPosition: Double {
        get { state.withLock { $0.appearance.zPosition } }
        set { state.withLock { $0.appearance.zPosition = newValue.isNaN ? 0 : newValue } }
    }

    /// 0 (invisible) ... 1 (opaque, the default): the picture is blended over what lies below.
    public var opacity: Double {
        get { state.withLock { $0.appearance.opacity } }
        set { state.withLock { $0.appearance.opacity = newValue.isNaN ? 1 : min(max(newValue, 0), 1) } }
    }

    /// A hidden layer is not drawn. Its player plays on as if seen: the display still pulls and
    /// reports its frames presented, so its clock, observers and log go on.
    public var isHidden: Bool {
        get { state.withLock { $0.appearance.isHidden } }
        set { state.withLock { $0.appearance.isHidden = newValue } }
    }

    // MARK: What the display reports

    /// Whether the layer has shown a picture of its player's current item: true from the
    /// refresh the display presented that item's first frame in this layer, false again when the
    /// player leaves the layer or its current item changes (until the new item's first frame is
    /// presented). Reported by the player; a layer fed by anything else stays false.
    public var isReadyForDisplay: Bool { state.withLock { $0.isReady } }

    /// ``isReadyForDisplay``'s current value, then each change, in order. Each access is a new
    /// subscriber; the stream ends when the layer goes away.
    public var readyForDisplayUpdates: AsyncStream<Bool> {
        let (stream, continuation) = AsyncStream<Bool>.makeStream()
        let id = state.withLock { state in
            let id = state.nextSubscriber
            state.nextSubscriber += 1
            state.subscribers[id] = continuation
            continuation.yield(state.isReady)
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Where the picture lands on the upright screen, in pixels, after ``videoGravity``: inside
    /// ``frame`` with `.resizeAspect`, equal to it with `.resize`, larger than it (and cropped to it
    /// on screen) with `.resizeAspectFill`. ``ScreenRect/zero`` while the layer shows no picture
    /// (no frame yet, or not in a display). Updated by the display's render thread when it draws.
    public var videoRect: ScreenRect { state.withLock { $0.videoRect } }

    // MARK: VideoSink (the player's side)

    /// The refresh interval of the display the layer is in (1/60 s until it is in one).
    public var refreshInterval: MediaTime {
        state.withLock { $0.host?.refreshInterval } ?? MediaTime(value: 1, timescale: 60)
    }

    /// The size of the display the layer is in, after rotation ((0, 0) until it is in one).
    public var outputSize: (width: Int, height: Int) {
        state.withLock { state in state.host.map { ($0.outputWidth, $0.outputHeight) } ?? (0, 0) }
    }

    /// Sets (or clears) what the layer shows; the display pulls it from its next refresh on.
    /// A new source is not ready for display until it reports so, and has no failure handler
    /// until it sets one.
    public func setSource(_ source: (any VideoFrameSource)?) {
        state.withLock { state in
            if state.source !== source {
                state.reporter = nil
                state.failureHandler = nil
                state.setReady(false)
            }
            state.source = source
        }
    }

    /// Stops showing `source` (and forgets its failure handler) if it is still what the layer shows.
    public func removeSource(_ source: any VideoFrameSource) {
        state.withLock { state in
            guard state.source === source else { return }
            state.source = nil
            state.reporter = nil
            state.failureHandler = nil
            state.setReady(false)
        }
    }

    /// Told when the display this layer is in can no longer present at all. Set it after the
    /// source: a new source clears it.
    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {
        state.withLock { $0.failureHandler = handler }
    }

    /// The layer itself.
    public var videoLayer: PlayerLayer? { self }

    // MARK: Package: the display and the engine

    /// What the layer shows now.
    package var source: (any VideoFrameSource)? { state.withLock { $0.source } }

    /// What the render thread needs at a refresh: the source, and how to draw it.
    package func refreshSnapshot() -> (source: (any VideoFrameSource)?, appearance: Appearance) {
        state.withLock { ($0.source, $0.appearance) }
    }

    /// The layer joins the layer tree `host.tree` (leaving any other it was in).
    package func join(_ host: Host) { state.withLock { $0.host = host } }

    /// The layer leaves `tree`, if it is still in it.
    package func leave(tree: ObjectIdentifier) {
        state.withLock { state in
            guard state.host?.tree == tree else { return }
            state.host = nil
            state.videoRect = .zero
        }
    }

    /// Whether the layer is (still) in `tree`.
    package func isIn(tree: ObjectIdentifier) -> Bool { state.withLock { $0.host?.tree == tree } }

    /// The render thread drew the layer's picture at `rect` (``ScreenRect/zero``: none).
    package func setVideoRect(_ rect: ScreenRect) { state.withLock { $0.videoRect = rect } }

    /// `reporter` (a player's engine, which just made the layer its video output, directly or
    /// through a sink in front of it) tells the layer its readiness from now on; until the layer's
    /// source changes again.
    package func claimReadiness(by reporter: AnyObject) {
        state.withLock { state in
            state.reporter = ObjectIdentifier(reporter)
            state.reportedVersion = nil
        }
    }

    /// The player playing into the layer says whether the layer shows its current item; changes
    /// are numbered by the player, so one overtaken on its way from another thread is dropped, and
    /// so is one from a player that no longer reports to this layer.
    package func updateReadiness(_ ready: Bool, version: UInt64, from reporter: AnyObject) {
        state.withLock { state in
            guard state.reporter == ObjectIdentifier(reporter) else { return }
            if let last = state.reportedVersion, last >= version { return }
            state.reportedVersion = version
            state.setReady(ready)
        }
    }

    /// The display can no longer present: tells whoever plays into the layer.
    package func reportFailure(_ error: MediaError) {
        state.withLock { $0.failureHandler }?(error)
    }

    /// Runs `body` holding the layer's player-assignment lock (see the lock order in docs/architecture.md).
    package func withPlayerAssignment<Result>(_ body: () -> Result) -> Result {
        assignment.withLock { _ in body() }
    }
}
