import Dispatch
import Logging
import MediaAsset
import MediaSinks
import MediaTime
import ProcessMemory
import Threading

/// What happens when the current item reaches its end.
public enum ActionAtItemEnd: String, Sendable, Hashable {
    /// Play the next item (a ``QueuePlayer``'s default).
    case advance
    /// Pause at the end (a ``Player``'s default).
    case pause
    /// Do nothing: the last frame stays and the item stays current.
    case none
}

/// What happens when the current item fails (it cannot be opened, or reading it stopped on an
/// error before its end). Either way ``PlayerEvent/failedToPlayToEndTime(_:_:)`` is sent.
public enum ActionAtItemFailure: String, Sendable, Hashable {
    /// Leave the failed item and play the next one (AVQueuePlayer's behaviour; the default).
    case advance
    /// Keep the failed item current and present nothing more: the last picture stays on screen and
    /// no sound plays until the owner removes or replaces the item (a supervisor deciding whether
    /// to retry it, skip it or fall back). ``Player/timeControlStatus`` is then
    /// `.waitingToPlayAtSpecifiedRate` for ``WaitingReason/itemFailed``.
    case hold
}

/// Whether playback is going on, as AVPlayer's `timeControlStatus` says it.
public enum TimeControlStatus: Sendable, Hashable {
    /// The rate is 0.
    case paused
    /// The rate is not 0 but no new picture or sound can be presented: `reason` says why.
    case waitingToPlayAtSpecifiedRate(WaitingReason)
    /// Frames (or, for sound-only items, audio) flow at the rate.
    case playing
}

/// Why a player with a rate other than 0 presents nothing new (AVPlayer's `reasonForWaitingToPlay`).
public enum WaitingReason: String, Sendable, Hashable {
    /// The queue is empty.
    case noItemToPlay
    /// The current item's data has not arrived in time: it is being opened, its first frame is being
    /// decoded, or its video ran out of decoded frames before its end (a slow network, a stalled
    /// source). AVFoundation's `toMinimizeStalls`.
    case toMinimizeStalls
    /// The current item failed and is held (``ActionAtItemFailure/hold``).
    case itemFailed
}

/// The engine behind `Player` and `QueuePlayer`: the video frame source the display pulls from,
/// the owner of the audio feeder, and the one lock around ``EngineState``.
///
/// Every entry point takes the lock, lets the state handle the event, releases the lock and then
/// performs the ``EngineEffects`` the event returned: events, observers, completions, presentation
/// records, item threads started or stopped, the sinks paused or flushed.
///
/// Lock order: this engine lock, then an item's lock, then that item's pipeline's lock. The state
/// reads items and pipelines under the engine lock; items and pipelines never call the engine
/// while holding their own lock, and nothing is called out of the engine with its lock held.
final class PlayerCore: VideoFrameSource, PacedFrameSource, Sendable {
    let state: ConditionLock<EngineState, EngineWaiter>
    let audioSink: (any AudioSink)?
    let clock: any HostClock
    let audioFormat: AudioFormat
    let events = EventHub<PlayerEvent>()
    private let feeder: AudioFeeder?
    private let teardown = DispatchGroup()
    private let teardownQueue = DispatchQueue(label: "vitrine.player.teardown")
    /// Serialises changes of the video sink: held around the engine lock (taken and released) and
    /// the sinks' calls, so two changes cannot interleave their calls to the sinks.
    private let outputChange = LockedValue<Void>(())
    /// The player this engine is behind (for ``PlayerLayer/player``), and its sound settings.
    private let settings = LockedValue(Settings())

    private struct Settings {
        weak var owner: Player?
        var volume: Float = 1
        var isMuted = false
    }

    static let logger = Logger(label: "vitrine.playback")

    init(videoSink: (any VideoSink)?, audioSink: (any AudioSink)?, clock: any HostClock) {
        self.audioSink = audioSink
        self.clock = clock
        self.audioFormat = audioSink?.format ?? AudioFormat()
        var initial = EngineState()
        _ = initial.attachVideoOutput(videoSink, layer: videoSink?.videoLayer)
        initial.wallClockTime = { [clock] host in clock.wallClockTime(at: host) }
        let engine = ConditionLock<EngineState, EngineWaiter>(initial)
        state = engine
        feeder = audioSink.map { AudioFeeder(engine: engine, sink: $0, clock: clock) }
    }

    /// Connects the sinks and starts the audio feeder. Called once by the player. A feeder that
    /// cannot start fails the player (it could not play sound).
    func start() {
        let videoSink = self.videoSink
        videoSink?.setSource(self)
        videoSink?.setFailureHandler(outputFailedHandler)
        claimReadiness()
        audioSink?.setFailureHandler(outputFailedHandler)
        do throws(ThreadStartError) {
            try feeder?.start()
        } catch {
            outputFailedHandler(MediaError(source: "audio output", operation: "cannot feed", reason: .other, detail: "(\(error))"))
        }
    }

    private var outputFailedHandler: @Sendable (MediaError) -> Void {
        { [weak self] error in self?.outputFailed(error) }
    }

    // MARK: Video output

    /// The sink pulling this engine's frames now.
    var videoSink: (any VideoSink)? { state.withLock { $0.output.sink } }

    /// The player this engine is behind.
    var owner: Player? {
        get { settings.withLock { $0.owner } }
        set { settings.withLock { $0.owner = newValue } }
    }

    /// Makes `sink` the engine's video output (nil: none): the old sink stops pulling (if it still
    /// pulls this engine), the new one pulls from its next refresh on and shows the current picture.
    func setVideoSink(_ sink: (any VideoSink)?) {
        outputChange.withLock { _ in
            let layer = sink?.videoLayer
            let (old, invalidated) = state.withLock { state -> ((any VideoSink)?, Bool) in
                guard !state.invalidated, state.output.sink !== sink else { return (nil, true) }
                return (state.attachVideoOutput(sink, layer: layer), false)
            }
            guard !invalidated else { return }
            if let old { leave(old) }
            if let sink {
                sink.setSource(self)
                sink.setFailureHandler(outputFailedHandler)
                claimReadiness()
            }
        }
        updatePlayerStatus(readyItem: nil)
    }

    /// Becomes the one that tells the output's layer its readiness (after the sink took this engine
    /// as its source, which reset the layer), then tells it the readiness as it stands: a change
    /// made meanwhile, which the layer dropped, is not lost.
    private func claimReadiness() {
        guard let layer = state.withLock({ $0.output.layer }) else { return }
        layer.claimReadiness(by: self)
        let change = state.withLock { state -> ReadinessChange? in
            guard let current = state.output.layer, current === layer else { return nil }
            state.output.readinessVersion += 1
            return ReadinessChange(layer: layer, isReady: state.output.announcedReady, version: state.output.readinessVersion)
        }
        if let change { layer.updateReadiness(change.isReady, version: change.version, from: self) }
    }

    /// Stops being `sink`'s source. A display layer (a ``PlayerLayer``, a display, what shows in
    /// one) lets go of this engine and its failure handler only if they are still its own, so a
    /// player leaving late never takes away what another player set; any other sink is this
    /// player's alone and is cleared.
    private func leave(_ sink: any VideoSink) {
        sink.removeSource(self)
        if sink.videoLayer == nil { sink.setFailureHandler(nil) }
    }

    /// Leaves `sink` when it is the engine's video output (a layer given another player).
    func removeVideoSink(ifItIs sink: any VideoSink) {
        let isCurrent = state.withLock { $0.output.sink === sink }
        if isCurrent { setVideoSink(nil) }
    }

    // MARK: Sound

    /// The player's volume and mute, applied to its own audio sink.
    var volume: Float {
        get { settings.withLock { $0.volume } }
        set { changeSound { $0.volume = newValue.isFinite ? min(max(newValue, 0), 1) : 1 } }
    }

    var isMuted: Bool {
        get { settings.withLock { $0.isMuted } }
        set { changeSound { $0.isMuted = newValue } }
    }

    /// Changes the sound settings and sets the sink's volume, in the order the changes were made.
    private func changeSound(_ change: (inout Settings) -> Void) {
        // The sink's volume is set holding the settings lock: two changes from two threads reach
        // the sink in the order they were made. The sink's lock is a leaf; nothing here calls back.
        settings.withLock { settings in
            change(&settings)
            audioSink?.setVolume(settings.isMuted ? 0 : settings.volume)
        }
    }

    /// Stops every thread: the feeder, every item's pipeline. Waits for them.
    func invalidate() {
        let items: [PlayerItem]? = state.withLock { state in
            guard !state.invalidated else { return nil }
            state.invalidated = true
            defer { state.items.removeAll() }
            return state.items
        }
        // Only the first call tears down (a later or concurrent one returns at once).
        guard let items else { return }
        let videoSink = outputChange.withLock { _ in
            state.withLock { state in state.attachVideoOutput(nil, layer: nil) }
        }
        if let videoSink { leave(videoSink) }
        audioSink?.setFailureHandler(nil)
        audioSink?.flush()
        feeder?.wake()
        feeder?.join()
        for item in items { item.release() }
        teardown.wait()
        events.finish()
    }

    /// Runs `event` on the state under the lock, then performs what it asked for, then tells the
    /// layer and the subscribers what changed for them (readiness, time control status).
    @discardableResult
    private func handle<Result>(_ event: (inout EngineState, inout EngineEffects) -> Result) -> Result {
        var effects = EngineEffects()
        var readiness: ReadinessChange?
        var status: TimeControlStatus?
        let result = state.withLock { state in
            effects.handler = state.presentationHandler
            let result = event(&state, &effects)
            readiness = state.readinessChange()
            status = state.timeControlStatusChange()
            return result
        }
        perform(effects)
        if let readiness { readiness.layer.updateReadiness(readiness.isReady, version: readiness.version, from: self) }
        if let status { events.emit(.timeControlStatusChanged(status)) }
        return result
    }

    /// Performs an event's effects, outside the lock: presentation records first, then the
    /// actions in the order they arose.
    private func perform(_ effects: EngineEffects) {
        if let handler = effects.handler { effects.records.forEach(handler) }
        var wakesFeeder = false
        for action in effects.actions {
            switch action {
            case .emit(let event): events.emit(event)
            case .invoke(let observer, let time): observer.invoke(time)
            case .complete(let completion, let finished): completion(finished)
            case .prepare(let item): _ = item.prepare(core: self, audioFormat: audioFormat)
            case .release(let item):
                teardownQueue.async(group: teardown) {
                    item.release()
                    // Its decoders' pools and queues were freed by a dozen threads into as many
                    // allocator arenas: give the pages back, or the resident size creeps for months.
                    ProcessMemory.releaseFreePages()
                }
            case .pauseAudio(let paused): audioSink?.setPaused(paused)
            case .flushAudio: audioSink?.flush()
            case .wakeFeeder: wakesFeeder = true
            case .alignAudio(let mediaTime, let hostTime):
                if audioSink?.align(mediaTime: mediaTime, atHostTime: hostTime) != true {
                    state.withLock { $0.audioJoin.alignmentRefused() }
                }
            case .syncSeek(let item, let target):
                let pin = state.withLock { $0.pin }
                if !seek(item: item, to: target, exact: true, pin: pin, completion: nil) {
                    // The item went meanwhile: the follower may decide again.
                    state.withLock { $0.syncSeekSince = nil }
                }
            case .compensateAudio(let pipeline, let adjustment): pipeline.setAudioCompensation(adjustment)
            }
        }
        if wakesFeeder { feeder?.wake() }
    }

    // MARK: Queue

    var items: [PlayerItem] { state.withLock { $0.items } }
    var currentItem: PlayerItem? { state.withLock { $0.items.first } }

    func isCurrent(_ item: PlayerItem) -> Bool { state.withLock { $0.items.first === item } }

    /// Replaces the whole queue.
    func replaceItems(with newItems: [PlayerItem]) {
        handle { state, effects in
            guard !state.invalidated else { return }
            state.replaceItems(with: newItems, into: &effects)
        }
        updatePlayerStatus(readyItem: nil)
    }

    func insert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        let inserted = handle { state, effects in state.insert(item, after: after, into: &effects) }
        if inserted { updatePlayerStatus(readyItem: nil) }
        return inserted
    }

    func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        state.withLock { $0.canInsert(item, after: after) }
    }

    func remove(_ item: PlayerItem) {
        handle { state, effects in _ = state.remove(item, into: &effects) }
    }

    func advanceToNextItem() {
        guard let current = currentItem else { return }
        remove(current)
    }

    /// An item's status changed (from its pipeline's threads).
    func itemStatusChanged(_ item: PlayerItem) {
        let status = item.status
        events.emit(.itemStatusChanged(item, status))
        if status == .readyToPlay { updatePlayerStatus(readyItem: item) }
        // An audio track no decoder can play: the item plays video only.
        let unplayableAudio = status == .readyToPlay && item.isAudioEnabled ? item.audioTrackError : nil
        if let unplayableAudio { PlayerCore.logger.warning("playing video only: \(unplayableAudio)") }
        let now = clock.now()
        handle { state, effects in
            if let index = state.logIndex(of: item) {
                if let unplayableAudio {
                    effects.log(.audioUnavailable, itemIndex: index, source: item.url, time: nil, at: now, reason: unplayableAudio.description)
                }
                if status == .readyToPlay && !item.hasVideo {
                    // Audio-only items present no frame: their readiness is logged when it happens.
                    effects.log(.itemReady, itemIndex: index, source: item.url, time: nil, at: now)
                }
                if status == .failed {
                    state.prepareUpcoming(into: &effects)
                    effects.log(.itemFailed, itemIndex: index, source: item.url, time: nil, at: now,
                                reason: item.error?.description ?? "unknown error")
                }
            }
            // The feeder may be waiting for this item to be ready to go on into it.
            effects.actions.append(.wakeFeeder)
            state.checkPrerollsNow(into: &effects)
        }
    }

    // MARK: Player status

    var playerStatus: Player.Status { state.withLock { $0.playerStatus } }
    var playerError: MediaError? { state.withLock { $0.playerError } }

    /// `.unknown` → `.readyToPlay` once the player has an output and an item of its own is ready
    /// (`readyItem`, or any queued item when nil). Never leaves `.failed`.
    private func updatePlayerStatus(readyItem: PlayerItem?) {
        let hasAudio = audioSink != nil
        handle { state, effects in
            guard !state.invalidated, state.playerStatus == .unknown, hasAudio || state.output.sink != nil else { return }
            if let readyItem {
                guard readyItem.status == .readyToPlay else { return }
            } else {
                guard state.items.contains(where: { $0.status == .readyToPlay }) else { return }
            }
            state.playerStatus = .readyToPlay
            effects.emit(.playerStatusChanged(.readyToPlay))
        }
    }

    /// An output reported that it can no longer work: the player fails for good and stops
    /// (rate 0, no audio fed). Items keep their own status.
    private func outputFailed(_ error: MediaError) {
        let now = clock.now()
        handle { state, effects in _ = state.outputFailed(error, at: now, into: &effects) }
    }

    // MARK: Rate and time

    var rate: Double { state.withLock { $0.rate } }

    func setRate(_ newRate: Double) {
        let rate = newRate.isFinite ? min(max(newRate, 0), 4) : 0
        let now = clock.now()
        handle { state, effects in _ = state.setRate(rate, at: now, into: &effects) }
    }

    func setDefaultRate(_ rate: Double) { state.withLock { $0.defaultRate = rate } }
    var defaultRate: Double { state.withLock { $0.defaultRate } }

    var actionAtItemEnd: ActionAtItemEnd {
        get { state.withLock { $0.actionAtItemEnd } }
        set { state.withLock { $0.actionAtItemEnd = newValue } }
    }

    var actionAtItemFailure: ActionAtItemFailure {
        get { state.withLock { $0.actionAtItemFailure } }
        set { state.withLock { $0.actionAtItemFailure = newValue } }
    }

    var timeControlStatus: TimeControlStatus { state.withLock { $0.timeControlStatus } }

    var automaticallyWaitsToMinimizeStalling: Bool {
        get { state.withLock { $0.waitsToMinimizeStalling } }
        set { handle { state, _ in state.waitsToMinimizeStalling = newValue } }
    }

    var loops: Bool {
        get { state.withLock { $0.loops } }
        set { handle { state, effects in state.setLoops(newValue, into: &effects) } }
    }

    var droppedFrames: Int { state.withLock { $0.droppedFrames } }

    func setPresentationHandler(_ handler: (@Sendable (PresentationRecord) -> Void)?) {
        // Items are opened as soon as they are queued, so one can fail before a handler is
        // installed; replay those failures so the log never misses an item_failed.
        let now = clock.now()
        handle { state, effects in
            state.presentationHandler = handler
            effects.handler = handler
            for (offset, item) in state.items.enumerated() where item.status == .failed {
                effects.log(.itemFailed, itemIndex: state.itemIndex + offset, source: item.url, time: nil, at: now,
                            reason: item.error?.description ?? "unknown error")
            }
        }
    }

    /// The current item's time now.
    func currentTime() -> MediaTime {
        let now = clock.now()
        return state.withLock { $0.currentTime(at: now) }
    }

    // MARK: Seeking

    /// Seeks `item`; with `pin`, the timeline the seek starts is pinned there (a timed start, the
    /// follower's seek back onto the item's pinned timeline).
    func seek(
        item: PlayerItem, to requested: MediaTime, exact: Bool, pin: ClockPin? = nil, completion: (@Sendable (Bool) -> Void)?
    ) -> Bool {
        var target = max(.zero, requested)
        let duration = item.duration
        if duration.isNumeric, target > duration { target = duration }
        return handle { state, effects in
            guard !state.invalidated, state.items.contains(where: { $0 === item }), let pipeline = item.pipeline else { return false }
            let serial = pipeline.seek(to: target, exact: exact)
            state.seekStarted(item, serial: serial, target: target, pinned: pin, completion: completion, into: &effects)
            return true
        }
    }

    // MARK: Following a clock

    var sourceClock: PlaybackSourceClock {
        get { state.withLock { $0.sourceClock } }
        set {
            let now = clock.now()
            state.withLock { $0.setSourceClock(newValue, at: now) }
        }
    }

    var followingPolicy: ClockFollowingPolicy {
        get { state.withLock { $0.follower.policy } }
        set { state.withLock { $0.follower.policy = newValue } }
    }

    /// AVPlayer's `setRate(_:time:atHostTime:)`: media time `time` (``MediaTime/invalid``: where
    /// the player is) is due at host time `hostTime` (``MediaTime/invalid``: now), at `rate`.
    func setRate(_ newRate: Double, time: MediaTime, atHostTime hostTime: MediaTime) {
        let rate = newRate.isFinite ? min(max(newRate, 0), 4) : 0
        let now = clock.now()
        let host = hostTime.isNumeric ? hostTime : now
        guard let item = currentItem else { return setRate(rate) }
        let (pin, seekTo): (ClockPin?, MediaTime?) = handle { state, effects in
            guard !state.invalidated else { return (nil, nil) }
            let paused = state.rate == 0
            let start = time.isNumeric ? time : state.currentTime(at: paused ? now : host)
            let pin: ClockPin = state.wallTime(at: host).map { .wall(time: start, wall: $0) } ?? .host(time: start, host: host)
            _ = state.setRate(rate, at: now, into: &effects)
            // From a pause at that very time, nothing needs decoding again: the clock holds there
            // until `host`, then runs. Otherwise an exact seek starts the pinned timeline.
            if !time.isNumeric && paused {
                state.startAt(pin, host: host)
                return (pin, nil)
            }
            return (pin, start)
        }
        if let pin, let seekTo { _ = seek(item: item, to: seekTo, exact: true, pin: pin, completion: nil) }
    }

    /// Calls `completion` once the current item can start at once: its first frame (at the
    /// current time, after any seek) decoded and its sound primed; `false` when there is no
    /// current item, or it stops being current first.
    func preroll(completion: @escaping @Sendable (Bool) -> Void) {
        let accepted = state.withLock { state -> Bool in
            guard !state.invalidated, let item = state.items.first, item.status != .failed else { return false }
            state.prerolls.append((item, completion))
            return true
        }
        if !accepted { completion(false) }
        // Ready already: the next refresh completes it; with no refresh coming (paused player on
        // a display that does not pull), check now.
        checkPrerollsNow()
    }

    private func checkPrerollsNow() {
        handle { state, effects in state.checkPrerollsNow(into: &effects) }
    }

    func cancelPendingSeeks(item: PlayerItem) {
        let cancelled: [EngineState.SeekRequest] = state.withLock { state in
            let mine = state.seeks.filter { $0.item === item }
            state.seeks.removeAll { $0.item === item }
            return mine
        }
        for seek in cancelled {
            seek.completion?(false)
            events.emit(.seekCompleted(item, seek.target, finished: false))
        }
    }

    // MARK: Observers

    func addObserver(_ kind: TimeObserver.Kind, queue: DispatchQueue?, block: @escaping @Sendable (MediaTime) -> Void) -> TimeObserverToken {
        state.withLock { state in state.observers.add(kind, queue: queue, at: state.clock.heldTime, block: block) }
    }

    func removeObserver(_ token: TimeObserverToken) {
        state.withLock { $0.observers.remove(token) }
    }

    // MARK: VideoFrameSource (the display's render thread)

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        let reading = audioSink?.currentReading()
        return handle { state, effects in state.outputContent(state.content(for: tick, reading: reading, into: &effects)) }
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {
        let wall = clock.wallClockTime(at: tick.hostTime)
        handle { state, effects in
            state.outputPresented(frameID: frameID)
            let first = effects.records.count
            state.didPresent(frameID: frameID, at: tick, wallClockTime: wall, into: &effects)
            // The frame lines name the layer the frame was shown in.
            guard let layer = state.output.layer?.name else { return }
            for index in effects.records.indices.dropFirst(first) {
                if case .frame(var frame) = effects.records[index] {
                    frame.layer = layer
                    effects.records[index] = .frame(frame)
                }
            }
        }
    }

    func didSkipRefresh(_ tick: RefreshTick) {}

    // MARK: PacedFrameSource

    func isWaitingForData() -> Bool {
        let level = (audioSink as? any AudioSinkBufferLevel).map { (queued: $0.queuedDuration, capacity: $0.capacity) }
        // Read outside the engine's lock: a layer's interval is behind the layer's own lock.
        let refreshInterval = videoSink?.refreshInterval
        let now = clock.now()
        return state.withLock { $0.isWaitingForData(at: now, audioLevel: level, refreshInterval: refreshInterval) }
    }
}
