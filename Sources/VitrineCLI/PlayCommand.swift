import ArgumentParser
import Audio
import Bundles
import Config
import Inspector
import Supervisor
import Displays
import Logging
import MediaTime
import Playback
import Scheduling
import ShowRunner
import MediaSinks
import ServiceLifecycle
#if canImport(Glibc)
import Glibc
#endif

/// `vitrine play FILE...` plays media files in sequence, gaplessly; `vitrine play SCHEDULE` runs a show.
/// Both present on a real display (KMS, or headless EGL) and sound through ALSA, and write the
/// presentation log.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play media files in sequence, gaplessly, or play a schedule.",
        discussion: """
            A .toml or .json argument is a schedule: its programme is resolved for now (or --start-at), \
            overlays appear at their cues, and the file is watched: a valid change takes effect at the next \
            item boundary (an interrupt at once), an invalid one is rejected and the show goes on. Anything \
            else is media, played in order.

            The presentation log (--presentation-log) has one JSON object per line for every presented \
            frame and every event; see docs/presentation-log.md.
            """)

    @Argument(help: "Files or URLs to play, in order; or one schedule file (.toml, .json). With --config, the configuration's schedule when none is given.")
    var files: [String] = []

    @Option(name: .customLong("config"), help: ArgumentHelp(
        "Read the player's settings from this file (/etc/vitrine/vitrine.toml; see docs/configuration.md). Options given on the command line win over it.",
        valueName: "FILE"))
    var configFile: String?

    @Flag(help: "Loop the whole list forever (without a gap at the seam).")
    var loop = false

    @Option(help: "Where to show the video: headless, kms, auto (KMS when a screen is connected) or null (no pixels: engine cost only; the sound goes to a null sink too unless --audio-device names a device).")
    var display: String?

    @Option(help: "The DRM connector to use, e.g. HDMI-A-1 (default: the first connected one).")
    var connector: String?

    @Option(help: "Display mode WxH or WxH@Hz (default: the screen's preferred mode; headless and null 1920x1080 at --refresh-rate).")
    var mode: String?

    @Option(help: "Output rotation: 0, 90, 180 or 270.")
    var rotation: String?

    @Option(help: "How video fills the screen: fit, fill or stretch.")
    var gravity: String?

    @Option(help: ArgumentHelp(
        "Video walls: show only this part of the picture, in fractions of the whole wall's picture (docs/video-walls.md); over a schedule's or the configuration's [display] wall or crop.",
        valueName: "X,Y,WIDTH,HEIGHT"))
    var crop: String?

    @Option(name: .customLong("screenshot-at"), help: ArgumentHelp(
        "Write the first frame presented at or after TIME (seconds, item time) as PNG to PATH.", valueName: "TIME=PATH"))
    var screenshotAt: [String] = []

    @Option(name: .customLong("state-directory"), help: ArgumentHelp(
        "Keep the player's state (starts, runs that ended without an orderly stop) in this folder; with --config, the configuration's state_directory.",
        valueName: "PATH"))
    var stateDirectory: String?

    @Option(name: .customLong("import-directory"), help: ArgumentHelp(
        "Schedules: follow the bundles `vitrine import` puts here (its `current` link; see docs/bundles.md), showing the import's progress; with --config, the configuration's [import] directory.",
        valueName: "DIR"))
    var importDirectory: String?

    @Option(name: .customLong("presentation-log"), help: "Write the presentation log (JSON lines) to PATH ('-' for standard output).")
    var presentationLog: String?

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .customLong("no-audio"), help: "Play without sound (audio tracks are not decoded; the display clock paces video).")
    var noAudio = false

    @Option(name: .customLong("audio-device"), help: "The ALSA PCM to play to (default: 'default').")
    var audioDevice: String?

    @Option(help: "Master volume, 0...1 (default: 1).")
    var volume: Double?

    @Option(help: "Refresh rate of the headless display, in Hz (when --mode names none).")
    var refreshRate: Int32 = 60

    @Option(name: .customLong("start-at"), help: "Schedules: play the programme as of this ISO 8601 instant (then advancing).")
    var startAt: String?

    @Option(name: .customLong("clock-offset"), help: "Schedules: shift the wall clock by this many seconds.")
    var clockOffset: Double?

    @Option(name: .customLong("clock-step"), help: ArgumentHelp(
        "Schedules, a diagnostic: AFTER seconds into playing, step this screen's wall clock by SECONDS (negative: back), as an NTP step would; repeatable.",
        valueName: "AFTER=SECONDS"))
    var clockSteps: [String] = []

    @Flag(help: "Run on a simulated clock, as fast as decoding allows, presenting to a paced null sink (no display, no sound): the presentation log is the one a real-time run on an idle machine would write.")
    var simulatedClock = false

    @OptionGroup(title: "Music and announcements")
    var audioMix: AudioMixOptions

    var isSchedule: Bool {
        files.count == 1 && [".toml", ".json"].contains { files[0].lowercased().hasSuffix($0) }
    }

    func validate() throws {
        guard !files.isEmpty || configFile != nil else { throw ValidationError("give at least one file to play, or --config FILE") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
        guard (1...480).contains(refreshRate) else { throw ValidationError("--refresh-rate must be between 1 and 480") }
        if let volume, !(0...1).contains(volume) { throw ValidationError("--volume must be between 0 and 1") }
        if startAt != nil && clockOffset != nil { throw ValidationError("give --start-at or --clock-offset, not both") }
        if !isSchedule && configFile == nil && importDirectory != nil {
            throw ValidationError("--import-directory applies to a schedule (a .toml or .json file)")
        }
        if !isSchedule && configFile == nil && (startAt != nil || clockOffset != nil || !clockSteps.isEmpty) {
            throw ValidationError("--start-at, --clock-offset and --clock-step apply to a schedule (a .toml or .json file)")
        }
        if let clockOffset {
            // The show counts its clock in 64-bit nanoseconds and asks the schedule about it.
            let shifted = Double(MonotonicClock.wallClockNanosecondsNow()) / 1e9 + clockOffset
            let addressable = Double(UTCInstant.addressable.lowerBound.secondsSinceEpoch)...Double(UTCInstant.addressable.upperBound.secondsSinceEpoch)
            guard clockOffset.isFinite, addressable.contains(shifted) else {
                throw ValidationError("--clock-offset \(clockOffset): the shifted clock must lie between \(UTCInstant.addressableDescription)")
            }
        }
        for step in clockSteps where ClockStep(parsing: step) == nil {
            throw ValidationError("--clock-step '\(step)': expected AFTER=SECONDS (AFTER 0 to 1e9, SECONDS within ±1e6), e.g. 10=0.08 (after 10 s, step the clock 80 ms ahead)")
        }
        if isSchedule && loop { throw ValidationError("--loop applies to media files; a schedule says what loops") }
        if (simulatedClock || display == "null") && (isSchedule || !screenshotAt.isEmpty || configFile != nil) {
            throw ValidationError("--simulated-clock and --display null play media files to null sinks: no schedules, no screenshots, no --config")
        }
        try audioMix.validate(soundIsPlayed: !noAudio && !simulatedClock && display != "null")
        if simulatedClock || display == "null" {
            _ = try nullDisplayMode()
            return
        }
        for request in screenshotAt {
            do { _ = try ScreenshotRequest(parsing: request) } catch { throw ValidationError(error.description) }
        }
        _ = try displayConfiguration(schedule: nil)
    }

    /// The headless and null displays' mode when `--mode` names none: 1920x1080 at `--refresh-rate`.
    var defaultMode: DisplayMode { DisplayMode(width: 1920, height: 1080, refreshMillihertz: Int(refreshRate) * 1000) }

    /// The null display's mode (`--display null`, `--simulated-clock`): `--mode` as the headless
    /// display reads it, else ``defaultMode``.
    func nullDisplayMode() throws(ValidationError) -> DisplayMode {
        guard let mode else { return defaultMode }
        do { return try DisplayMode(parsing: mode) } catch { throw ValidationError(error.description) }
    }

    /// The display the options ask for; a schedule's display settings fill what the options leave out.
    func displayConfiguration(schedule: Schedule?) throws -> DisplayConfiguration {
        var modeText = mode
        if modeText == nil, let schedule, case .explicit = schedule.display.mode { modeText = schedule.display.mode.description }
        if modeText == nil, displayKind == "headless" { modeText = defaultMode.description }
        let rotationText = rotation ?? schedule.map { String($0.display.rotationDegrees) } ?? "0"
        let gravityText = gravity ?? schedule?.display.gravity.rawValue ?? "fit"
        do {
            var configuration = try DisplayConfiguration(display: displayKind, mode: modeText, rotation: rotationText, gravity: gravityText,
                                                         connector: connector ?? schedule?.display.connector, crop: crop)
            if crop == nil, let wall = schedule?.display.wall { configuration.wall = wall }
            return configuration
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        if let configFile {
            // The file fills in what the command line leaves out; then the command runs as if given it all.
            var command = self
            let configuration = try Self.readConfiguration(configFile)
            // A volume given on the command line is the volume: the room does not change it.
            let ambient = volume == nil ? configuration.audio.ambient : nil
            if configuration.audio.ambient != nil, volume != nil {
                printError("vitrine play: --volume given: the ambient volume ([audio.ambient]) is off")
            }
            try command.apply(configuration)
            command.configFile = nil
            try command.validate()
            return try await command.play(inspector: configuration.inspector, configPath: configFile, setupHint: configuration.bundles.setupHint,
                                          ambient: ambient)
        }
        try await play(inspector: nil, configPath: nil, setupHint: false, ambient: nil)
    }

    /// Plays, with the configuration's inspector and ambient volume when it has them.
    private func play(inspector: Configuration.Inspector?, configPath: String?, setupHint: Bool, ambient: Configuration.Ambient?) async throws {
        MemoryTuning.keepLargeBuffersMapped()
        // Native journal entries under systemd, plain lines on a terminal; the inspector's ring
        // keeps the recent ones for /api/logs.
        let logRing = LogRing()
        LoggingSystem.bootstrap { label in
            MultiplexLogHandler([JournalLogHandler.standard(label: label), LogRingHandler(label: label, ring: logRing)])
        }
        let logger = Logger(label: "vitrine.play")
        if simulatedClock || display == "null" { return try await runOnNullSinks() }
        // A schedule is read (and its media probed) before any device is opened.
        var schedule: Schedule?
        if isSchedule {
            switch await ScheduleLoader.load(path: files[0]) {
            case .loaded(let loaded): schedule = loaded
            case .rejected(let diagnostics, let unreadable):
                for diagnostic in diagnostics { printError(diagnostic.description) }
                if diagnostics.isEmpty { printError("vitrine play: \(files[0]): cannot read the schedule") }
                throw ExitCode(unreadable ? 2 : 1)
            }
        }
        // --start-at is read in the schedule's time zone: a wrong one is refused before any device opens.
        var startInstant: UTCInstant?
        if let schedule, let startAt {
            guard let instant = schedule.timeZone.parseInstant(startAt) else {
                throw ValidationError("--start-at '\(startAt)': expected an ISO 8601 date-time, e.g. 2026-03-29T08:00:00Z")
            }
            guard UTCInstant.addressable.contains(instant) else {
                throw ValidationError("--start-at '\(startAt)': outside the times a schedule can be asked about (\(UTCInstant.addressableDescription))")
            }
            startInstant = instant
        }
        let writer: PresentationLogWriter?
        do { writer = try presentationLog.map { path throws(PresentationLogError) in try PresentationLogWriter(path: path) } } catch {
            throw ValidationError(error.description)
        }
        let configuration = try displayConfiguration(schedule: schedule)
        let screen: any Display
        do {
            screen = try openDisplay(configuration, logger: logger)
        } catch {
            printError("vitrine play: \(error)")
            throw ExitCode(1)
        }
        defer { screen.stop() }

        // Sound: one ALSA output with one input for the soundtrack. A device that is not there (yet) is
        // no reason to show nothing: the picture starts at once, the sound comes in when the device does.
        let sound = try openSound(deviceName: audioDevice ?? "default")
        let output = sound?.output
        let soundtrack = sound?.soundtrack
        defer {
            soundtrack?.close()
            output?.stop()
        }
        // --music and --announcement: players mixed into the same output (stopped before it).
        let mix: AudioMix?
        do { mix = try audioMix.start(output: output, soundtrack: soundtrack, logger: logger) } catch {
            printError("vitrine play: \(error)")
            throw ExitCode(1)
        }
        defer { mix?.stop() }

        let requests = screenshotAt.compactMap { try? ScreenshotRequest(parsing: $0) }
        let screenshots = requests.isEmpty ? nil : ScreenshotTaker(display: screen, requests: requests)
        let saved = stateDirectory.flatMap { try? StateStore(directory: $0).load() }
        let metrics = PlaybackMetrics(version: VitrineCommand.configuration.version, starts: (saved?.starts ?? 0) + 1,
                                      uncleanEnds: (saved?.uncleanEnds ?? 0) + (saved?.running == true ? 1 : 0))
        // Media and schedule digests for proof of play and the inspector, each file read once per change.
        let digests = FileDigestCache()
        // Proof of play, kept with the player's state (a schedule's items, on screen).
        let proofOfPlay = (isSchedule ? stateDirectory : nil).map { directory in
            _ = mkdir(directory, 0o700)
            return ProofOfPlay(directory: directory) { media in media.contains("://") ? nil : digests.sha256(path: media) }
        }
        PlaybackStatistics.setVideoDecodeTimeHandler { time in metrics.recordDecode(time) }
        let log = ShowLog(writer: writer, screenshots: screenshots) { record in
            metrics.record(record)
            proofOfPlay?.record(record)
        }
        let limit = duration.map { MediaTime(seconds: $0, preferredTimescale: 1000) }

        let playback: PlaybackService.Playback
        var watcher: Task<Int, Never>?
        var supervising: Task<Void, Never>?
        // The show's wall clock: --start-at and --clock-offset move it, for the programme and the quiet
        // hours alike; --clock-step steps it as NTP would.
        let shift = WallClockShift()
        var clock = ShowClock.system(offsetSeconds: clockOffset ?? 0, shift: shift)
        if let startInstant { clock = .starting(at: startInstant, shift: shift) }
        if schedule != nil {
            scheduleClockSteps(clockSteps.compactMap(ClockStep.init(parsing:)), on: shift, logger: logger)
        }
        if let schedule {
            let show = ShowRunner(schedule: schedule, display: screen, audioSink: soundtrack, log: log,
                                  configuration: .init(clock: clock, gravity: gravity.flatMap(VideoGravity.init(commandLineName:))),
                                  logger: Logger(label: "vitrine.show"))
            // The schedule's [restart] policy: failed and stalled items are retried, skipped or
            // replaced by the fallback; a broken engine is rebuilt; past that, systemd restarts us.
            let supervisor = Supervisor(show: show, policy: schedule.restartPolicy, store: stateDirectory.map { StateStore(directory: $0) },
                                        logger: Logger(label: "vitrine.supervisor")) { reason in
                printError("vitrine play: giving up inside this process (exit status 3): \(reason)")
                log.close()
                Self.exitNow(3)
            }
            let reports = show.supervisionReports()
            supervising = Task { await supervisor.run(reports) }
            playback = .show(show)
        } else {
            // The queue owns the items: once played they are released.
            let player = QueuePlayer(items: [], videoSink: screen, audioSink: soundtrack)
            player.loops = loop
            player.setPresentationHandler { log.record($0) }
            // Queued after the handler is set: an item failing at once still gets its item_failed line.
            for item in makeItems() { player.insert(item, after: nil) }
            watcher = watchFailures(of: player)
            playback = .queue(player)
        }

        // The renderer starts only now, once a queue's first item has its threads: a thread created
        // while the renderer loads its driver (Mesa and LLVM: ~20 ms) waits for the load to end.
        // While it starts, the sound device opens on the output's thread and the first item opens
        // and decodes on its own (a show starts once the screen is ready: started before, its first
        // picture was decoded for a moment of the programme long past when a slow renderer came
        // up — docs/playback-engine.md). A screen that cannot draw stops the command here.
        do {
            try screen.startRendering()
            try await screen.ready()
        } catch {
            printError("vitrine play: \(screen.name): \(error)")
            throw ExitCode(1)
        }

        // Started in this order, stopped the other way round on SIGTERM/SIGINT, at the end or after
        // --duration: playback, then the screen (restored on KMS), the sound (the PCM drained), the log.
        var services: [any Service] = [PresentationLogService {
            proofOfPlay?.close()
            log.close()
        }]
        if let output {
            let input = soundtrack
            services.append(AudioService(output: output) {
                mix?.stop()
                input?.close()
            })
        }
        // After the output, so it stops first: the room sets the master volume ([audio.ambient]).
        if let ambient, let output, let service = AmbientVolumeService.make(
            ambient, output: output, initialVolume: volume, zone: schedule?.timeZone ?? .utc, clock: clock, logger: logger) {
            services.append(service)
        }
        services.append(DisplayService(display: screen))
        let notifier = SystemdNotifier.fromEnvironment()
        var notifications = SystemdService(notifier: notifier, display: screen, log: log)
        if case .show(let show) = playback { notifications.entry = { show.currentEntryName } }
        services.append(notifications)
        if let inspector, let listen = inspector.listen, let tokenFile = inspector.tokenFile {
            var underruns: (@Sendable () -> Int)?
            if let output { underruns = { output.xrunCount } }
            let sources = InspectorWiring.sources(
                show: { if case .show(let show) = playback { show } else { nil } }(), display: screen, log: log, metrics: metrics,
                digests: digests, proofOfPlay: proofOfPlay,
                audioDevice: noAudio ? nil : (audioDevice ?? "default"), audioUnderruns: underruns,
                configPath: configPath,
                state: stateDirectory.map { StateStore(directory: $0) }, logs: logRing)
            let settings = InspectorSettings(host: listen.host, port: listen.port, tokenFile: tokenFile, tlsCertificate: inspector.tlsCertificate,
                                             tlsKey: inspector.tlsKey, allowPlainHTTP: inspector.allowPlainHTTP)
            do {
                services.append(try InspectorServer(settings: settings, sources: sources, logger: Logger(label: "vitrine.inspector")) { port in
                    Logger(label: "vitrine.inspector").info("inspector listening on \(listen.host):\(port)")
                })
            } catch {
                logger.error("the inspector is off: \(error)")
            }
        }
        if case .show(let show) = playback, let importDirectory {
            services.append(ImportFollowService(store: BundleStore(directory: importDirectory), show: show, display: screen,
                                                logger: Logger(label: "vitrine.import")))
            // An appliance with no bundle yet says how to give it one ([import] setup_hint).
            if setupHint {
                services.append(SetupHintService(store: BundleStore(directory: importDirectory), display: screen, inspector: inspector,
                                                 logger: Logger(label: "vitrine.setup")))
            }
        }
        services.append(PlaybackService(playback: playback, limit: limit, clock: MonotonicClock(), pollInterval: nil,
                                        notifier: notifier))
        let state = stateDirectory.map { StateStore(directory: $0) }
        if let state { recordStart(in: state, logger: logger) }
        do { try await ServiceRunner.run(services, logger: logger) } catch {
            printError("vitrine play: stopping: \(error)")
            throw ExitCode(1)
        }
        await supervising?.value
        if let state { recordOrderlyStop(in: state, logger: logger) }
        var failed = false
        if let watcher { failed = await watcher.value >= files.count }
        for problem in screenshots?.finish() ?? [] {
            printError("vitrine play: screenshot \(problem)")
            failed = true
        }
        if failed { throw ExitCode(1) }
    }

    /// Counts this start, and a previous run that ended without an orderly stop (a crash, a kill, a
    /// power cut): a restart loop is visible in the state and the log. A state that cannot be
    /// written is logged; playback goes on.
    private func recordStart(in store: StateStore, logger: Logger) {
        do {
            var state = try store.load()
            if state.running {
                state.uncleanEnds += 1
                logger.warning("the previous run ended without an orderly stop", metadata: [
                    "unclean_ends": "\(state.uncleanEnds)", "starts": "\(state.starts)", "state": "\(store.path)"])
            }
            state.starts += 1
            state.running = true
            try store.save(state)
        } catch {
            logger.error("the player's state is not kept: \(error)")
        }
    }

    /// Marks the run as ended in order.
    private func recordOrderlyStop(in store: StateStore, logger: Logger) {
        do {
            var state = try store.load()
            state.running = false
            try store.save(state)
        } catch {
            logger.error("the player's state is not kept: \(error)")
        }
    }

    /// Ends the process at once with `status`, without unwinding: the threads still running are
    /// not waited for (the service manager restarts the player).
    static func exitNow(_ status: Int32) -> Never {
        #if canImport(Glibc)
        Glibc._exit(status)
        #else
        fatalError("exit \(status)")
        #endif
    }

    /// `--display`, or auto.
    var displayKind: String { display ?? "auto" }

    /// Reads and checks a configuration file; its problems are printed as file:line:column and end
    /// the command (exit status 1, or 2 when the file cannot be read).
    static func readConfiguration(_ path: String) throws -> Configuration {
        let result = ConfigurationReader.read(path: path)
        for diagnostic in result.diagnostics { printError(diagnostic.description) }
        guard let configuration = result.configuration else { throw ExitCode(result.isUnreadable ? 2 : 1) }
        return configuration
    }

    /// Takes from `configuration` every setting the command line did not give.
    mutating func apply(_ configuration: Configuration) throws {
        importDirectory = importDirectory ?? configuration.bundles.directory
        if files.isEmpty {
            // The last imported bundle wins over the configured schedule (the demo, out of the box).
            if let imported = BundleStore(directory: importDirectory ?? configuration.bundles.directory).currentSchedule {
                files = [imported]
            } else {
                guard let schedule = configuration.schedule else {
                    throw ValidationError("\(configFile ?? "the configuration") names no schedule, no bundle was imported, and no file was given to play")
                }
                files = [schedule]
            }
        }
        display = display ?? configuration.display.kind
        connector = connector ?? configuration.display.connector
        mode = mode ?? configuration.display.mode
        rotation = rotation ?? configuration.display.rotation.map(String.init)
        gravity = gravity ?? configuration.display.gravity?.rawValue
        crop = crop ?? configuration.display.wall.map { "\($0.x),\($0.y),\($0.width),\($0.height)" }
        audioDevice = audioDevice ?? configuration.audio.device
        volume = volume ?? configuration.audio.volume
        if !configuration.audio.enabled { noAudio = true }
        presentationLog = presentationLog ?? configuration.presentationLog
        stateDirectory = stateDirectory ?? configuration.stateDirectory
    }

    private func makeItems() -> [PlayerItem] {
        files.map { file in
            let item = PlayerItem(url: file)
            if noAudio { item.isAudioEnabled = false }
            return item
        }
    }

    /// Reports item failures on standard error; the task's value is how many items failed.
    private func watchFailures(of player: QueuePlayer) -> Task<Int, Never> {
        let events = player.events
        // Items open as soon as they are queued: one may have failed before this subscription.
        let failedEarlier = player.items().filter { $0.status == .failed }
        return Task {
            var reported = Set(failedEarlier.map(ObjectIdentifier.init))
            for item in failedEarlier { printError("vitrine play: \(item.error?.description ?? item.url)") }
            var failures = failedEarlier.count
            for await event in events {
                switch event {
                case .itemStatusChanged(let item, .failed):
                    guard reported.insert(ObjectIdentifier(item)).inserted else { continue }
                    failures += 1
                    printError("vitrine play: \(item.error?.description ?? item.url)")
                case .failedToPlayToEndTime(let item, let error) where item.status != .failed:
                    // A read error part-way (load failures were reported just above).
                    printError("vitrine play: \(error.description)")
                default: break
                }
            }
            return failures
        }
    }

    /// `--display null` and `--simulated-clock`: the engine presenting to a paced null sink (no pixels) and,
    /// unless --no-audio, a null audio sink; on the simulated clock as fast as decoding allows. With
    /// `--display null --audio-device NAME` the sound plays to that ALSA device and paces the
    /// pictures, as `mpv --vo=null` does: a player without a screen, or one measured beside mpv.
    private func runOnNullSinks() async throws {
        let writer: PresentationLogWriter?
        do { writer = try presentationLog.map { path throws(PresentationLogError) in try PresentationLogWriter(path: path) } } catch {
            throw ValidationError(error.description)
        }
        let clock: any HostClock = simulatedClock ? ManualClock(start: MonotonicClock().now()) : MonotonicClock()
        let screen = try nullDisplayMode()
        let videoSink = try NullVideoSink(refreshInterval: screen.refreshInterval, outputSize: (screen.width, screen.height), clock: clock)
        let sound = simulatedClock ? nil : try audioDevice.flatMap(openSound(deviceName:))
        let audioSink: (any AudioSink)? = noAudio ? nil : sound.map { $0.soundtrack as any AudioSink } ?? NullAudioSink(clock: clock)
        let player = QueuePlayer(items: [], videoSink: videoSink, audioSink: audioSink, clock: clock)
        player.loops = loop
        if let writer { player.setPresentationHandler { writer.write($0) } }
        for item in makeItems() { player.insert(item, after: nil) }
        let watcher = watchFailures(of: player)
        let limit = duration.map { MediaTime(seconds: $0, preferredTimescale: 1000) }
        var services: [any Service] = [
            PresentationLogService {
                videoSink.stop()
                writer?.close()
            },
        ]
        if let sound {
            services.append(AudioService(output: sound.output) { sound.soundtrack.close() })
        }
        services += [
            PlaybackService(playback: .queue(player), limit: limit, clock: clock, pollInterval: simulatedClock ? .milliseconds(2) : nil),
        ]
        do { try await ServiceRunner.run(services, logger: Logger(label: "vitrine.play")) } catch {
            printError("vitrine play: stopping: \(error)")
            throw ExitCode(1)
        }
        if await watcher.value >= files.count { throw ExitCode(1) }
    }

    /// The ALSA output and its soundtrack input (`nil` with --no-audio). The device opens on the
    /// output's own thread while the media and the display open here. A device that is not there
    /// (yet) is a warning, not an error: playback starts silent and the device is tried again.
    private func openSound(deviceName: String) throws -> AudioOutputSession? {
        do {
            return try ALSAOutput.start(AudioOutputOptions(deviceName: deviceName, volume: Float(volume ?? 1), isDisabled: noAudio)) {
                guard case .failure(let reason) = $0 else { return }
                printError("vitrine play: warning: \(reason)")
                printError("vitrine play: playing without sound for now; the device is tried again every second")
            }
        } catch {
            printError("vitrine play: \(error)")
            throw ExitCode(1)
        }
    }

    /// The display, its render thread not started yet (``Display/startRendering()``).
    private func openDisplay(_ configuration: DisplayConfiguration, logger: Logger) throws -> any Display {
        var configuration = configuration
        if configuration.kind == .auto, configuration.mode == nil {
            // KMS takes the screen's preferred mode; headless falls back to 1920x1080 at --refresh-rate.
            do {
                var kms = configuration
                kms.kind = .kms
                return try makeDisplay(kms, startsRendering: false, logger: Logger(label: "vitrine.display"))
            } catch .noDevice(let tried) {
                logger.info("display: no usable KMS device, rendering headless", metadata: ["tried": "\(tried.joined(separator: "; "))"])
                configuration.kind = .headless
                configuration.mode = defaultMode
            }
        }
        return try makeDisplay(configuration, startsRendering: false, logger: Logger(label: "vitrine.display"))
    }
}

/// glibc's `mallopt`, which Swift's Glibc module does not export (it lives in <malloc.h>).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32

/// Process-wide allocator settings for long playlists.
enum MemoryTuning {
    /// Serves allocations from 64 KiB up (decoded pictures, packet buffers) with their own
    /// mappings, returned to the system when freed. By default glibc raises that threshold after
    /// the first large free, so each item's picture buffers come from the heap, fragment it, and
    /// peak memory over a long queue creeps up (measured: 1,000 short clips +30 % over 10; with
    /// this, +4 %).
    static func keepLargeBuffersMapped() {
        #if canImport(Glibc)
        let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD in <malloc.h>
        _ = glibcMallopt(mmapThreshold, 64 * 1024)
        #endif
    }
}

/// `--clock-step AFTER=SECONDS`: a diagnostic step of the show's wall clock.
struct ClockStep: Equatable {
    var after: Double
    var seconds: Double

    init?(parsing text: String) {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, let after = Double(parts[0]), let seconds = Double(parts[1]),
              (0..<1e9).contains(after), seconds.isFinite, abs(seconds) < 1e6 else { return nil }
        self.after = after
        self.seconds = seconds
    }
}

extension PlayCommand {
    /// Steps `shift` at each `--clock-step`, counted from now (the show's start).
    func scheduleClockSteps(_ steps: [ClockStep], on shift: WallClockShift, logger: Logger) {
        guard !steps.isEmpty else { return }
        let start = ContinuousClock.now
        Task.detached {
            for step in steps.sorted(by: { $0.after < $1.after }) {
                try? await Task.sleep(until: start + .milliseconds(Int64((step.after * 1000).rounded())), clock: .continuous)
                shift.step(by: MediaTime(seconds: step.seconds, preferredTimescale: 1_000_000))
                logger.warning("--clock-step: the wall clock stepped by \(step.seconds) s")
            }
        }
    }
}
