import ArgumentParser
import Scheduling

/// `vitrine validate FILE`: checks a schedule's syntax and meaning and lists every problem.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a schedule file and report every problem as file:line:column.",
        discussion: """
            Checks TOML or JSON syntax, unknown keys, malformed times and durations, references between \
            entries and playlists, media files, cues against media lengths and overlapping entries of \
            equal priority. Media files are opened with FFmpeg to learn their lengths and find \
            unreadable ones; URLs are not contacted. Exit status: 0 valid, 1 invalid, 2 unreadable.
            """)

    @Argument(help: "The schedule file (.toml or .json).")
    var file: String

    @Flag(name: .customLong("quiet"), help: "Print nothing; only set the exit status.")
    var quiet = false

    func run() async throws {
        let report = ScheduleValidator.validate(path: file, inspector: await ScheduleMediaProbe.inspector(forSchedule: file))
        if !quiet {
            for diagnostic in report.diagnostics { print(diagnostic.description) }
            let errors = report.errorCount
            let warnings = report.diagnostics.count - errors
            if report.isUnreadable {
                print("\(file): unreadable")
            } else if errors == 0 {
                print("\(file): valid" + (warnings > 0 ? " (\(warnings) warning\(warnings == 1 ? "" : "s"))" : ""))
            } else {
                print("\(file): \(errors) error\(errors == 1 ? "" : "s")" + (warnings > 0 ? ", \(warnings) warning\(warnings == 1 ? "" : "s")" : ""))
            }
        }
        if report.exitStatus != 0 { throw ExitCode(report.exitStatus) }
    }
}
