import Bundles
import Displays
import FoundationEssentials
import Inspector
import MediaTime
import Playback
import Scheduling
import ShowRunner
import Supervisor
import SystemJournal
import SystemPackage
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Connects the inspector to the running player: its status, screenshots, programme and logs.
enum InspectorWiring {
    static func sources(show: ShowRunner?, display: any Display, log: ShowLog, metrics: PlaybackMetrics,
                        digests: FileDigestCache, proofOfPlay: ProofOfPlay?, audioDevice: String?, audioUnderruns: (@Sendable () -> Int)?,
                        configPath: String?, state: StateStore?, logs: LogRing) -> InspectorSources {
        let started = ContinuousClock.now
        let journal = journalLogs()
        let playing = TimeControlSample()
        return InspectorSources(
            status: {
                var status = InspectorStatus(version: VitrineCommand.configuration.version,
                                             uptimeSeconds: (ContinuousClock.now - started).seconds, display: display.name)
                status.configFile = configPath
                status.audioDevice = audioDevice
                status.audioUnderruns = audioUnderruns?()
                if let show {
                    let schedule = show.currentSchedule
                    status.scheduleFile = schedule.sourcePath
                    status.scheduleSHA256 = digests.sha256(path: schedule.sourcePath)
                    status.entry = show.currentEntryName
                    switch playing.current(show) {
                    case .playing: status.state = "playing"
                    case .paused: status.state = "paused"
                    case .waitingToPlayAtSpecifiedRate(let reason):
                        status.state = "waitingToPlayAtSpecifiedRate"
                        status.waitingReason = reason.rawValue
                    }
                    if let now = show.currentScheduleNow() {
                        status.nextChange = ScheduleResolver(schedule: schedule).resolve(at: now).nextChange?.description
                    }
                }
                if let frame = log.lastPresentedFrame {
                    status.item = frame.itemIndex
                    status.media = frame.source
                    status.positionSeconds = frame.presentationTime.seconds
                    status.droppedFrames = frame.droppedFrames
                }
                let counts = metrics.counts
                status.stalls = counts.stalls
                status.itemFailures = counts.itemFailures
                status.retries = counts.retries
                status.pipelineRebuilds = counts.pipelineRebuilds
                if let saved = try? state?.load() {
                    status.starts = saved.starts
                    status.uncleanEnds = saved.uncleanEnds
                }
                status.lastErrors = logs.lines(minimumLevel: .error, limit: 10).map { "\($0.label): \($0.message)" }
                if let readability = journal.readability() {
                    status.journalReadable = readability.readable
                    status.journalProblem = readability.problem
                }
                return status
            },
            screenshot: { try display.screenshot().pngData() },
            programme: { from, to in
                guard let show else { return .failure(InspectorError("no schedule is playing")) }
                let schedule = show.currentSchedule
                guard let start = schedule.timeZone.parseInstant(from), let end = schedule.timeZone.parseInstant(to), start < end else {
                    return .failure(InspectorError("from and to must be ISO 8601 times, from before to"))
                }
                guard UTCInstant.addressable.contains(start), UTCInstant.addressable.contains(end) else {
                    return .failure(InspectorError("from and to must lie between \(UTCInstant.addressableDescription)"))
                }
                return .success(ProgrammeReport(schedule: schedule, from: start, to: end, entriesOnly: false).json())
            },
            logs: logs,
            metrics: { metrics.exposition() },
            proofOfPlay: { from, to, csv in
                guard let proofOfPlay else { return .failure(InspectorError("no proof of play: the player keeps it in its state directory, with a schedule")) }
                let zone = show?.currentSchedule.timeZone ?? .utc
                var bounds: [Int64?] = [nil, nil]
                for (index, text) in [from, to].enumerated() {
                    guard let text else { continue }
                    guard let instant = zone.parseInstant(text) else { return .failure(InspectorError("\(text) is not an ISO 8601 time")) }
                    bounds[index] = instant.nanosecondsSinceEpoch
                }
                let records = proofOfPlay.records(from: bounds[0], to: bounds[1])
                if csv { return .success(("text/csv; charset=utf-8", Array(PlayRecord.csv(records).utf8))) }
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                return .success(("application/json", Array((try? encoder.encode(["records": records])) ?? Data())))
            },
            journal: journal)
    }

    /// The journal the inspector reads (`/api/logs?source=journal`): the system journal, or the
    /// files in `VITRINE_JOURNAL_DIRECTORY` (a copy of a screen's journal, tests); the entries of
    /// `VITRINE_JOURNAL_UNIT`, else of the unit this process runs in under systemd, else
    /// `vitrine.service`.
    static func journalLogs() -> JournalLogs {
        let environment = ProcessInfo.processInfo.environment
        let location: JournalLocation = environment["VITRINE_JOURNAL_DIRECTORY"].map { .directory(FilePath($0)) } ?? .localSystem
        // INVOCATION_ID: systemd started this process, so its cgroup names its unit.
        let ownUnit = environment["INVOCATION_ID"] != nil ? Journal.unit(ofProcess: getpid()).flatMap { $0.hasSuffix(".service") ? $0 : nil } : nil
        let journal = JournalLogs(location: location, unit: environment["VITRINE_JOURNAL_UNIT"] ?? ownUnit ?? "vitrine.service")
        _ = journal.readability()  // the first check, so /api/status soon says whether it works
        return journal
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The player's `timeControlStatus` as the inspector reports it, read from the engine at most four
/// times a second. The engine's lock is the render thread's too, and the inspector's thread runs at
/// a lower priority: taken on every request (thousands a second under load), a preempted holder
/// made the render thread miss refreshes (frame-interval p99 33 -> 67 ms in Benchmarks/inspector.sh).
final class TimeControlSample: Sendable {
    /// When the engine was last asked, and its answer; read and written by the inspector's requests.
    private let sample = LockedValue<(ContinuousClock.Instant, TimeControlStatus)?>(nil)

    func current(_ show: ShowRunner) -> TimeControlStatus {
        let now = ContinuousClock.now
        if let (at, status) = sample.withLock({ $0 }), now - at < .milliseconds(250) { return status }
        let status = show.player.timeControlStatus
        sample.withLock { $0 = (now, status) }
        return status
    }
}
