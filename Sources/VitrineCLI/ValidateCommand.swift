import ArgumentParser
import Config
import Scheduling
import ShowRunner

/// `vitrine validate FILE`: checks a schedule's (or a configuration file's) syntax and meaning and
/// lists every problem.
struct ValidateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check a schedule file (or the player's configuration file) and report every problem as file:line:column.",
        discussion: """
            Checks TOML or JSON syntax, unknown keys, malformed times and durations, references between \
            entries, layouts and playlists, layouts' zones (on screen, no overlap at the same z, at most \
            one with sound), media files, cues against media lengths and overlapping entries of equal \
            priority. Media files are opened with FFmpeg to learn their lengths and find \
            unreadable ones; URLs are not contacted. A configuration file (--config, or a file named \
            vitrine.toml) is checked key by key, and the schedule it names is then validated too. \
            Exit status: 0 valid, 1 invalid, 2 unreadable.
            """)

    @Argument(help: "The schedule file (.toml or .json), or a configuration file.")
    var file: String

    @Flag(name: .customLong("config"), help: "FILE is the player's configuration (/etc/vitrine/vitrine.toml), not a schedule.")
    var isConfiguration = false

    @Flag(name: .customLong("quiet"), help: "Print nothing; only set the exit status.")
    var quiet = false

    func run() async throws {
        var schedulePath = file
        if isConfiguration || file == "vitrine.toml" || file.hasSuffix("/vitrine.toml") {
            let result = ConfigurationReader.read(path: file)
            if !quiet {
                for diagnostic in result.diagnostics { print(diagnostic.description) }
            }
            guard let configuration = result.configuration else {
                if !quiet { print("\(file): \(result.isUnreadable ? "unreadable" : "invalid configuration")") }
                throw ExitCode(result.isUnreadable ? 2 : 1)
            }
            guard let schedule = configuration.schedule else {
                if !quiet { print("\(file): valid (no schedule named)") }
                return
            }
            if !quiet { print("\(file): valid; checking its schedule \(schedule)") }
            schedulePath = schedule
        }
        try await validate(schedule: schedulePath)
    }

    private func validate(schedule file: String) async throws {
        let report = ScheduleValidator.validate(path: file, inspector: await ScheduleLoader.inspector(forSchedule: file, opening: .everything))
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
