import MediaAsset
import Dispatch
import DequeModule
import Logging
import MediaTime
import Synchronization
import Threading
import MediaSinks

/// What happens when the current item reaches its end.
public enum ActionAtItemEnd: String, Sendable, Hashable {
    /// Play the next item (a ``QueuePlayer``'s default).
    case advance
    /// Pause at the end (a ``Player``'s default).
    case pause
    /// Do nothing: the last frame stays and the item stays current.
    case none
}

/// The engine: the video frame source the display pulls from, the audio feeder, the clock, the
/// queue of items, and the observers. `Player` and `QueuePlayer` are its public faces.
final class PlayerCore: VideoFrameSource, PacedFrameSource, @unchecked Sendable {
    struct Pending {
        var item: PlayerItem
        var itemIndex: Int
        var presentationTime: MediaTime
        var serial: Int
        var isJump: Bool
        var clock: MediaTime
        var audioClock: MediaTime?
        /// False for content that only changes the subtitle.
        var isFrame = true
    }

    /// One item's audio in the sink's continuous timeline: items follow each other without a
    /// flush, so the sink's media time is item time plus `offset`.
    struct AudioFeed {
        var item: PlayerItem
        var offset: MediaTime
        /// The end of what was enqueued, in item time.
        var end: MediaTime
        var started: Bool
    }

    struct SeekRequest {
        var item: PlayerItem
        var serial: Int
        var target: MediaTime
        var completion: (@Sendable (Bool) -> Void)?
    }

    struct State {
        var items: [PlayerItem] = []
        var itemIndex = -1
        var rate: Double = 0
        var defaultRate: Double = 1
        var actionAtItemEnd: ActionAtItemEnd = .pause
        var loops = false
        var anchor: (host: MediaTime, media: MediaTime)?
        var pausedTime: MediaTime = .zero
        var lastClock: (host: MediaTime, media: MediaTime)?
        var needsFirstFrame = true
        var jumpPending = false
        var handedEnd: MediaTime?
        /// The start of the subtitle last handed to the sink (nil: none shown).
        var handedSubtitle: MediaTime?
        var lastPresented: MediaTime?
        var periodicIndex: [Int: Int64] = [:]
        var pending: [UInt64: Pending] = [:]
        var nextFrameID: UInt64 = 1
        var seeks: [SeekRequest] = []
        var droppedFrames = 0
        var ended = false
        var stalled = false
        var observers: [TimeObserver] = []
        var nextObserverID = 0
        /// Bumped whenever the audio stream must restart (seek, rate leaving or entering 1,
        /// an item change that is not a natural advance): the feeder then flushes the sink.
        var audioGeneration = 0
        /// The items whose audio went to the sink since the last flush, in order.
        var audioFeeds: [AudioFeed] = []
        var invalidated = false
        /// The player's own status: see ``Player/status``.
        var playerStatus: Player.Status = .unknown
        var playerError: MediaError?
        var presentationHandler: (@Sendable (PresentationRecord) -> Void)?
    }

    let state = Mutex(State())
    let videoSink: (any VideoSink)?
    let audioSink: (any AudioSink)?
    let clock: any HostClock
    let audioFormat: AudioFormat
    let events = EventHub<PlayerEvent>()
    private let teardown = DispatchGroup()
    private let teardownQueue = DispatchQueue(label: "vitrine.player.teardown")
    private let defaultObserverQueue = DispatchQueue(label: "vitrine.player.observers")
    private var feeder: NamedThread?
    private let feederWake = ConditionLock<Void, StateChanged>(())

    init(videoSink: (any VideoSink)?, audioSink: (any AudioSink)?, clock: any HostClock) {
        self.videoSink = videoSink
        self.audioSink = audioSink
        self.clock = clock
        self.audioFormat = audioSink?.format ?? AudioFormat()
    }

    /// Connects the sinks and starts the audio feeder. Called once by the player.
    func start() {
        videoSink?.setSource(self)
        let outputFailed: @Sendable (MediaError) -> Void = { [weak self] error in self?.outputFailed(error) }
        videoSink?.setFailureHandler(outputFailed)
        audioSink?.setFailureHandler(outputFailed)
        if audioSink != nil {
            feeder = try? NamedThread.start(name: "vitrine-feeder") { [self] in feedAudio() }
        }
    }

    /// Stops every thread: the feeder, every item's pipeline. Waits for them.
    func invalidate() {
        let items: [PlayerItem]? = state.withLock { state in
            guard !state.invalidated else { return nil }
            state.invalidated = true
            state.rate = 0
            defer { state.items.removeAll() }
            return state.items
        }
        // Only the first call tears down (a later or concurrent one returns at once).
        guard let items else { return }
        videoSink?.setSource(nil)
        videoSink?.setFailureHandler(nil)
        audioSink?.setFailureHandler(nil)
        audioSink?.flush()
        feederWake.broadcast()
        feeder?.join()
        feeder = nil
        for item in items { item.release() }
        teardown.wait()
        events.finish()
    }

    // MARK: Queue

    var items: [PlayerItem] { state.withLock { $0.items } }
    var currentItem: PlayerItem? { state.withLock { $0.items.first } }

    func isCurrent(_ item: PlayerItem) -> Bool { state.withLock { $0.items.first === item } }

    /// Replaces the whole queue.
    func replaceItems(with newItems: [PlayerItem]) {
        var effects: [@Sendable () -> Void] = []
        let released: [PlayerItem] = state.withLock { state in
            guard !state.invalidated else { return [] }
            let old = state.items.filter { item in !newItems.contains { $0 === item } }
            let oldCurrent = state.items.first
            state.items = newItems
            if state.items.first !== oldCurrent { makeCurrent(&state, effects: &effects) }
            prepareUpcoming(&state)
            return old
        }
        release(released)
        effects.forEach { $0() }
        updatePlayerStatus(readyItem: nil)
    }

    func insert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        var effects: [@Sendable () -> Void] = []
        let inserted: Bool = state.withLock { state in
            guard !state.invalidated, !state.items.contains(where: { $0 === item }), item.status != .failed else { return false }
            if let after {
                guard let index = state.items.firstIndex(where: { $0 === after }) else { return false }
                state.items.insert(item, at: index + 1)
            } else {
                state.items.append(item)
            }
            if state.items.count == 1 { makeCurrent(&state, effects: &effects) }
            prepareUpcoming(&state)
            return true
        }
        effects.forEach { $0() }
        if inserted { updatePlayerStatus(readyItem: nil) }
        return inserted
    }

    func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        state.withLock { state in
            guard !state.invalidated, !state.items.contains(where: { $0 === item }), item.status != .failed else { return false }
            if let after { return state.items.contains { $0 === after } }
            return true
        }
    }

    func remove(_ item: PlayerItem) {
        var effects: [@Sendable () -> Void] = []
        let removed: Bool = state.withLock { state in
            guard let index = state.items.firstIndex(where: { $0 === item }) else { return false }
            state.items.remove(at: index)
            if index == 0 { makeCurrent(&state, effects: &effects) }
            prepareUpcoming(&state)
            return true
        }
        if removed { release([item]) }
        effects.forEach { $0() }
    }

    func advanceToNextItem() {
        guard let current = currentItem else { return }
        remove(current)
    }

    /// Sets up the new `items.first` as current: a fresh timeline, audio restarted.
    private func makeCurrent(_ state: inout State, effects: inout [@Sendable () -> Void], gapless: Bool = false) {
        let current = state.items.first
        let previousTime = state.handedEnd ?? state.pausedTime
        state.itemIndex += 1
        // Time jumps to the new item's start: periodic observers fire on its first frame.
        for key in state.periodicIndex.keys { state.periodicIndex[key] = .min }
        state.pausedTime = current?.state.withLock { $0.startTime } ?? .zero
        state.anchor = nil
        state.needsFirstFrame = true
        state.jumpPending = false
        state.handedEnd = nil
        state.lastPresented = nil
        state.ended = false
        state.stalled = false
        // A natural advance keeps the audio stream running (the feeder may already be on the new
        // item); anything else restarts it.
        if !gapless { state.audioGeneration += 1 }
        for seek in state.seeks { if let completion = seek.completion { effects.append { completion(false) } } }
        state.seeks.removeAll()
        if let current {
            _ = current.prepare(core: self, audioFormat: audioFormat)
            // Looping: the copy is queued as soon as its original starts, so it is prepared
            // (decoded, first frame ready) before the original ends, even in a queue of one.
            if state.loops { state.items.append(current.copy()) }
        }
        let events = self.events
        effects.append { events.emit(.currentItemChanged(current)) }
        if current == nil && state.rate != 0 {
            state.rate = 0
            firePeriodic(&state, time: previousTime, effects: &effects)
            effects.append { events.emit(.rateChanged(0)) }
        }
        feederWake.broadcast()
    }

    /// Opens the item after the current one (the first that has not failed), so it is decoded
    /// and ready before the current one ends.
    private func prepareUpcoming(_ state: inout State) {
        guard let current = state.items.first else { return }
        if current.status != .failed { _ = current.prepare(core: self, audioFormat: audioFormat) }
        for item in state.items.dropFirst() where item.status != .failed {
            _ = item.prepare(core: self, audioFormat: audioFormat)
            return
        }
    }

    private func release(_ items: [PlayerItem]) {
        for item in items {
            teardownQueue.async(group: teardown) { item.release() }
        }
    }

    /// An item with an audio track no decoder can play plays video-only: a warning in the log
    /// and an `audio_unavailable` event in the presentation log.
    private func reportUnplayableAudio(of item: PlayerItem, _ problem: MediaError) {
        PlayerCore.logger.warning("playing video only: \(problem)")
        let (index, handler): (Int?, (@Sendable (PresentationRecord) -> Void)?) = state.withLock { state in
            (state.items.firstIndex { $0 === item }.map { state.itemIndex + $0 }, state.presentationHandler)
        }
        if let index, let handler {
            handler(.event(PresentationEvent(
                kind: .audioUnavailable, itemIndex: index, source: item.url, time: nil, at: clock.now(), reason: problem.description)))
        }
    }

    static let logger = Logger(label: "vitrine.playback")

    /// An item's status changed (from its pipeline's threads).
    func itemStatusChanged(_ item: PlayerItem) {
        let status = item.status
        events.emit(.itemStatusChanged(item, status))
        if status == .readyToPlay { updatePlayerStatus(readyItem: item) }
        if status == .readyToPlay, item.isAudioEnabled, let problem = item.audioTrackError {
            reportUnplayableAudio(of: item, problem)
        }
        if status == .readyToPlay && !item.hasVideo {
            // Audio-only items present no frame: their readiness is logged when it happens.
            let (index, handler): (Int?, (@Sendable (PresentationRecord) -> Void)?) = state.withLock { state in
                (state.items.firstIndex { $0 === item }.map { state.itemIndex + $0 }, state.presentationHandler)
            }
            if let index, let handler {
                handler(.event(PresentationEvent(kind: .itemReady, itemIndex: index, source: item.url, time: nil, at: clock.now(), reason: nil)))
            }
        }
        guard status == .failed else { return }
        let (index, handler): (Int?, (@Sendable (PresentationRecord) -> Void)?) = state.withLock { state in
            guard let position = state.items.firstIndex(where: { $0 === item }) else { return (nil, nil) }
            prepareUpcoming(&state)
            return (state.itemIndex + position, state.presentationHandler)
        }
        if let index, let handler {
            handler(.event(PresentationEvent(
                kind: .itemFailed, itemIndex: index, source: item.url, time: nil, at: clock.now(),
                reason: item.error?.description ?? "unknown error")))
        }
    }

    // MARK: Player status

    var playerStatus: Player.Status { state.withLock { $0.playerStatus } }
    var playerError: MediaError? { state.withLock { $0.playerError } }

    /// `.unknown` → `.readyToPlay` once the player has an output and an item of its own is ready
    /// (`readyItem`, or any queued item when nil). Never leaves `.failed`.
    private func updatePlayerStatus(readyItem: PlayerItem?) {
        guard videoSink != nil || audioSink != nil else { return }
        let changed: Bool = state.withLock { state in
            guard !state.invalidated, state.playerStatus == .unknown else { return false }
            if let readyItem {
                guard readyItem.status == .readyToPlay else { return false }
            } else {
                guard state.items.contains(where: { $0.status == .readyToPlay }) else { return false }
            }
            state.playerStatus = .readyToPlay
            return true
        }
        if changed { events.emit(.playerStatusChanged(.readyToPlay)) }
    }

    /// An output reported that it can no longer work: the player fails for good and stops
    /// (rate 0, no audio fed). Items keep their own status.
    private func outputFailed(_ error: MediaError) {
        var effects: [@Sendable () -> Void] = []
        let changed: Bool = state.withLock { state in
            guard !state.invalidated, state.playerStatus != .failed else { return false }
            state.playerStatus = .failed
            state.playerError = error
            let events = self.events
            effects.append { events.emit(.playerStatusChanged(.failed)) }
            if state.rate != 0 {
                let time = clockTime(&state, at: clock.now())
                state.pausedTime = time
                state.anchor = nil
                state.rate = 0
                state.audioGeneration += 1
                firePeriodic(&state, time: time, effects: &effects)
                effects.append { events.emit(.rateChanged(0)) }
            }
            return true
        }
        guard changed else { return }
        audioSink?.setPaused(true)
        feederWake.broadcast()
        effects.forEach { $0() }
    }

    /// The audio feed of `item` in the current generation, if its audio reached the sink.
    private func audioFeed(_ state: State, for item: PlayerItem) -> AudioFeed? {
        state.audioFeeds.last { $0.item === item && $0.started }
    }

    // MARK: Rate and time

    var rate: Double { state.withLock { $0.rate } }

    func setRate(_ newRate: Double) {
        let rate = newRate.isFinite ? min(max(newRate, 0), 4) : 0
        var effects: [@Sendable () -> Void] = []
        state.withLock { state in
            // A failed player stays stopped (like AVPlayer, it must be replaced).
            guard !state.invalidated, state.rate != rate, state.playerStatus != .failed else { return }
            let now = clock.now()
            let time = clockTime(&state, at: now)
            state.pausedTime = time
            state.anchor = nil
            // Audio plays only at rate 1: entering or leaving it restarts the audio stream.
            if (state.rate == 1) != (rate == 1) { state.audioGeneration += 1 }
            state.rate = rate
            firePeriodic(&state, time: time, effects: &effects)
            let events = self.events
            effects.append { events.emit(.rateChanged(rate)) }
        }
        audioSink?.setPaused(rate == 0)
        feederWake.broadcast()
        effects.forEach { $0() }
    }

    func setDefaultRate(_ rate: Double) { state.withLock { $0.defaultRate = rate } }
    var defaultRate: Double { state.withLock { $0.defaultRate } }

    var actionAtItemEnd: ActionAtItemEnd {
        get { state.withLock { $0.actionAtItemEnd } }
        set { state.withLock { $0.actionAtItemEnd = newValue } }
    }

    var loops: Bool {
        get { state.withLock { $0.loops } }
        set {
            state.withLock { state in
                guard state.loops != newValue else { return }
                state.loops = newValue
                if newValue, let current = state.items.first {
                    state.items.append(current.copy())
                    prepareUpcoming(&state)
                }
            }
        }
    }

    var droppedFrames: Int { state.withLock { $0.droppedFrames } }

    func setPresentationHandler(_ handler: (@Sendable (PresentationRecord) -> Void)?) {
        // Items are opened as soon as they are queued, so one can fail before a handler is
        // installed; replay those failures so the log never misses an item_failed.
        let earlier: [(Int, PlayerItem)] = state.withLock { state in
            state.presentationHandler = handler
            return state.items.enumerated().filter { $0.element.status == .failed }.map { (state.itemIndex + $0.offset, $0.element) }
        }
        guard let handler else { return }
        for (index, item) in earlier {
            handler(.event(PresentationEvent(
                kind: .itemFailed, itemIndex: index, source: item.url, time: nil, at: clock.now(),
                reason: item.error?.description ?? "unknown error")))
        }
    }

    /// The current item's time now.
    func currentTime() -> MediaTime {
        state.withLock { state in
            if let seek = state.seeks.last { return seek.target }
            return clockTime(&state, at: clock.now())
        }
    }

    /// The master clock's media time at host time `host`.
    private func clockTime(_ state: inout State, at host: MediaTime) -> MediaTime {
        guard state.rate > 0, !state.ended else { return state.pausedTime }
        if let last = state.lastClock {
            let elapsed = max(.zero, host - last.host)
            return last.media + (state.rate == 1 ? elapsed : elapsed.multiplied(by: state.rate))
        }
        return state.pausedTime
    }

    // MARK: Seeking

    func seek(item: PlayerItem, to requested: MediaTime, exact: Bool, completion: (@Sendable (Bool) -> Void)?) -> Bool {
        var target = max(.zero, requested)
        let duration = item.duration
        if duration.isNumeric, target > duration { target = duration }
        var effects: [@Sendable () -> Void] = []
        let handled: Bool = state.withLock { state in
            guard !state.invalidated, let index = state.items.firstIndex(where: { $0 === item }) else { return false }
            guard let pipeline = item.pipeline else { return false }
            let serial = pipeline.seek(to: target, exact: exact)
            if index != 0 {
                item.state.withLock { $0.startTime = target }
                if let completion { effects.append { completion(true) } }
                return true
            }
            for seek in state.seeks { if let completion = seek.completion { effects.append { completion(false) } } }
            state.seeks = [SeekRequest(item: item, serial: serial, target: target, completion: completion)]
            state.needsFirstFrame = true
            state.jumpPending = true
            state.anchor = nil
            state.lastClock = nil
            state.pausedTime = target
            state.handedEnd = nil
            state.ended = false
            state.stalled = false
            state.audioGeneration += 1
            return true
        }
        if handled { audioSink?.flush() }
        feederWake.broadcast()
        effects.forEach { $0() }
        return handled
    }

    func cancelPendingSeeks(item: PlayerItem) {
        let cancelled: [SeekRequest] = state.withLock { state in
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
        state.withLock { state in
            state.nextObserverID += 1
            let token = TimeObserverToken(id: state.nextObserverID)
            let observer = TimeObserver(token: token, kind: kind, queue: queue ?? DispatchQueue(label: "vitrine.observer.\(token.id)"), block: block)
            state.observers.append(observer)
            if let interval = observer.interval {
                state.periodicIndex[token.id] = state.pausedTime.intervalIndex(interval)
            }
            return token
        }
    }

    func removeObserver(_ token: TimeObserverToken) {
        state.withLock { state in
            for observer in state.observers where observer.token == token { observer.remove() }
            state.observers.removeAll { $0.token == token }
            state.periodicIndex[token.id] = nil
        }
    }

    private func firePeriodic(_ state: inout State, time: MediaTime, effects: inout [@Sendable () -> Void]) {
        for observer in state.observers {
            guard let interval = observer.interval else { continue }
            state.periodicIndex[observer.token.id] = time.intervalIndex(interval)
            effects.append { observer.invoke(time) }
        }
    }

    // MARK: VideoFrameSource

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        var effects: [@Sendable () -> Void] = []
        let reading = audioSink?.currentReading()
        let content = state.withLock { state in pick(&state, tick: tick, reading: reading, effects: &effects, depth: 0) }
        effects.forEach { $0() }
        return content
    }

    private func pick(
        _ state: inout State, tick: RefreshTick, reading: AudioClockReading?, effects: inout [@Sendable () -> Void], depth: Int
    ) -> VideoSinkContent? {
        guard !state.invalidated, let item = state.items.first, depth < 8 else { return nil }
        let handler = state.presentationHandler
        let itemIndex = state.itemIndex
        if item.status == .failed {
            let error = item.error ?? MediaError.playback(item.url, "cannot play", .other)
            let events = self.events
            effects.append { events.emit(.failedToPlayToEndTime(item, error)) }
            state.items.removeFirst()
            release([item])
            makeCurrent(&state, effects: &effects)
            prepareUpcoming(&state)
            return pick(&state, tick: tick, reading: reading, effects: &effects, depth: depth + 1)
        }
        guard item.status == .readyToPlay, let pipeline = item.pipeline else { return nil }
        if state.ended { return nil }

        // The master clock at this refresh.
        let feed = state.rate == 1 && pipeline.audioEnabled ? audioFeed(state, for: item) : nil
        var audioClock: MediaTime?
        if let feed, let reading {
            let extrapolated = reading.mediaTime + max(.zero, tick.hostTime - reading.hostTime) - feed.offset
            let drained = pipeline.audioFinished && extrapolated >= feed.end
            if !drained { audioClock = extrapolated }
        }
        var time: MediaTime
        if state.rate > 0 {
            if let audioClock {
                time = audioClock
                state.anchor = (tick.hostTime, audioClock)
            } else {
                if state.anchor == nil {
                    var start = state.pausedTime
                    if state.needsFirstFrame, let first = pipeline.withVideoFrames({ $0.first }) {
                        start = first.presentationTime
                    }
                    state.anchor = (tick.hostTime, start)
                }
                let anchor = state.anchor!
                let elapsed = max(.zero, tick.hostTime - anchor.host)
                time = anchor.media + (state.rate == 1 ? elapsed : elapsed.multiplied(by: state.rate))
            }
            state.lastClock = (tick.hostTime, time)
            state.pausedTime = time
        } else {
            time = state.pausedTime
        }

        // The latest frame whose time has come; earlier ones are dropped, never shown out of order.
        let needsFirst = state.needsFirstFrame
        var dropped = 0
        let chosen: DecodedVideoFrame? = pipeline.withVideoFrames { queue in
            var chosen: DecodedVideoFrame?
            if needsFirst { chosen = queue.popFirst() }
            while let next = queue.first, next.presentationTime <= time, state.rate > 0 || chosen == nil {
                if chosen != nil { dropped += 1 }
                chosen = queue.popFirst()
            }
            return chosen
        }
        state.droppedFrames += dropped
        if let chosen {
            state.needsFirstFrame = false
            state.stalled = false
            state.handedEnd = chosen.end
            if state.rate > 0 && needsFirst && audioClock == nil { state.anchor = (tick.hostTime, chosen.presentationTime) }
            let id = state.nextFrameID
            state.nextFrameID += 1
            state.pending[id] = Pending(
                item: item, itemIndex: itemIndex, presentationTime: chosen.presentationTime, serial: chosen.serial,
                isJump: state.jumpPending, clock: needsFirst && audioClock == nil ? chosen.presentationTime : time,
                audioClock: audioClock)
            state.jumpPending = false
            let subtitle = pipeline.subtitle(at: chosen.presentationTime)
            state.handedSubtitle = subtitle?.start
            return VideoSinkContent(frameID: id, frame: chosen.frame, subtitle: subtitle?.content)
        }
        // The picture stays; the subtitle may still change between frames.
        let subtitle = pipeline.subtitle(at: time)
        if subtitle?.start != state.handedSubtitle, state.handedEnd != nil {
            state.handedSubtitle = subtitle?.start
            let id = state.nextFrameID
            state.nextFrameID += 1
            state.pending[id] = Pending(
                item: item, itemIndex: itemIndex, presentationTime: time, serial: pipeline.serial, isJump: false,
                clock: time, audioClock: audioClock, isFrame: false)
            return VideoSinkContent(frameID: id, frame: nil, subtitle: subtitle?.content)
        }

        guard state.rate > 0 else { return nil }
        // Nothing new: has the item ended, or stalled?
        let videoDone = pipeline.videoFinished
        let hasVideo = item.hasVideo
        let shownEnd = state.handedEnd ?? .zero
        let ended: Bool
        if hasVideo {
            ended = videoDone && (state.handedEnd == nil || time >= shownEnd)
        } else {
            ended = pipeline.audioFinished && feed != nil && (audioClock == nil || time >= feed!.end)
        }
        if ended {
            endItem(&state, item: item, pipeline: pipeline, time: time, tick: tick, effects: &effects)
            if state.ended { return nil }
            return pick(&state, tick: tick, reading: reading, effects: &effects, depth: depth + 1)
        }
        if hasVideo && !videoDone && time >= shownEnd && state.handedEnd != nil && !state.stalled && audioClock == nil {
            // Out of frames: freeze the video clock until the next frame arrives.
            state.stalled = true
            state.needsFirstFrame = true
            state.anchor = nil
            state.pausedTime = shownEnd
            let events = self.events
            effects.append { events.emit(.playbackStalled(item)) }
            if let handler {
                let at = tick.hostTime
                effects.append {
                    handler(.event(PresentationEvent(kind: .stalled, itemIndex: itemIndex, source: item.url, time: shownEnd, at: at, reason: nil)))
                }
            }
        }
        return nil
    }

    private func endItem(
        _ state: inout State, item: PlayerItem, pipeline: ItemPipeline, time: MediaTime, tick: RefreshTick,
        effects: inout [@Sendable () -> Void]
    ) {
        let events = self.events
        let itemIndex = state.itemIndex
        let endTime = state.handedEnd ?? time
        // Reading stopped on an error (not at the end of the input), or a decoder rejected every
        // packet up to the end: what was decoded has been shown, and the item failed to play to
        // its end. A clean end of file — even one FFmpeg reached early in a cut file — is a
        // normal end.
        let failure = pipeline.playbackFailure
        if let failure {
            effects.append { events.emit(.failedToPlayToEndTime(item, failure)) }
        } else {
            effects.append { events.emit(.didPlayToEndTime(item)) }
        }
        // Marks past the last frame (at the end) fire when the item ends.
        let last = state.lastPresented ?? .negativeInfinity
        for observer in state.observers {
            for mark in observer.boundaries where mark > last && mark <= endTime {
                effects.append { observer.invoke(mark) }
                if let handler = state.presentationHandler {
                    let at = tick.hostTime
                    effects.append {
                        handler(.event(PresentationEvent(kind: .boundaryCrossed, itemIndex: itemIndex, source: item.url, time: mark, at: at, reason: nil)))
                    }
                }
            }
        }
        if let handler = state.presentationHandler {
            let at = tick.hostTime
            effects.append {
                handler(.event(PresentationEvent(
                    kind: .itemEnded, itemIndex: itemIndex, source: item.url, time: endTime, at: at, reason: failure?.description)))
            }
        }
        switch state.actionAtItemEnd {
        case .advance:
            state.items.removeFirst()
            release([item])
            makeCurrent(&state, effects: &effects, gapless: true)
            prepareUpcoming(&state)
            if state.items.isEmpty {
                state.ended = true
            }
        case .pause:
            state.ended = true
            state.pausedTime = endTime
            if state.rate != 0 {
                state.rate = 0
                firePeriodic(&state, time: endTime, effects: &effects)
                effects.append { events.emit(.rateChanged(0)) }
                let sink = audioSink
                effects.append { sink?.setPaused(true) }
            }
        case .none:
            state.ended = true
            state.pausedTime = endTime
        }
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {
        var effects: [@Sendable () -> Void] = []
        var records: [PresentationRecord] = []
        let handler: (@Sendable (PresentationRecord) -> Void)? = state.withLock { state in
            guard let presented = state.pending.removeValue(forKey: frameID) else { return nil }
            guard presented.isFrame else { return nil }
            // Content handed out but never presented was replaced: it counts as dropped.
            let skipped = state.pending.filter { $0.key < frameID }
            for key in skipped.keys { state.pending[key] = nil }
            state.droppedFrames += skipped.values.filter(\.isFrame).count
            records.append(.frame(PresentedFrame(
                itemIndex: presented.itemIndex, source: presented.item.url, presentationTime: presented.presentationTime,
                presentedAt: tick.hostTime, refresh: tick.sequence, clock: presented.clock, audioClock: presented.audioClock,
                droppedFrames: state.droppedFrames)))
            guard state.items.first === presented.item, presented.itemIndex == state.itemIndex,
                  presented.serial == presented.item.pipeline?.serial
            else { return state.presentationHandler }
            let time = presented.presentationTime
            let item = presented.item
            // Seeks complete on their first presented frame.
            if let seek = state.seeks.first, seek.item === item, seek.serial <= presented.serial {
                let finished = state.seeks
                state.seeks.removeAll()
                let events = self.events
                for request in finished {
                    if let completion = request.completion { effects.append { completion(true) } }
                    let target = request.target
                    effects.append { events.emit(.seekCompleted(item, target, finished: true)) }
                    records.append(.event(PresentationEvent(
                        kind: .seekDone, itemIndex: presented.itemIndex, source: item.url, time: time, at: tick.hostTime, reason: nil)))
                }
            }
            if state.lastPresented == nil && !presented.isJump {
                records.append(.event(PresentationEvent(
                    kind: .itemReady, itemIndex: presented.itemIndex, source: item.url, time: time, at: tick.hostTime, reason: nil)))
            }
            if presented.isJump {
                firePeriodic(&state, time: time, effects: &effects)
            } else {
                // Boundaries: the first presented frame at or past each mark, in normal playback.
                let last = state.lastPresented ?? .negativeInfinity
                for observer in state.observers {
                    for mark in observer.boundaries where mark > last && mark <= time {
                        effects.append { observer.invoke(mark) }
                        records.append(.event(PresentationEvent(
                            kind: .boundaryCrossed, itemIndex: presented.itemIndex, source: item.url, time: mark, at: tick.hostTime, reason: nil)))
                    }
                }
                if state.rate > 0 {
                    for observer in state.observers {
                        guard let interval = observer.interval else { continue }
                        let index = time.intervalIndex(interval)
                        if index > state.periodicIndex[observer.token.id] ?? .min {
                            state.periodicIndex[observer.token.id] = index
                            effects.append { observer.invoke(time) }
                        }
                    }
                }
            }
            state.lastPresented = time
            return state.presentationHandler
        }
        if let handler { records.forEach(handler) }
        effects.forEach { $0() }
    }

    func didSkipRefresh(_ tick: RefreshTick) {}

    // MARK: PacedFrameSource

    func isWaitingForData() -> Bool {
        state.withLock { state in
            guard !state.invalidated, !state.ended, let item = state.items.first else { return false }
            switch item.status {
            case .failed: return false
            case .unknown: return true
            case .readyToPlay: break
            }
            guard let pipeline = item.pipeline else { return false }
            if state.rate == 0 { return state.needsFirstFrame && pipeline.withVideoFrames({ $0.isEmpty }) && !pipeline.videoFinished }
            if item.hasVideo && !pipeline.videoDecodeFinished {
                let (count, newest) = pipeline.withVideoFrames { ($0.count, $0.last?.presentationTime) }
                if count == 0 { return true }
                // A later frame may be due at the coming refresh: wait for the queue to fill so
                // the pick (the latest frame whose time has come) does not depend on decode speed.
                if count < ItemPipeline.videoFrameCapacity, let anchor = state.anchor, let newest {
                    let elapsed = max(.zero, clock.now() - anchor.host)
                    let due = anchor.media + (state.rate == 1 ? elapsed : elapsed.multiplied(by: state.rate))
                    if newest <= due { return true }
                }
            }
            if state.rate == 1 && pipeline.audioEnabled && !pipeline.audioFinished {
                if audioFeed(state, for: item) == nil { return true }
                if let level = audioSink as? any AudioSinkBufferLevel, level.queuedDuration < MediaTime(value: 1, timescale: 10) {
                    return true
                }
            }
            if item.hasVideo && pipeline.videoFinished, let next = state.items.dropFirst().first(where: { $0.status != .failed }) {
                if next.status == .unknown { return true }
                if let nextPipeline = next.pipeline, next.hasVideo, nextPipeline.withVideoFrames({ $0.isEmpty }), !nextPipeline.videoDecodeFinished {
                    return true
                }
            }
            return false
        }
    }

    // MARK: Audio feeder

    /// Moves decoded audio into the audio sink, in order, on its own thread: the current item's,
    /// then — as soon as it is all out — the next item's, so audio runs on across the seam with
    /// no flush. Off rate 1 the audio is not played (muted; the display clock paces video).
    private func feedAudio() {
        guard let sink = audioSink else { return }
        var fedGeneration = -1
        var feeding: PlayerItem?
        var offset = MediaTime.zero
        var end = MediaTime.zero
        func idle() { feederWake.withLock(waitingUntil: { _ in false }, timeout: .milliseconds(20)) { _ in } }
        while true {
            let snapshot: (items: [PlayerItem], generation: Int, rate: Double)? = state.withLock { state in
                guard !state.invalidated else { return nil }
                return (state.items, state.audioGeneration, state.ended ? 0 : state.rate)
            }
            guard let snapshot else { return }
            if snapshot.generation != fedGeneration {
                sink.flush()
                fedGeneration = snapshot.generation
                // Items whose beginning already went out must play it again when their turn comes.
                let fedAhead: [PlayerItem] = state.withLock { state in
                    defer { state.audioFeeds.removeAll() }
                    return state.audioFeeds.filter { $0.started && $0.item !== state.items.first }.map(\.item)
                }
                for item in fedAhead where snapshot.items.contains(where: { $0 === item }) { item.rewind() }
                feeding = nil
            }
            if feeding == nil || !snapshot.items.contains(where: { $0 === feeding }) {
                // Start after a flush, or go on without a gap when the item being fed has ended.
                guard let first = snapshot.items.first else { feeding = nil; idle(); continue }
                offset = feeding == nil ? .zero : offset + end
                feeding = first
                end = .zero
                register(first, offset: offset, generation: fedGeneration)
            }
            guard let item = feeding, let pipeline = item.pipeline, snapshot.rate > 0, pipeline.audioEnabled else {
                idle()
                continue
            }
            guard let next = pipeline.takeAudio(timeout: .milliseconds(20)) else {
                guard pipeline.audioFinished else { continue }
                // All of this item's audio is out: move on to the next item once it is ready.
                if snapshot.rate == 1, let index = snapshot.items.firstIndex(where: { $0 === item }),
                   let following = snapshot.items[(index + 1)...].first(where: { $0.status != .failed }),
                   following.status == .readyToPlay, following.pipeline?.audioEnabled == true {
                    offset = offset + end
                    end = .zero
                    feeding = following
                    register(following, offset: offset, generation: fedGeneration)
                } else {
                    idle()
                }
                continue
            }
            guard next.serial == pipeline.serial else { continue }
            if snapshot.rate != 1 {
                // Muted off 1.0: drop what the video clock has passed, without outrunning it.
                let now = currentTime()
                if next.buffer.presentationTime > now + MediaTime(value: 1, timescale: 2) { idle() }
                continue
            }
            let stillCurrent = state.withLock { $0.audioGeneration == fedGeneration && !$0.invalidated }
            guard stillCurrent else { continue }
            var shifted = next.buffer
            shifted.presentationTime = next.buffer.presentationTime + offset
            if sink.enqueue(shifted) {
                end = next.buffer.presentationTime + next.buffer.duration
                let fedEnd = end
                state.withLock { state in
                    guard state.audioGeneration == fedGeneration,
                          let index = state.audioFeeds.lastIndex(where: { $0.item === item }) else { return }
                    state.audioFeeds[index].end = fedEnd
                    state.audioFeeds[index].started = true
                }
            }
        }
    }

    /// Notes that `item`'s audio now goes to the sink at `offset` (feeder thread).
    private func register(_ item: PlayerItem, offset: MediaTime, generation: Int) {
        state.withLock { state in
            guard state.audioGeneration == generation else { return }
            state.audioFeeds.append(AudioFeed(item: item, offset: offset, end: .zero, started: false))
            if state.audioFeeds.count > 8 { state.audioFeeds.removeFirst(state.audioFeeds.count - 8) }
        }
    }
}
