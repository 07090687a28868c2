import MediaAsset
import MediaTime
import Scheduling
import ShowRunner

/// Probes a schedule's media with FFmpeg (through `Asset`) before validation, so that
/// `vitrine validate` knows media lengths (for cues and trims) and finds files FFmpeg cannot read.
///
/// `MediaInspector` is synchronous and `Asset` loads asynchronously, so every source is probed
/// up front and validation reads the answers from ``ProbedMediaInspector``. URLs are not
/// contacted: a schedule is validated on a stick, often away from the network.
enum ScheduleMediaProbe {
    static func inspector(forSchedule path: String, timeout: Duration = .seconds(10)) async -> any MediaInspector {
        guard let schedule = ScheduleReader.read(path: path).schedule else { return FileAccessInspector() }
        var sources: [MediaSource] = []
        for name in schedule.playlists.keys.sorted() {
            for item in schedule.playlists[name]!.items {
                sources.append(item.source)
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
            guard case .readable = access else {
                answers[source.location] = access
                continue
            }
            guard case .url = source else {
                toOpen.append(source)
                continue
            }
            answers[source.location] = .readable
        }
        // Opened side by side, as the player does when it loads a schedule.
        let opened = await ConcurrentProbes.run(toOpen, key: \.location) { source in await probe(source, timeout: timeout) }
        answers.merge(opened) { first, _ in first }
        return ProbedMediaInspector(answers: answers)
    }

    static func probe(_ source: MediaSource, timeout: Duration) async -> MediaInspection {
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

/// Answers from ``ScheduleMediaProbe``; sources it did not see are checked for access only.
struct ProbedMediaInspector: MediaInspector {
    let answers: [String: MediaInspection]

    func inspect(_ source: MediaSource) -> MediaInspection {
        answers[source.location] ?? FileAccessInspector().inspect(source)
    }
}
