public import MediaTime

/// One refresh of a display: when it is expected on glass and its sequence number.
public struct RefreshTick: Sendable, Hashable {
    /// Counts refreshes since the display started.
    public var sequence: UInt64
    /// Host time (``MonotonicClock`` timeline) at which this refresh is expected to
    /// become visible; after presentation, the time it did (the vblank timestamp on KMS).
    public var hostTime: MediaTime

    public init(sequence: UInt64, hostTime: MediaTime) {
        self.sequence = sequence
        self.hostTime = hostTime
    }
}

/// A subtitle to draw above the video: text, or a bitmap already in RGBA.
public enum SubtitleContent: Sendable {
    case text(String)
    case bitmap(VideoFrame, x: Int, y: Int, referenceWidth: Int, referenceHeight: Int)
}

/// What the engine wants on screen at one refresh.
public struct VideoSinkContent: Sendable {
    /// Identifies what is shown, so a sink can report back which frame reached the viewer.
    public var frameID: UInt64
    /// The picture; `nil` keeps the previous one (never black by accident).
    public var frame: VideoFrame?
    /// The subtitle, if any is active.
    public var subtitle: SubtitleContent?

    public init(frameID: UInt64, frame: VideoFrame?, subtitle: SubtitleContent? = nil) {
        self.frameID = frameID
        self.frame = frame
        self.subtitle = subtitle
    }
}

/// The engine side of a video sink: asked what to show, told what was shown.
///
/// The sink's render thread calls ``content(for:)`` once per refresh, before drawing,
/// then ``didPresent(frameID:at:)`` when that content became visible (page-flip event on
/// KMS, the present on headless). Observers fire from the second call: on what the
/// viewer saw, not on what was decoded.
public protocol VideoFrameSource: AnyObject, Sendable {
    /// The content for the refresh expected at `tick`, or `nil` when nothing changed
    /// (the sink then neither redraws nor flips).
    func content(for tick: RefreshTick) -> VideoSinkContent?
    /// The content with `frameID` is on screen since `tick.hostTime`.
    func didPresent(frameID: UInt64, at tick: RefreshTick)
    /// A refresh passed with no new content (the clock still advances for the engine).
    func didSkipRefresh(_ tick: RefreshTick)
}

/// Where decoded video goes: a display (KMS, headless) or a test's recording sink.
///
/// The sink owns its refresh clock and pulls from its source at every refresh.
public protocol VideoSink: AnyObject, Sendable {
    /// Time between refreshes (1/60 s at 60 Hz).
    var refreshInterval: MediaTime { get }
    /// The output size in pixels after rotation.
    var outputSize: (width: Int, height: Int) { get }
    /// Sets (or clears) the source pulled at each refresh. Takes effect on the next refresh.
    func setSource(_ source: (any VideoFrameSource)?)
    /// Sets (or clears) what the sink calls, at most once, when it can no longer present at all
    /// (the display went away for good, its context was lost and cannot be recreated): the
    /// player then fails (``Player/Status/failed``). Not for a late or skipped refresh.
    ///
    /// Optional: the default implementation ignores the handler (a sink that cannot fail).
    func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?)
    /// Stops pulling from `source` if it is still the source: a player leaving the sink never takes
    /// away the source another player set since (a ``PlayerLayer`` handed from one player to the next).
    ///
    /// Optional: the default implementation clears the source, whichever it is (a sink one player owns).
    func removeSource(_ source: any VideoFrameSource)
    /// The display layer this sink shows its pictures in, when it is one: a ``PlayerLayer``, or a
    /// display's own full-screen layer. The player playing into it reports
    /// ``PlayerLayer/isReadyForDisplay`` to it and names it in the presentation log.
    ///
    /// Optional: the default is `nil` (a sink that is no display layer: the null sink, a test's recorder).
    var videoLayer: PlayerLayer? { get }
}

extension VideoSink {
    /// Ignores the handler: this sink never reports a fatal failure.
    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {}

    /// Clears the source, whichever it is.
    public func removeSource(_ source: any VideoFrameSource) { setSource(nil) }

    /// No display layer.
    public var videoLayer: PlayerLayer? { nil }
}

/// A frame source that can say whether pulling now would find data missing that is on its way
/// (decoding still catching up). Sinks driven by a ``ManualClock`` wait on it so tests run
/// faster than real time yet never see an artificial stall.
public protocol PacedFrameSource: AnyObject, Sendable {
    func isWaitingForData() -> Bool
}
