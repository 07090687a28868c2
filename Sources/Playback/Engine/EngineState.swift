import MediaSinks
import MediaTime

/// Everything the engine's lock guards, and the events that change it.
///
/// Each event is a `mutating` method that changes the state and returns (or appends to) the
/// ``EngineEffects`` that ``PlayerCore`` performs once the lock is released: nothing here calls
/// out of the engine, starts a thread or blocks. It may read an item's or a pipeline's own state,
/// which takes their locks inside this one; the lock order is engine → item → pipeline, and no
/// item or pipeline calls into the engine while holding its own lock.
struct EngineState {
    /// Where the current item stands.
    enum Phase: Equatable {
        /// The queue is empty.
        case empty
        /// The next frame handed out starts the current item's timeline: it just became current,
        /// or (`jump`) it was sought, which presents its first frame as a jump (periodic
        /// observers fire there, no boundary is crossed).
        case awaitingFirstFrame(jump: Bool)
        /// Frames flow at the clock.
        case playing
        /// Out of frames while playing: the display clock holds until the next frame arrives,
        /// which then starts the timeline again.
        case stalled
        /// The current item (or the whole queue) reached its end.
        case ended

        /// Whether the next frame handed out starts the timeline afresh.
        var needsFirstFrame: Bool {
            switch self {
            case .awaitingFirstFrame, .stalled: true
            case .empty, .playing, .ended: false
            }
        }
    }

    /// Content handed to the video sink and not yet reported presented.
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
        /// The playback clock minus the followed clock at that refresh, when one is followed.
        var syncError: MediaTime?
    }

    struct SeekRequest {
        var item: PlayerItem
        var serial: Int
        var target: MediaTime
        var completion: (@Sendable (Bool) -> Void)?
    }

    // The queue.
    var items: [PlayerItem] = []
    /// The presentation log's index of `items.first` (counts every item that became current).
    var itemIndex = -1
    var phase: Phase = .empty
    var actionAtItemEnd: ActionAtItemEnd = .pause
    var actionAtItemFailure: ActionAtItemFailure = .advance
    var loops = false
    var defaultRate: Double = 1

    // Time.
    var clock = PlaybackClock()
    var observers = ObserverSet()
    var seeks: [SeekRequest] = []

    // What the video sink was given and shown.
    /// The end of the last frame handed out (nil: none of this item yet).
    var handedEnd: MediaTime?
    /// The start of the subtitle last handed to the sink (nil: none shown).
    var handedSubtitle: MediaTime?
    var lastPresented: MediaTime?
    /// The current item's video ran out of decoded frames before its end (whichever clock is the
    /// master); cleared by the next frame.
    var videoStarved = false
    /// The current item failed and is held (``ActionAtItemFailure/hold``).
    var holdingFailure = false
    var pending: [UInt64: Pending] = [:]
    var nextFrameID: UInt64 = 1
    var droppedFrames = 0
    /// The video sink (attachable while the player lives) and its layer (VideoOutput.swift).
    var output = VideoOutput()
    /// Whether the display clock holds while the video is out of frames (``Player/automaticallyWaitsToMinimizeStalling``).
    var waitsToMinimizeStalling = true
    var announcedTimeControlStatus: TimeControlStatus = .paused

    // The audio feeder's ledger and wake-ups.
    var audio = AudioFeedLedger()
    /// Whether the sound is the master clock yet (after each restart it joins the picture).
    var audioJoin = AudioJoin()

    // Following a clock (docs/playback-engine.md, "Following a clock").
    var sourceClock: PlaybackSourceClock = .audioOutput
    /// The wall-clock time of a host time (the player's ``HostClock``), before any offset.
    var wallClockTime: @Sendable (MediaTime) -> MediaTime = { $0 }
    /// Where the current item's timeline is pinned, when it is.
    var pin: ClockPin?
    /// The next first frame starts the timeline on ``pin`` rather than where it happens to be
    /// decoded: a start that is not a gapless seam, a seek the follower asked for, a timed start.
    var snapsToPin = false
    var follower = ClockFollower()
    /// The follower's seek is under way: host time it was asked at (no second one meanwhile).
    var syncSeekSince: MediaTime?
    /// How long a seek takes to show its first frame (the follower seeks that far ahead).
    var seekLatency = SeekLatencyEstimate()
    /// The adjustment handed to the current item's audio (resampling), to hand it on only changes.
    var audioCompensation: Double = 0
    /// ``Player/preroll(atRate:completionHandler:)`` calls waiting for the current item.
    var prerolls: [(item: PlayerItem, completion: @Sendable (Bool) -> Void)] = []

    // The player.
    var invalidated = false
    var playerStatus: Player.Status = .unknown
    var playerError: MediaError?
    var presentationHandler: (@Sendable (PresentationRecord) -> Void)?

    var rate: Double { clock.rate }
    var isEnded: Bool { phase == .ended }

    var timeControlStatus: TimeControlStatus {
        guard clock.rate != 0, !invalidated, playerStatus != .failed else { return .paused }
        guard let item = items.first else { return .waitingToPlayAtSpecifiedRate(.noItemToPlay) }
        switch item.status {
        case .failed: return .waitingToPlayAtSpecifiedRate(holdingFailure ? .itemFailed : .toMinimizeStalls)
        case .unknown: return .waitingToPlayAtSpecifiedRate(.toMinimizeStalls)
        case .readyToPlay: break
        }
        if holdingFailure { return .waitingToPlayAtSpecifiedRate(.itemFailed) }
        if phase == .ended { return .playing }
        if !seeks.isEmpty || (videoStarved && waitsToMinimizeStalling) || (phase.needsFirstFrame && item.hasVideo) {
            return .waitingToPlayAtSpecifiedRate(.toMinimizeStalls)
        }
        return .playing
    }

    /// New effects carrying the presentation log's current handler.
    func effects() -> EngineEffects { EngineEffects(handler: presentationHandler) }

    /// The clock's media time at `host` (a pending seek's target while it is under way).
    func currentTime(at host: MediaTime) -> MediaTime {
        if let seek = seeks.last { return seek.target }
        return clock.time(at: host, ended: isEnded)
    }

    // MARK: Queue events

    /// `items.first` became current (or the queue emptied): a fresh timeline; audio restarts
    /// unless this is a `gapless` natural advance (the feeder may already be on the new item).
    mutating func becomeCurrent(gapless: Bool = false, into effects: inout EngineEffects) {
        let current = items.first
        let previousTime = handedEnd ?? clock.heldTime
        let startTime = current?.state.withLock { $0.startTime } ?? .zero
        itemIndex += 1
        observers.forgetIntervals()
        clock.jump(to: startTime)
        phase = current == nil ? .empty : .awaitingFirstFrame(jump: false)
        handedEnd = nil
        lastPresented = nil
        videoStarved = false
        holdingFailure = false
        if !gapless { restartAudio() }
        pinCurrentItem(current, startTime: startTime, previousEnd: gapless ? previousTime : nil)
        cancelPrerolls(except: current, into: &effects)
        for seek in seeks { if let completion = seek.completion { effects.actions.append(.complete(completion, finished: false)) } }
        seeks.removeAll()
        if let current {
            effects.actions.append(.prepare(current))
            // Looping: the copy is queued as soon as its original starts, so it is prepared
            // (decoded, first frame ready) before the original ends, even in a queue of one.
            if loops { items.append(current.copy()) }
        }
        effects.emit(.currentItemChanged(current))
        if current == nil && clock.rate != 0 {
            clock.setRate(0, at: .zero, ended: true)
            observers.jumped(to: previousTime, into: &effects)
            effects.emit(.rateChanged(0))
        }
        effects.actions.append(.wakeFeeder)
    }

    /// Opens the current item and the first one after it that has not failed, so it is decoded
    /// and ready before the current one ends.
    func prepareUpcoming(into effects: inout EngineEffects) {
        guard let current = items.first else { return }
        if current.status != .failed { effects.actions.append(.prepare(current)) }
        if let next = items.dropFirst().first(where: { $0.status != .failed }) { effects.actions.append(.prepare(next)) }
    }

    /// Replaces the queue; the items no longer in it are released.
    mutating func replaceItems(with newItems: [PlayerItem], into effects: inout EngineEffects) {
        let oldCurrent = items.first
        for item in items where !newItems.contains(where: { $0 === item }) { effects.actions.append(.release(item)) }
        items = newItems
        if items.first !== oldCurrent { becomeCurrent(into: &effects) }
        prepareUpcoming(into: &effects)
    }

    /// Queues `item` after `after` (at the end when nil); false when it cannot be.
    mutating func insert(_ item: PlayerItem, after: PlayerItem?, into effects: inout EngineEffects) -> Bool {
        guard canInsert(item, after: after) else { return false }
        if let after, let index = items.firstIndex(where: { $0 === after }) {
            items.insert(item, at: index + 1)
        } else {
            items.append(item)
        }
        if items.count == 1 { becomeCurrent(into: &effects) }
        prepareUpcoming(into: &effects)
        return true
    }

    func canInsert(_ item: PlayerItem, after: PlayerItem?) -> Bool {
        guard !invalidated, !items.contains(where: { $0 === item }), item.status != .failed else { return false }
        if let after { return items.contains { $0 === after } }
        return true
    }

    /// Takes `item` out of the queue; false when it was not queued.
    mutating func remove(_ item: PlayerItem, into effects: inout EngineEffects) -> Bool {
        guard let index = items.firstIndex(where: { $0 === item }) else { return false }
        items.remove(at: index)
        effects.actions.append(.release(item))
        if index == 0 { becomeCurrent(into: &effects) }
        prepareUpcoming(into: &effects)
        return true
    }

    /// Looping turned on: the current item's copy is queued behind it.
    mutating func setLoops(_ loops: Bool, into effects: inout EngineEffects) {
        guard self.loops != loops else { return }
        self.loops = loops
        if loops, let current = items.first {
            items.append(current.copy())
            prepareUpcoming(into: &effects)
        }
    }

    // MARK: Rate, seeks, failures

    /// The rate changes at host time `now` (clamped by the caller); false when it cannot.
    mutating func setRate(_ rate: Double, at now: MediaTime, into effects: inout EngineEffects) -> Bool {
        // A failed player stays stopped (like AVPlayer, it must be replaced).
        guard !invalidated, clock.rate != rate, playerStatus != .failed else { return false }
        // Audio plays only at rate 1: entering or leaving it restarts the audio stream.
        if (clock.rate == 1) != (rate == 1) { restartAudio() }
        // A running pinned timeline changing speed goes on from where it stands now. A pin set
        // while paused says when to start, and one left by a pause is where the timeline is due
        // again: starting or stopping keeps it (a player following the wall clock catches up).
        if clock.rate > 0 && rate > 0 { pin = pin?.rebased(atHost: now, wall: wallTime(at: now), rate: clock.rate) }
        let time = clock.setRate(rate, at: now, ended: isEnded)
        observers.jumped(to: time, into: &effects)
        effects.emit(.rateChanged(rate))
        effects.actions.append(.pauseAudio(rate == 0))
        effects.actions.append(.wakeFeeder)
        return true
    }

    /// A seek of the queued `item` to `target` started in its pipeline under `serial`; `pinned`:
    /// the timeline it starts is pinned there (a timed start, or the follower's seek).
    mutating func seekStarted(
        _ item: PlayerItem, serial: Int, target: MediaTime, pinned: ClockPin? = nil, completion: (@Sendable (Bool) -> Void)?,
        into effects: inout EngineEffects
    ) {
        guard items.first === item else {
            // A later item starts there when its turn comes.
            item.state.withLock { $0.startTime = target }
            if let completion { effects.actions.append(.complete(completion, finished: true)) }
            return
        }
        effects.actions.append(.flushAudio)
        for seek in seeks { if let completion = seek.completion { effects.actions.append(.complete(completion, finished: false)) } }
        seeks = [SeekRequest(item: item, serial: serial, target: target, completion: completion)]
        phase = .awaitingFirstFrame(jump: true)
        clock.jump(to: target)
        clock.clearTrim()
        handedEnd = nil
        videoStarved = false
        restartAudio()
        follower.reset()
        if let pinned {
            // A timed start, or the follower's seek back onto the pinned timeline.
            pin = pinned
            snapsToPin = true
        } else {
            // A seek of the player's own: the timeline starts afresh where it lands.
            pin = nil
            snapsToPin = false
            syncSeekSince = nil
        }
        effects.actions.append(.wakeFeeder)
    }

    /// Changes the clock the player follows. Another offset of the wall clock keeps the pins
    /// (they are wall-clock instants): the follower sees the step and corrects it. Any other
    /// change starts the timeline afresh at the next first frame.
    mutating func setSourceClock(_ new: PlaybackSourceClock, at now: MediaTime) {
        let old = sourceClock
        sourceClock = new
        if case .wallClock = old, case .wallClock = new { return }
        guard old != new else { return }
        pin = nil
        snapsToPin = false
        syncSeekSince = nil
        follower.forget()
        clock.setTrim(0, at: now)
        if case .wallClock = new, let own = items.first?.wallClockPin {
            // The current item's own pin applies from now (its next first frame starts on it;
            // one already shown is followed, or sought, onto it).
            pin = .wall(time: own.time, wall: own.wallClockTime)
            snapsToPin = phase.needsFirstFrame
        }
    }

    /// Starts the current timeline on `pin`, due at host time `host` (paused until then): a timed
    /// start without a seek (``Player/setRate(_:time:atHostTime:)`` from a pause).
    mutating func startAt(_ pin: ClockPin, host: MediaTime) {
        self.pin = pin
        snapsToPin = true
        follower.reset()
        clock.start(at: host, media: pin.time)
    }

    /// Completes the current item's prerolls that are ready now (or fails them: no item, failed).
    mutating func checkPrerollsNow(into effects: inout EngineEffects) {
        guard !prerolls.isEmpty else { return }
        guard let item = items.first, item.status != .failed else {
            cancelPrerolls(except: nil, into: &effects)
            return
        }
        guard item.status == .readyToPlay, let pipeline = item.pipeline else { return }
        checkPrerolls(item, pipeline: pipeline, into: &effects)
    }

    /// The sound restarts (flushed): it must join the picture again.
    mutating func restartAudio() {
        audio.restart()
        audioJoin.restart()
    }

    /// The wall-clock time of `host` when the source clock is the wall clock (its offset added).
    func wallTime(at host: MediaTime) -> MediaTime? {
        guard case .wallClock(let offset) = sourceClock else { return nil }
        return wallClockTime(host) + offset
    }

    /// The pin of the item that just became current: its own wall-clock pin, else (at a gapless
    /// seam) the last item's timeline going on. Its first frame starts the timeline on the pin,
    /// at a seam too: a seam's instant falls between refreshes, and a clock anchored on the
    /// refresh its first frame shows at would run up to a refresh behind the pin.
    mutating func pinCurrentItem(_ item: PlayerItem?, startTime: MediaTime, previousEnd: MediaTime?) {
        let previous = pin
        pin = nil
        syncSeekSince = nil
        follower.reset()
        clock.clearTrim()
        audioCompensation = 0
        guard let item else { return }
        switch sourceClock {
        case .wallClock:
            if let own = item.wallClockPin {
                pin = .wall(time: own.time, wall: own.wallClockTime)
            } else if let previous, let previousEnd {
                pin = previous.continued(at: previousEnd, with: startTime, rate: max(clock.rate, 1))
            }
        case .display:
            if let previous, let previousEnd { pin = previous.continued(at: previousEnd, with: startTime, rate: max(clock.rate, 1)) }
        case .audioOutput:
            break
        }
        snapsToPin = pin != nil
    }

    /// An output can no longer work: the player fails for good and stops.
    mutating func outputFailed(_ error: MediaError, at now: MediaTime, into effects: inout EngineEffects) -> Bool {
        guard !invalidated, playerStatus != .failed else { return false }
        playerStatus = .failed
        playerError = error
        effects.emit(.playerStatusChanged(.failed))
        if clock.rate != 0 {
            let time = clock.setRate(0, at: now, ended: isEnded)
            restartAudio()
            observers.jumped(to: time, into: &effects)
            effects.emit(.rateChanged(0))
        }
        effects.actions.append(.pauseAudio(true))
        effects.actions.append(.wakeFeeder)
        return true
    }

    /// The index `item` has (or will have) in the presentation log, while it is queued.
    func logIndex(of item: PlayerItem) -> Int? {
        items.firstIndex { $0 === item }.map { itemIndex + $0 }
    }
}
