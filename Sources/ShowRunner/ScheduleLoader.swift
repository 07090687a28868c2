import MediaAsset
import MediaTime
public import Scheduling

/// Reads a schedule file, probes its media with FFmpeg (for lengths, which place items and cues) and
/// validates it. A schedule with errors is not returned: its diagnostics are.
public enum ScheduleLoader {
    /// The outcome of loading: a schedule ready to play, or why not.
    public enum Outcome: Sendable {
        case loaded(Schedule)
        case rejected([ScheduleDiagnostic], unreadable: Bool)
    }

    public static func load(path: String, timeout: Duration = .seconds(10)) async -> Outcome {
        let inspector = await probe(path: path, timeout: timeout)
        let report = ScheduleValidator.validate(path: path, inspector: inspector)
        if report.isValid, let schedule = report.schedule { return .loaded(schedule) }
        return .rejected(report.diagnostics.filter { $0.severity == .error }, unreadable: report.isUnreadable)
    }

    static func probe(path: String, timeout: Duration) async -> any MediaInspector {
        guard let schedule = ScheduleReader.read(path: path).schedule else { return FileAccessInspector() }
        var answers: [String: MediaInspection] = [:]
        var toOpen: [String] = []
        let files = FileAccessInspector()
        for name in schedule.playlists.keys.sorted() {
            for item in schedule.playlists[name]!.items where answers[item.source.location] == nil {
                let access = files.inspect(item.source)
                guard case .readable = access, !item.source.isStill else {
                    answers[item.source.location] = access
                    continue
                }
                if case .url = item.source {
                    answers[item.source.location] = .readable
                    continue
                }
                toOpen.append(item.source.location)
            }
        }
        // The files are opened side by side (ConcurrentProbes): each waits on its own reads.
        let opened = await ConcurrentProbes.run(toOpen, key: { $0 }) { location in
            let asset = Asset(pathOrURL: location, options: .init(openTimeout: timeout, readTimeout: timeout))
            do {
                let (duration, playable) = try await asset.load(.duration, .isPlayable)
                return !playable
                    ? MediaInspection.unreadable("no audio or video track FFmpeg can decode")
                    : (duration.isNumeric ? .duration(duration) : .readable)
            } catch {
                return .unreadable(String(describing: error))
            }
        }
        answers.merge(opened) { first, _ in first }
        return ProbedInspector(answers: answers)
    }
}

/// Answers probed up front; anything else is checked for access only.
private struct ProbedInspector: MediaInspector {
    let answers: [String: MediaInspection]
    func inspect(_ source: MediaSource) -> MediaInspection {
        answers[source.location] ?? FileAccessInspector().inspect(source)
    }
}
