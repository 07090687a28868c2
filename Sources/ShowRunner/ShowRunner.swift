public import Displays
import Threading
import Dispatch
public import Logging
public import MediaTime
public import Playback
public import Scheduling
public import MediaSinks

/// Plays a schedule: resolves the programme at the show clock's instant, feeds a ``QueuePlayer`` with
/// what plays now and next (trims, repeats, still images, volume, mute, gravity), puts each item's
/// overlays on screen from the first frame at or after their cue and removes them after their duration,
/// re-resolves at every change point, and follows the schedule file as it changes.
///
/// Programme changes:
/// - An item ends: the next one, resolved for the instant the current one ends, is already queued and
///   prepared, so the seam is gapless.
/// - The winning entry changes (an interrupt starts, a window opens or closes): the queue is rebuilt at
///   once from what the resolver says for now (the last frame stays until the new first frame).
/// - The schedule file changes: it is validated; if valid it takes effect at the next item boundary (an
///   interrupt active now takes effect at once); if not, its errors are logged (`schedule-rejected`) and
///   the current schedule keeps playing.
///
/// All of the controller's decisions run on one serial queue.
public final class ShowRunner: @unchecked Sendable {
    /// How the show runs.
    public struct Configuration: Sendable {
        /// The wall clock the programme is resolved on.
        public var clock: ShowClock
        /// Re-resolve on a timer (every 40 ms). Tests turn it off and call ``tick()`` themselves.
        public var automaticTicks: Bool
        /// Watch the schedule file for changes (inotify).
        public var watchesFile: Bool
        /// Overrides the schedule's gravity (the command line's `--gravity`).
        public var gravity: VideoGravity?
        /// A supervised item whose first frame has not come after this long is reported stalled
        /// (opening a network stream or a file on a slow disk may take seconds; a source that never
        /// sends does not end on its own). 20 s: longer than the pipeline's own limits (15 s to
        /// open, 10 s for a silent connection), so a stream that sends a little and stops is
        /// probed with what it sent and shows it, rather than racing the pipeline's timeout.
        public var firstFrameTimeout: MediaTime
        /// A supervised item whose video ran out of frames before its end is reported stalled
        /// after this long without a new one. A still picture, a paused show and the last frame held
        /// to the item's end are not stalls.
        public var stallTimeout: MediaTime

        public init(clock: ShowClock = .system(), automaticTicks: Bool = true, watchesFile: Bool = true, gravity: VideoGravity? = nil,
                    firstFrameTimeout: MediaTime = MediaTime(value: 20, timescale: 1),
                    stallTimeout: MediaTime = MediaTime(value: 5, timescale: 1)) {
            self.clock = clock
            self.automaticTicks = automaticTicks
            self.watchesFile = watchesFile
            self.gravity = gravity
            self.firstFrameTimeout = firstFrameTimeout
            self.stallTimeout = stallTimeout
        }
    }

    /// Where one queued engine item sits in the programme.
    struct Placement {
        var entryKey: String
        /// The entry's name, or "fallback".
        var entryName: String
        var start: UTCInstant
        var end: UTCInstant?
        /// The playlist item it plays.
        var programmeItem: ProgrammeItem
        var isStill: Bool
    }

    /// While the supervisor decides what to do about a failed or stalled item.
    enum Hold {
        case none
        /// The item is current and held (the last picture stays); the supervisor was told.
        case deciding(PlayerItem, Placement)
        /// The queue is empty (the last picture stays); at host time `at` the programme is
        /// resolved again and what it says plays alone until it presents.
        case waitingToRetry(Placement, at: MediaTime)
    }

    /// The fallback playlist playing in place of an entry whose items keep failing.
    struct FallbackRun {
        /// The entry it stands in for: when another wins, the programme takes over again.
        var entryKey: String
        var playlist: String
        var next: Int
    }

    /// What the show watches of the current item to see it play or stall.
    struct ProgressWatch {
        var item: ObjectIdentifier
        var played = false
        var waitingSince: MediaTime?
    }

    /// The engine playing the show.
    ///
    /// The supervisor may build it again (``rebuildPipeline(reason:)``): read it afresh each time.
    public var player: QueuePlayer { engine.withLock { $0 } }
    /// The player: replaced on the show's queue by ``rebuildPipeline(reason:)``, read from any
    /// thread (the CLI's services, the supervision task), so behind a lock.
    private let engine: LockedValue<QueuePlayer>
    private let audioSink: (any AudioSink)?
    let gate: CueGate
    let display: any Display
    let log: ShowLog
    let configuration: Configuration
    let logger: Logger
    let hasSound: Bool
    let hostClock: any HostClock
    let queue = DispatchQueue(label: "vitrine.show")
    // Confined to `queue`.
    var schedule: Schedule
    var resolver: ScheduleResolver
    /// A layout's zones other than the sound zone, each with its own player and layer.
    let zones: ZonePlayers
    var placements: [ObjectIdentifier: Placement] = [:]
    var tailEnd: UTCInstant?
    /// After a reload, the item that plays until the next boundary (no cut while it is current).
    var holdUntilBoundary: ObjectIdentifier?
    private var timer: (any DispatchSourceTimer)?
    private var watcher: FileWatcher?
    var stopped = false
    var started = false
    /// The wall clock and the host clock at the last tick: a jump between them is a clock step.
    private var lastTick: (wall: UTCInstant, host: MediaTime)?
    // Supervision (confined to `queue`); inactive until ``supervisionReports()`` is called.
    var reports: AsyncStream<ShowReport>.Continuation?
    var hold = Hold.none
    /// A retried item queued alone: nothing is queued behind it until it presents.
    var probation: ObjectIdentifier?
    var fallbackRun: FallbackRun?
    var watch: ProgressWatch?
    private var eventTask: Task<Void, Never>?

    /// A show of `schedule` (validated, with media lengths: see ``ScheduleLoader``) on `display`.
    ///
    /// - Parameters:
    ///   - audioSink: the soundtrack (each item's volume is applied to it), or `nil` for silence.
    ///   - hostClock: the engine's clock (a ``ManualClock`` in tests, with a manually paced display).
    public init(schedule: Schedule, display: any Display, audioSink: (any AudioSink)?, log: ShowLog,
                configuration: Configuration = Configuration(), hostClock: any HostClock = MonotonicClock(),
                logger: Logger = Logger(label: "vitrine.show")) {
        self.schedule = schedule
        self.resolver = ScheduleResolver(schedule: schedule)
        self.display = display
        self.log = log
        self.configuration = configuration
        self.logger = logger
        hasSound = audioSink != nil
        self.hostClock = hostClock
        zones = ZonePlayers(display: display, hostClock: hostClock, log: log, logger: logger)
        let gate = CueGate(display: display, log: log) { plan in audioSink?.setVolume(plan.volume) }
        self.gate = gate
        self.audioSink = audioSink
        let player = QueuePlayer(items: [], videoSink: gate, audioSink: audioSink, clock: hostClock)
        player.sourceClock = .wallClock(offset: configuration.clock.offset(fromWallClockOf: hostClock))
        engine = LockedValue(player)
        gate.attach(player)
        player.setPresentationHandler { record in log.record(record) }
    }

    deinit {
        // No other reference exists now, so the queue's state can be read directly (a `queue.sync` here
        // could run on the queue itself when the last reference went away inside a timer callback).
        timer?.cancel()
        watcher?.stop()
        eventTask?.cancel()
        reports?.finish()
        zones.stop()
        player.invalidate()
    }

    /// Resolves the programme for now, queues it and starts playing (and watching the file).
    public func start() {
        queue.sync {
            started = true
            logLoaded()
            let now = configuration.clock.now()
            rebuild(at: now)
            updateZones(now: now, winner: resolver.winner(at: now))
        }
        player.play()
        if configuration.automaticTicks {
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(40), repeating: .milliseconds(40))
            timer.setEventHandler { [weak self] in self?.step() }
            timer.resume()
            queue.sync { self.timer = timer }
        }
        if configuration.watchesFile, !schedule.sourcePath.isEmpty {
            let path = schedule.sourcePath
            let watcher = FileWatcher(path: path) { [weak self] in self?.fileChanged() }
            if watcher == nil { logger.warning("cannot watch \(path) for changes (inotify)") }
            queue.sync { self.watcher = watcher }
        }
    }

    /// Stops the show: the timer, the file watcher and the engine.
    public func stop() {
        let (timer, watcher, events): ((any DispatchSourceTimer)?, FileWatcher?, Task<Void, Never>?) = queue.sync {
            defer {
                self.timer = nil
                self.watcher = nil
                eventTask = nil
                reports?.finish()
                reports = nil
                stopped = true
            }
            return (self.timer, self.watcher, eventTask)
        }
        timer?.cancel()
        watcher?.stop()
        events?.cancel()
        queue.sync { zones.stop() }
        player.invalidate()
    }

    /// Puts the show under a supervisor (call before ``start()``): from now on a failed or stalled
    /// item is held — the last good picture stays, its overlays go — and reported on the returned
    /// stream, and the show waits for ``retry(attempt:after:)``, ``skip()`` or
    /// ``playFallback(reason:)``. Unsupervised, a failed item is skipped at once.
    public func supervisionReports() -> AsyncStream<ShowReport> {
        let (stream, continuation) = AsyncStream.makeStream(of: ShowReport.self)
        queue.sync {
            reports = continuation
            superviseEngine()
        }
        return stream
    }

    /// Holds the engine's failed items and follows its failures (on the queue).
    private func superviseEngine() {
        let player = self.player
        player.actionAtItemFailure = .hold
        let events = player.events
        eventTask?.cancel()
        eventTask = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .failedToPlayToEndTime(let item, let error):
                    self.queue.async { self.itemFailed(item, reason: error.description) }
                case .playerStatusChanged(.failed):
                    let reason = player.error?.description ?? "the player's output failed"
                    self.queue.async { if self.player === player { self.report(.outputFailed(reason: reason)) } }
                default: break
                }
            }
        }
    }

    /// Builds the engine again inside the process — a new player with its threads, on the same
    /// display and sound output — and plays the programme for now on it. Logs `pipeline-rebuilt`.
    public func rebuildPipeline(reason: String) {
        queue.sync {
            guard !stopped else { return }
            let old = player
            old.invalidate()
            let new = QueuePlayer(items: [], videoSink: gate, audioSink: audioSink, clock: hostClock)
            new.sourceClock = .wallClock(offset: configuration.clock.offset(fromWallClockOf: hostClock))
            engine.withLock { $0 = new }
            gate.attach(new)
            new.setPresentationHandler { [log] record in log.record(record) }
            if reports != nil { superviseEngine() }
            placements = [:]
            watch = nil
            rebuild(at: configuration.clock.now())
            new.play()
            log.event(.pipelineRebuilt, time: nil, at: MonotonicClock().now(), reason: reason)
            logger.error("the playback pipeline was rebuilt: \(reason)")
        }
    }

    /// Re-resolves now: cuts over when the winning entry changed, tops the queue up. The timer calls it
    /// every 40 ms; tests call it between refreshes.
    public func tick() { queue.sync { step() } }

    /// The show clock's instant now.
    public func currentScheduleNow() -> UTCInstant? { configuration.clock.now() }

    /// The schedule playing now.
    public var currentSchedule: Schedule { queue.sync { schedule } }

    /// The name of the entry the current item belongs to ("fallback" for the fallback playlist),
    /// or nil when nothing is queued.
    public var currentEntryName: String? { queue.sync { currentEntryNameOnQueue } }

    var currentEntryNameOnQueue: String? {
        player.currentItem.flatMap { placements[ObjectIdentifier($0)]?.entryName }
    }

    /// Reads, validates and (if valid) adopts the schedule file now, as a file change does. Returns
    /// whether it was adopted.
    @discardableResult
    public func reload() async -> Bool {
        let path = queue.sync { schedule.sourcePath }
        let outcome = await ScheduleLoader.load(path: path)
        return queue.sync { adopt(outcome, path: path) }
    }

    /// Plays the schedule at `path` from now on (a bundle import switched the `current` link):
    /// it is read, validated and adopted like a changed schedule file — at the next item boundary,
    /// an interrupt active now at once; an invalid one is rejected and the show goes on — and
    /// that file is watched from then on. Returns whether it was adopted.
    @discardableResult
    public func switchSchedule(to path: String) async -> Bool {
        let outcome = await ScheduleLoader.load(path: path)
        let adopted = queue.sync { adopt(outcome, path: path) }
        guard adopted, configuration.watchesFile else { return adopted }
        let replacement = FileWatcher(path: path) { [weak self] in self?.fileChanged() }
        let (old, kept): (FileWatcher?, Bool) = queue.sync {
            guard !stopped else { return (nil, false) }
            defer { watcher = replacement }
            return (watcher, true)
        }
        old?.stop()
        if !kept { replacement?.stop() }
        return adopted
    }

    // MARK: On the queue

    private func fileChanged() {
        Task { [weak self] in await self?.reload() }
    }

    private func adopt(_ outcome: ScheduleLoader.Outcome, path: String) -> Bool {
        guard !stopped else { return false }
        let at = MonotonicClock().now()
        switch outcome {
        case .rejected(let diagnostics, _):
            let text = diagnostics.map(\.description).joined(separator: "; ")
            logger.error("schedule \(path) rejected; the current schedule keeps playing: \(text)")
            log.event(.scheduleRejected, time: nil, at: at, detail: path, reason: text.isEmpty ? "unreadable" : text)
            return false
        case .loaded(let new):
            schedule = new
            resolver = ScheduleResolver(schedule: new)
            logLoaded()
            let now = configuration.clock.now()
            let winner = resolver.winner(at: now)
            let current = player.currentItem.flatMap { placements[ObjectIdentifier($0)] }
            if winner?.entry.isInterrupt == true, current?.entryKey != key(winner) {
                rebuild(at: now)  // an interrupt takes effect at once
                report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
            } else if case .none = hold, fallbackRun == nil {
                // The next item boundary: keep the current item, replace what follows it.
                for item in player.items().dropFirst() { player.remove(item) }
                holdUntilBoundary = player.currentItem.map(ObjectIdentifier.init)
                tailEnd = current?.end ?? now
                topUp()
            } else {
                // Held, retrying or on the fallback: the new schedule's programme takes over now.
                rebuild(at: now)
                report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
            }
            return true
        }
    }

    private func logLoaded() {
        logger.info("schedule \(schedule.sourcePath) in effect")
        log.event(.scheduleLoaded, time: nil, at: MonotonicClock().now(), detail: schedule.sourcePath)
    }

    private func step() {
        guard !stopped else { return }
        let now = configuration.clock.now()
        let winner = resolver.winner(at: now)
        defer {
            keepPlaying()
            updateZones(now: now, winner: winner)
        }
        let queued = player.items()
        gate.retainPlans(for: queued)
        let ids = Set(queued.map(ObjectIdentifier.init))
        placements = placements.filter { ids.contains($0.key) || isHeld($0.value) }
        followWallClock()
        if clockStepped(now: now) { return }
        let wanted = key(winner)
        if reports != nil, supervisedStep(wanted: wanted, now: now) { return }
        let current = queued.first.map(ObjectIdentifier.init)
        if current != holdUntilBoundary { holdUntilBoundary = nil }
        if holdUntilBoundary == nil, let current, placements[current]?.entryKey != wanted {
            // The winning entry changed. At an item boundary that has come (the current item's own end is
            // now or past, and the next item already belongs to the new entry) the engine switches by
            // itself: nothing needs doing. Otherwise the change falls inside the current item: cut over
            // now — also when the new entry's item is queued behind it already (it was resolved for
            // where the current item would end: waiting for that would start an interrupt late, and
            // part-way in).
            let next = queued.dropFirst().first.flatMap { placements[ObjectIdentifier($0)] }
            let ended = placements[current]?.end.map { $0 <= now } ?? false
            let imminent = ended && (next.map { $0.entryKey == wanted && $0.start <= now.advanced(by: MediaTime(value: 1, timescale: 1))! } ?? false)
            if !imminent {
                rebuild(at: now)
                report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
            }
        } else if current == nil, tailEnd == nil || tailEnd! <= now {
            rebuild(at: now)
        }
        topUp()
    }

    /// Keeps the player on the show's wall clock: its offset from the host's wall clock changes
    /// when the show's clock is stepped (`--clock-step`, a test's shift) or, for a chosen start
    /// (`--start-at`), as the host's wall clock slews. The player's pins are wall-clock instants,
    /// so it sees the change as an error and eases it out, or seeks.
    private func followWallClock() {
        let offset = configuration.clock.offset(fromWallClockOf: hostClock)
        let player = self.player
        guard case .wallClock(let current) = player.sourceClock else { return }
        let difference = offset - current
        if difference > MediaTime(value: 1, timescale: 10_000) || difference < MediaTime(value: -1, timescale: 10_000) {
            player.sourceClock = .wallClock(offset: offset)
            zones.follow(offset: offset)
        }
    }

    /// Starts, ends and tops up a layout's other zones (the show's player plays its sound zone):
    /// while `winner`, the entry winning at `now`, names a layout and the show is not standing in
    /// for it with the fallback playlist.
    private func updateZones(now: UTCInstant, winner: (entry: Entry, occurrence: Occurrence)?) {
        guard !stopped else { return }
        let isLayout = winner?.entry.content.layoutName != nil && fallbackRun == nil
        zones.update(key: key(winner), isLayout: isLayout, now: now, offset: configuration.clock.offset(fromWallClockOf: hostClock),
                     resolve: { resolver.resolve(at: $0) }, makeItem: { state, zone in
                         placedItem(state).map { (item: $0.item, end: $0.placement.end, plan: plan(for: $0.media, placement: $0.placement, zone: zone)) }
                     })
    }

    /// Whether the wall clock jumped (an NTP step, the date set by hand) by more than a second
    /// against the host clock since the last tick (`clock-step`). When the programme at the new
    /// now still plays the current item, the player follows the step by seeking within it (it
    /// follows the wall clock: `sync-seek`) and the queue stays; otherwise every position the
    /// queue was built on is wrong, and the programme is resolved again for the new now.
    private func clockStepped(now: UTCInstant) -> Bool {
        let host = hostClock.now()
        defer { lastTick = (now, host) }
        guard let last = lastTick else { return false }
        let drift = now.since(last.wall) - (host - last.host)
        guard drift > MediaTime(value: 1, timescale: 1) || drift < MediaTime(value: -1, timescale: 1) else { return false }
        log.event(.clockStepped, time: nil, at: MonotonicClock().now(), detail: "\(now)", delay: drift)
        if stillPlaysCurrentItem(at: now) {
            logger.warning("the wall clock stepped by \(MediaTime.format(seconds: drift.seconds, decimals: 3)) s: the player seeks to the programme's position")
            return false
        }
        logger.warning("the wall clock stepped by \(MediaTime.format(seconds: drift.seconds, decimals: 3)) s: resolving the programme again")
        rebuild(at: now)
        report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
        return true
    }

    /// Whether the programme at `instant` plays the current item's placement (same entry, same
    /// playlist item, same start), part-way in.
    private func stillPlaysCurrentItem(at instant: UTCInstant) -> Bool {
        guard case .none = hold, fallbackRun == nil, let current = player.currentItem,
              let placement = placements[ObjectIdentifier(current)] else { return false }
        let state = programme(at: instant)
        return key(state.entry.flatMap { entry in state.occurrence.map { (entry, $0) } }) == placement.entryKey
            && state.playlistName == placement.programmeItem.playlist && state.itemIndex == placement.programmeItem.index
            && (state.itemStart ?? state.instant) == placement.start && (placement.end.map { instant < $0 } ?? true)
    }

    /// The engine stops (rate 0) when its queue runs empty, as AVQueuePlayer does: a show that
    /// queues items again after a gap, a retry or a skip plays them.
    func keepPlaying() {
        guard started, !stopped, player.rate == 0, !player.items().isEmpty else { return }
        player.play()
    }

    /// Replaces the whole queue with what plays at `instant` and what follows it; `alone`: only
    /// what plays then (a retry), on probation until it presents.
    func rebuild(at instant: UTCInstant, alone: Bool = false) {
        let state = programme(at: instant)
        holdUntilBoundary = nil
        hold = .none
        probation = nil
        fallbackRun = nil
        if let made = makeItem(state) {
            player.replaceCurrentItem(with: made)
            gate.soundSettingsTakeEffect(for: made)
            tailEnd = placements[ObjectIdentifier(made)]?.end
            if alone { probation = ObjectIdentifier(made) }
        } else {
            player.removeAllItems()
            // Nothing plays until the next change; with none in the resolver's (century-long)
            // horizon, look again in a day rather than searching it again at every tick.
            tailEnd = state.nextChange ?? instant.advanced(by: MediaTime(value: 86_400, timescale: 1))
        }
        topUp()
    }

    /// Keeps three items queued: the current one and two prepared behind it.
    func topUp() {
        // A retried item plays alone until it presents; a held item has nothing queued after it.
        guard probation == nil else { return }
        if case .none = hold {} else { return }
        if fallbackRun != nil { return topUpFallback() }
        var guardCount = 0
        while player.items().count < 3, let tail = tailEnd, guardCount < 8 {
            guardCount += 1
            let state = programme(at: tail)
            guard let made = makeItem(state) else {
                tailEnd = state.nextChange.flatMap { $0 > tail ? $0 : nil }
                break
            }
            player.insert(made, after: nil)
            guard let end = placements[ObjectIdentifier(made)]?.end, end > tail else {
                tailEnd = nil
                break
            }
            tailEnd = end
        }
    }

    func key(_ winner: (entry: Entry, occurrence: Occurrence)?) -> String {
        guard let winner else { return "fallback" }
        return "\(winner.entry.name)@\(winner.occurrence.start.nanosecondsSinceEpoch)"
    }

    /// What this show's player plays at `instant`: in a layout's window its sound zone's playlist
    /// (else its first zone's), in the display's root layer moved to that zone; ``ZonePlayers``
    /// play the other zones.
    func programme(at instant: UTCInstant) -> ProgrammeState {
        let state = resolver.resolve(at: instant)
        guard state.playlistName == nil, let zone = state.zones.first(where: \.playsSound) ?? state.zones.first else { return state }
        return zone.state
    }

    /// The engine item for the programme state, registered with its plan and placement.
    private func makeItem(_ state: ProgrammeState) -> PlayerItem? {
        guard let placed = placedItem(state) else { return nil }
        register(placed.item, media: placed.media, placement: placed.placement, zone: soundZone(state))
        return placed.item
    }

    /// The layout zone whose playlist `state` is, when it is a layout's (the show's player plays
    /// the sound zone, else the first).
    private func soundZone(_ state: ProgrammeState) -> LayoutZone? {
        guard let layoutName = state.entry?.content.layoutName, let layout = schedule.layouts[layoutName],
              !layout.zones.isEmpty else { return nil }
        return layout.zones[layout.soundZoneIndex ?? 0]
    }

    /// The engine item for the programme state, pinned to the wall clock, and where it sits in the
    /// programme; not registered.
    private func placedItem(_ state: ProgrammeState) -> (item: PlayerItem, media: MediaItem, placement: Placement)? {
        guard let name = state.playlistName, let playlist = schedule.playlists[name], let index = state.itemIndex,
              playlist.items.indices.contains(index) else { return nil }
        let media = playlist.items[index]
        let item = ShowItems.playerItem(for: media, withSound: hasSound, from: state.position)
        // The item's first media time is due at the instant it is resolved for: the player keeps
        // it on the wall clock there, so screens with the same schedule show the same frame. A
        // network stream is not: it comes as it is sent and cannot be sought, so one that took a
        // while to open would be late by that much for good (every frame dropped); the player pins
        // it where its first frame shows.
        if !media.source.isNetworkStream {
            item.wallClockPin = WallClockPin(time: item.currentTime(), wallClockTime: .nanoseconds(state.instant.nanosecondsSinceEpoch))
        }
        let start = state.itemStart ?? state.instant
        var end: UTCInstant?
        if let length = media.playDuration, length.isNumeric { end = start.advanced(by: length) }
        if let change = state.nextChange, end == nil || change < end! {
            // The entry's window ends first: the item is cut there (the tick re-resolves).
            end = end ?? change
        }
        let placement = Placement(
            entryKey: key(state.entry.flatMap { entry in state.occurrence.map { (entry, $0) } }),
            entryName: state.entry?.name ?? "fallback", start: start, end: end,
            programmeItem: ProgrammeItem(playlist: name, index: index, source: media.source.location), isStill: media.source.isStill)
        return (item, media, placement)
    }

    /// Gives `item` its plan (overlays, gravity, volume) and its place in the programme.
    func register(_ item: PlayerItem, media: MediaItem, placement: Placement, zone: LayoutZone? = nil) {
        gate.setPlan(plan(for: media, placement: placement, zone: zone), for: item)
        placements[ObjectIdentifier(item)] = placement
    }

    /// What the show does while an item of `media` plays at `placement`: its overlays (in `zone`'s
    /// terms in a layout), gravity (the command line's, else the item's, else the zone's, else the
    /// schedule's) and volume.
    func plan(for media: MediaItem, placement: Placement, zone: LayoutZone?) -> ItemPlan {
        let gravity = configuration.gravity ?? zone?.gravity ?? schedule.display.gravity
        var plan = ShowItems.plan(for: media, defaultGravity: gravity, screenWidth: display.canvasSize.width,
                                  screenHeight: display.canvasSize.height, zone: zone?.rect) { [logger] in
            logger.warning("\($0)")
        }
        if configuration.gravity != nil { plan.gravity = gravity }
        plan.entry = placement.entryName
        plan.programmeItem = placement.programmeItem
        return plan
    }
}
