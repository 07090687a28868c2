import MediaAsset
public import Dispatch
public import MediaTime
public import MediaSinks

/// Plays items to a video sink and an audio sink: the engine's `AVPlayer`.
///
/// Every method is safe from any thread or task. Time observers fire on *presented* time (when
/// the display reports a frame visible), never on decode time.
///
/// ## Video output
/// A player shows its pictures in one video sink at a time: a ``PlayerLayer`` of a display
/// (`PlayerLayer(player:)`, `layer.player = player`: several players on one screen), a display's
/// own full-screen layer (`Player(videoSink: display)`), or a test's recording sink. The sink can
/// be given after the player is made and changed while it plays. A player without a video sink
/// presents nothing and its video does not advance (nothing pulls its frames).
///
/// ## Rates
/// Video plays at any rate from 0 (paused) up to 4; 0.5–2.0 is supported and tested. Audio is
/// played only at rate 1: at any other rate it is muted (not time-stretched) and the display
/// clock paces video; back at 1 the audio resumes in sync.
// Unchecked only because the class is not final (QueuePlayer extends it): its one stored property
// is the engine, which is Sendable and does all the locking.
public class Player: @unchecked Sendable {
    /// Whether the player can play at all.
    public enum Status: String, Sendable, Hashable {
        case unknown, readyToPlay, failed
    }

    let core: PlayerCore

    /// A player presenting to `videoSink` and playing sound to `audioSink` (either may be nil:
    /// a ``PlayerLayer`` can be given the player later), reading time from `clock` (a
    /// ``ManualClock`` in tests).
    public init(
        item: PlayerItem? = nil, videoSink: (any VideoSink)? = nil, audioSink: (any AudioSink)? = nil,
        clock: any HostClock = MonotonicClock()
    ) {
        core = PlayerCore(videoSink: videoSink, audioSink: audioSink, clock: clock)
        core.actionAtItemEnd = .pause
        core.owner = self
        core.start()
        if let item { core.replaceItems(with: [item]) }
    }

    /// A player of the media at `url` (a path or a URL FFmpeg opens), without outputs: show it in a
    /// ``PlayerLayer``. As `AVPlayer(url:)`; it has no sound (give an audio sink with
    /// ``init(item:videoSink:audioSink:clock:)``).
    public convenience init(url: String) {
        self.init(item: PlayerItem(url: url))
    }

    /// A player of `playerItem`, without outputs: show it in a ``PlayerLayer``. As `AVPlayer(playerItem:)`.
    public convenience init(playerItem: PlayerItem?) {
        self.init(item: playerItem)
    }

    init(core: PlayerCore) {
        self.core = core
        core.owner = self
        core.start()
    }

    deinit { core.invalidate() }

    /// Stops playback and every engine thread, detaches the sinks, and waits for it all.
    /// The player cannot be used afterwards. Deinit does the same. Leaving a display or a
    /// ``PlayerLayer`` takes the player out only if it is still what they show; any other video
    /// sink handed to a new player must first be released by the old one (invalidate it, or let
    /// it go), since detaching clears that sink's source.
    public func invalidate() { core.invalidate() }

    /// Whether the player itself can play, as `AVPlayer.status`:
    ///
    /// * `.unknown` until the player has an output (a video or an audio sink) and one of its
    ///   items became ready to play;
    /// * `.readyToPlay` from then on, whatever later items do (a failed item fails on its own:
    ///   see ``PlayerItem/status`` and ``PlayerEvent/failedToPlayToEndTime(_:_:)``);
    /// * `.failed` for good when an output reported that it can no longer work (see
    ///   ``VideoSink/setFailureHandler(_:)``): playback stops (rate 0), ``play()`` does nothing,
    ///   and ``error`` says why. Make a new player with working outputs.
    ///
    /// Each change is announced as ``PlayerEvent/playerStatusChanged(_:)``.
    public var status: Status { core.playerStatus }
    /// Why the player failed (`nil` unless ``status`` is `.failed`). Item errors are on the item.
    public var error: MediaError? { core.playerError }

    /// The item being played.
    public var currentItem: PlayerItem? { core.currentItem }

    /// Replaces the current item (and, for a queue, the whole queue) with `item`.
    public func replaceCurrentItem(with item: PlayerItem?) {
        core.replaceItems(with: item.map { [$0] } ?? [])
    }

    /// Plays at ``defaultRate``.
    public func play() { core.setRate(core.defaultRate) }
    /// Sets the rate to 0.
    public func pause() { core.setRate(0) }

    /// The playback rate: 0 is paused, 1 normal; negative rates are clamped to 0
    /// (``PlayerItem/canPlayReverse`` is false).
    public var rate: Double {
        get { core.rate }
        set { core.setRate(newValue) }
    }

    /// The rate ``play()`` uses.
    public var defaultRate: Double {
        get { core.defaultRate }
        set { core.setDefaultRate(newValue) }
    }

    /// What happens when the current item ends.
    public var actionAtItemEnd: ActionAtItemEnd {
        get { core.actionAtItemEnd }
        set { core.actionAtItemEnd = newValue }
    }

    /// What happens when the current item fails: `.advance` (the default) or `.hold`.
    public var actionAtItemFailure: ActionAtItemFailure {
        get { core.actionAtItemFailure }
        set { core.actionAtItemFailure = newValue }
    }

    /// Whether playback is paused, waiting for something (and why), or presenting. Each change is
    /// announced as ``PlayerEvent/timeControlStatusChanged(_:)``.
    public var timeControlStatus: TimeControlStatus { core.timeControlStatus }

    /// Why the player waits, while ``timeControlStatus`` is `.waitingToPlayAtSpecifiedRate`; nil otherwise.
    public var reasonForWaitingToPlay: WaitingReason? {
        if case .waitingToPlayAtSpecifiedRate(let reason) = timeControlStatus { return reason }
        return nil
    }

    /// Whether the player waits for data when the video runs out of decoded frames (true, the
    /// default): the display clock holds on the last frame until frames come again, so nothing is
    /// skipped and ``timeControlStatus`` is `.waitingToPlayAtSpecifiedRate(.toMinimizeStalls)`
    /// meanwhile. When false, time runs on through the gap (what a show that must keep to the
    /// wall clock wants): the frames that come late are dropped up to the one due, and the status
    /// stays `.playing`. Either way the stall is announced (``PlayerEvent/playbackStalled(_:)``)
    /// and logged (`stalled`). An item's first frame (at its start, after a seek) is always waited for.
    /// With sound at rate 1 the audio clock paces playback and never waits for the video.
    public var automaticallyWaitsToMinimizeStalling: Bool {
        get { core.automaticallyWaitsToMinimizeStalling }
        set { core.automaticallyWaitsToMinimizeStalling = newValue }
    }

    // MARK: Sound

    /// The player's own volume, 0...1 (1 by default), applied to its audio sink (ramped there):
    /// each player on a screen has its own.
    public var volume: Float {
        get { core.volume }
        set { core.volume = newValue }
    }

    /// Silences the player's audio (its sink's volume goes to 0) while it keeps playing; ``volume``
    /// comes back when unmuted.
    public var isMuted: Bool {
        get { core.isMuted }
        set { core.isMuted = newValue }
    }

    /// The current item's time.
    public func currentTime() -> MediaTime { core.currentTime() }

    /// Frames decoded but never shown (late), since the player started.
    public var droppedFrameCount: Int { core.droppedFrames }

    // MARK: Clocks and timed starts

    /// Which clock drives playback: the audio output (the default), the display, or the wall
    /// clock with an offset (``PlaybackSourceClock``). Changing it starts the timeline afresh at
    /// the next first frame; changing only the wall clock's offset keeps every pin, and the
    /// player eases out (or seeks away) the step it makes.
    public var sourceClock: PlaybackSourceClock {
        get { core.sourceClock }
        set { core.sourceClock = newValue }
    }

    /// How the player follows its source clock: when it seeks, how fast it may run to catch up.
    public var clockFollowingPolicy: ClockFollowingPolicy {
        get { core.followingPolicy }
        set { core.followingPolicy = newValue }
    }

    /// Starts playing (or changes the rate) so that media time `time` of the current item is on
    /// screen at host time `hostTime` (``MonotonicClock`` timeline), as AVPlayer's
    /// `setRate(_:time:atHostTime:)`.
    ///
    /// - `time` ``MediaTime/invalid``: where the player is (paused: the frame on screen stays
    ///   until `hostTime`, then moves; playing: an exact seek to where it will be then).
    /// - `hostTime` ``MediaTime/invalid``: now. A host time in the past starts where the
    ///   timeline has got to by now (late frames are dropped).
    ///
    /// A numeric `time` is an exact seek: the frame at `time` shows as soon as it is decoded and
    /// stays until `hostTime`; call ``preroll(atRate:completionHandler:)`` first so it is ready.
    /// With the wall clock as ``sourceClock`` the start is pinned on the wall clock, so the
    /// player keeps to it from then on.
    public func setRate(_ rate: Double, time: MediaTime, atHostTime hostTime: MediaTime) {
        core.setRate(rate, time: time, atHostTime: hostTime)
    }

    /// Readies the current item to start at once (its frame at the current time decoded, its
    /// sound primed), as AVPlayer's `preroll(atRate:completionHandler:)`: `completionHandler`
    /// gets `true` when it is, `false` when there is no current item or it stopped being current
    /// (replaced, failed) first. Items are prepared as soon as they are queued, so this only
    /// waits; `rate` is taken for AVPlayer's signature.
    public func preroll(atRate rate: Double, completionHandler: @escaping @Sendable (Bool) -> Void) {
        core.preroll(completion: completionHandler)
    }

    /// ``preroll(atRate:completionHandler:)``, awaited.
    @discardableResult
    public func preroll(atRate rate: Double) async -> Bool {
        await withCheckedContinuation { continuation in
            preroll(atRate: rate) { continuation.resume(returning: $0) }
        }
    }

    // MARK: Seeking

    /// A fast seek: playback resumes at the keyframe at or before `time`.
    public func seek(to time: MediaTime, completionHandler: (@Sendable (Bool) -> Void)? = nil) {
        currentItem?.seek(to: time, completionHandler: completionHandler) ?? completionHandler?(false)
    }

    /// A seek within tolerances; both `.zero` gives the exact frame.
    public func seek(
        to time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime,
        completionHandler: (@Sendable (Bool) -> Void)? = nil
    ) {
        guard let item = currentItem else { completionHandler?(false); return }
        item.seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter, completionHandler: completionHandler)
    }

    /// Seeks and waits: `true` when it finished, `false` when superseded.
    @discardableResult
    public func seek(to time: MediaTime, toleranceBefore: MediaTime = .positiveInfinity, toleranceAfter: MediaTime = .positiveInfinity) async -> Bool {
        guard let item = currentItem else { return false }
        return await item.seek(to: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter)
    }

    // MARK: Observers

    /// Calls `block` every `interval` of presented time while playing, and when time jumps
    /// (seek, next item) and when playback starts or stops. `queue` nil = a private serial queue.
    /// A call still running makes the next one be skipped, not queued.
    public func addPeriodicTimeObserver(
        forInterval interval: MediaTime, queue: DispatchQueue?, using block: @escaping @Sendable (MediaTime) -> Void
    ) -> TimeObserverToken {
        core.addObserver(.periodic(interval: interval), queue: queue, block: block)
    }

    /// Calls `block` when normal playback presents the first frame at or past one of `times`;
    /// a seek that jumps over a mark does not fire it. A mark at 0 fires on the item's first
    /// frame when it plays from the start; a mark past the last frame (at the duration) fires
    /// when the item ends, just before `didPlayToEndTime`.
    public func addBoundaryTimeObserver(
        forTimes times: [MediaTime], queue: DispatchQueue?, using block: @escaping @Sendable () -> Void
    ) -> TimeObserverToken {
        core.addObserver(.boundary(times: times.sorted()), queue: queue) { _ in block() }
    }

    /// Stops an observer: no call starts after this returns.
    public func removeTimeObserver(_ token: TimeObserverToken) { core.removeObserver(token) }

    /// Every event of the player and its items, from now on. Each access is a new subscriber.
    public var events: AsyncStream<PlayerEvent> { core.events.stream() }

    /// Receives the presentation log's records on the display's thread (keep it quick).
    public func setPresentationHandler(_ handler: (@Sendable (PresentationRecord) -> Void)?) {
        core.setPresentationHandler(handler)
    }
}

/// Plays items in sequence, gaplessly: the next item is opened and its first frame decoded while
/// the current one plays, and the current last frame stays until the next first frame is shown.
public final class QueuePlayer: Player, @unchecked Sendable {
    /// A queue of `items` presenting to the sinks (either may be nil: a ``PlayerLayer`` can be
    /// given the player later). ``Player/actionAtItemEnd`` is `.advance`.
    public init(
        items: [PlayerItem] = [], videoSink: (any VideoSink)? = nil, audioSink: (any AudioSink)? = nil,
        clock: any HostClock = MonotonicClock()
    ) {
        let core = PlayerCore(videoSink: videoSink, audioSink: audioSink, clock: clock)
        core.actionAtItemEnd = .advance
        super.init(core: core)
        core.replaceItems(with: items)
    }

    /// The queue, current item first.
    public func items() -> [PlayerItem] { core.items }

    /// Ends the current item and plays the next.
    public func advanceToNextItem() { core.advanceToNextItem() }

    /// Inserts `item` after `after` (nil = at the end).
    public func insert(_ item: PlayerItem, after: PlayerItem?) { _ = core.insert(item, after: after) }

    /// Whether ``insert(_:after:)`` would succeed: the item is not already queued or failed, and
    /// `after` is queued.
    public func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool { core.canInsert(item, after: after) }

    /// Removes `item` from the queue (the current one: the next one plays).
    public func remove(_ item: PlayerItem) { core.remove(item) }

    /// Empties the queue.
    public func removeAllItems() { core.replaceItems(with: []) }

    /// Loops the queue forever (like `AVPlayerLooper`): when an item becomes current a fresh copy
    /// of it is queued at the end, so one item loops on itself, several loop as a playlist, and
    /// the copy is prepared before the seam like any next item (gapless). ``items()`` therefore
    /// shows the copy too. A copy of an item that fails fails in turn and is skipped.
    public var loops: Bool {
        get { core.loops }
        set { core.loops = newValue }
    }
}
