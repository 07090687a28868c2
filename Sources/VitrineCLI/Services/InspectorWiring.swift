import Bundles
import Displays
import FoundationEssentials
import Inspector
import MediaTime
import Playback
import Scheduling
import ShowRunner
import Supervisor
#if canImport(Glibc)
import Glibc
#endif

/// Connects the inspector to the running player: its status, screenshots, programme and logs.
enum InspectorWiring {
    static func sources(show: ShowRunner?, display: any Display, log: ShowLog, metrics: PlaybackMetrics,
                        digests: FileDigestCache, proofOfPlay: ProofOfPlay?, audioDevice: String?, configPath: String?, state: StateStore?,
                        logs: LogRing) -> InspectorSources {
        let started = ContinuousClock.now
        return InspectorSources(
            status: {
                var status = InspectorStatus(version: VitrineCommand.configuration.version,
                                             uptimeSeconds: (ContinuousClock.now - started).seconds, display: display.name)
                status.configFile = configPath
                status.audioDevice = audioDevice
                if let show {
                    let schedule = show.currentSchedule
                    status.scheduleFile = schedule.sourcePath
                    status.scheduleSHA256 = digests.sha256(path: schedule.sourcePath)
                    status.entry = show.currentEntryName
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
                return status
            },
            screenshot: { try display.screenshot().pngData() },
            programme: { from, to in
                guard let show else { return .failure(InspectorError("no schedule is playing")) }
                let schedule = show.currentSchedule
                guard let start = schedule.timeZone.parseInstant(from), let end = schedule.timeZone.parseInstant(to), start < end else {
                    return .failure(InspectorError("from and to must be ISO 8601 times, from before to"))
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
            })
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
