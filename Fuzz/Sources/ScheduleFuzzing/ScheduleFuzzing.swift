public import Scheduling
import MediaTime

/// Feeds schedule text through what `vitrine validate` and `vitrine programme` do with a file:
/// the reader (TOML or JSON, with positions), the decoder, the validator (media answers from a
/// fixed inspector, so cue and trim checks run without touching the disk), then a day of
/// programme, printed both ways. Every path must end in a schedule or diagnostics.
public enum ScheduleFuzzing {
    /// Every video is 12.5 s long, stills and URLs are readable, a name with "missing" is not found.
    struct FixedInspector: MediaInspector {
        func inspect(_ source: MediaSource) -> MediaInspection {
            if source.location.contains("missing") { return .missing("no such file") }
            if source.location.contains("broken") { return .unreadable("invalid data found when processing input") }
            switch source {
            case .videoFile: return .duration(MediaTime(value: 25, timescale: 2))
            case .image, .url: return .readable
            }
        }
    }

    static let referenceDate = LocalDate(year: 2026, month: 3, day: 29)!

    public static func run(_ data: UnsafePointer<UInt8>, _ size: Int, format: ScheduleFormat) {
        // The CLI refuses text that is not UTF-8 before parsing (ScheduleReader.read).
        guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self) else { return }
        let path = format == .toml ? "/fuzz/schedule.toml" : "/fuzz/schedule.json"
        let report = ScheduleValidator.validate(text: text, path: path, format: format, inspector: FixedInspector(),
                                                referenceDate: referenceDate)
        for diagnostic in report.diagnostics {
            precondition(diagnostic.location.file == path, "a diagnostic names another file: \(diagnostic)")
            _ = diagnostic.description
        }
        guard let schedule = report.schedule else {
            precondition(!report.diagnostics.isEmpty, "rejected without a diagnostic")
            return
        }
        // A day of programme from the reference date's midnight, as `vitrine programme` prints it,
        // up to 200 changes: a playlist of short clips changes thousands of times a day, and
        // formatting its two-thousandth row finds nothing the first hundred did not (at 2,000 the
        // report took over 90 % of each run and the target ran 184 inputs a second).
        guard let from = schedule.timeZone.parseInstant("2026-03-29"), let to = schedule.timeZone.parseInstant("2026-03-30") else { return }
        let programme = ProgrammeReport(schedule: schedule, from: from, to: to, maximumChanges: 200)
        _ = programme.text()
        _ = programme.json()
    }
}
