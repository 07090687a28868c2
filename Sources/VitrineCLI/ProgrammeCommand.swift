import ArgumentParser
import Scheduling
import ShowRunner

/// `vitrine programme SCHEDULE --from … --to …`: the resolved timeline, for checking a schedule
/// before it goes out.
struct ProgrammeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "programme",
        abstract: "Print what plays when: each change with its entry, playlist (or each zone of a layout), item and position.",
        discussion: """
            Times are ISO 8601: with Z or an offset they are absolute; without, they are wall-clock \
            times in the schedule's time zone ("2026-03-30T08:00", "2026-03-30"). Each change is shown \
            in the schedule's zone and in UTC. --json prints the stable format described in \
            Schedules/README.md.
            """)

    @Argument(help: "The schedule file (.toml or .json).")
    var schedule: String

    @Option(help: "Start of the period (ISO 8601).")
    var from: String

    @Option(help: "End of the period (ISO 8601, exclusive).")
    var to: String

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    @Flag(help: "Show only changes of entry or window, not every item change inside one.")
    var entriesOnly = false

    func run() async throws {
        let report = ScheduleValidator.validate(path: schedule, inspector: await ScheduleLoader.inspector(forSchedule: schedule, opening: .everything))
        guard let resolved = report.schedule else {
            for diagnostic in report.diagnostics { printError(diagnostic.description) }
            throw ExitCode(report.exitStatus)
        }
        let zone = resolved.timeZone
        guard let start = zone.parseInstant(from) else { throw ValidationError("--from \"\(from)\" is not an ISO 8601 date or date-time") }
        guard let end = zone.parseInstant(to) else { throw ValidationError("--to \"\(to)\" is not an ISO 8601 date or date-time") }
        for (option, text, instant) in [("--from", from, start), ("--to", to, end)] where !UTCInstant.addressable.contains(instant) {
            throw ValidationError("\(option) \"\(text)\" is outside the times a schedule can be asked about (\(UTCInstant.addressableDescription))")
        }
        guard start < end else { throw ValidationError("--to must be after --from") }
        for diagnostic in report.diagnostics { printError(diagnostic.description) }
        let programme = ProgrammeReport(schedule: resolved, from: start, to: end, entriesOnly: entriesOnly)
        print(json ? programme.json() : programme.text(), terminator: "")
    }
}
