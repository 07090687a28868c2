import MediaAsset
import MediaSinks
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
        let inspector = await inspector(forSchedule: path, timeout: timeout)
        let report = ScheduleValidator.validate(path: path, inspector: inspector)
        if report.isValid, let schedule = report.schedule { return .loaded(schedule) }
        return .rejected(report.diagnostics.filter { $0.severity == .error }, unreadable: report.isUnreadable)
    }

    /// Which of a schedule's files ``inspector(forSchedule:opening:timeout:)`` opens with FFmpeg.
    public enum Probing: Sendable {
        /// The items' time-based media, for their lengths: what playing needs. Stills and overlay
        /// images are checked for access only.
        case lengths
        /// Every file: the items' media, stills included, and overlay images, so that a file
        /// FFmpeg cannot read is found before it is carried to a screen (`vitrine validate`).
        case everything
    }

    /// Probes a schedule's media up front (`MediaInspector` is synchronous and `Asset` loads
    /// asynchronously) and answers validation from what it found. URLs are not contacted: a
    /// schedule is validated on a stick, often away from the network. Local files are opened side by
    /// side (``ConcurrentProbes``): a bundle of a hundred clips is read before the first frame.
    public static func inspector(forSchedule path: String, opening probing: Probing = .lengths,
                                 timeout: Duration = .seconds(10)) async -> any MediaInspector {
        guard let schedule = ScheduleReader.read(path: path).schedule else { return FileAccessInspector() }
        var sources: [MediaSource] = []
        for name in schedule.playlists.keys.sorted() {
            for item in schedule.playlists[name]!.items {
                sources.append(item.source)
                guard probing == .everything else { continue }
                for overlay in item.overlays {
                    if case .image(let image) = overlay.content { sources.append(.image(path: image)) }
                }
            }
        }
        var answers: [String: MediaInspection] = [:]
        var toOpen: [MediaSource] = []
        let files = FileAccessInspector()
        for source in sources where answers[source.location] == nil {
            let access = files.inspect(source)
            guard case .readable = access, probing == .everything || !source.isStill else {
                answers[source.location] = access
                continue
            }
            if case .url = source {
                answers[source.location] = .readable
                continue
            }
            toOpen.append(source)
        }
        let opened = await ConcurrentProbes.run(toOpen, key: \.location) { source in await probe(source, timeout: timeout) }
        answers.merge(opened) { first, _ in first }
        return ProbedInspector(answers: answers)
    }

    /// One file opened with FFmpeg: its length, or why it cannot be played. A still is decoded:
    /// FFmpeg's image demuxer opens any file named like a picture, a damaged one included.
    static func probe(_ source: MediaSource, timeout: Duration) async -> MediaInspection {
        if case .image(let path) = source {
            do {
                _ = try RGBAImage(contentsOf: path)
                return .readable
            } catch {
                return .unreadable(error.description)
            }
        }
        let asset = Asset(pathOrURL: source.location, options: .init(openTimeout: timeout, readTimeout: timeout))
        do {
            let (duration, playable) = try await asset.load(.duration, .isPlayable)
            guard playable else { return .unreadable("no audio or video track FFmpeg can decode") }
            if source.isStill || !duration.isNumeric { return .readable }
            return .duration(duration)
        } catch {
            return .unreadable(error.description)
        }
    }
}

/// Answers probed up front; anything else is checked for access only.
private struct ProbedInspector: MediaInspector {
    let answers: [String: MediaInspection]
    func inspect(_ source: MediaSource) -> MediaInspection {
        answers[source.location] ?? FileAccessInspector().inspect(source)
    }
}
