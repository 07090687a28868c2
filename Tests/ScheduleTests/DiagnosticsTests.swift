import Foundation
import MediaTime
import Testing
@testable import Scheduling

/// `vitrine validate`'s checks: each kind of mistake is reported at file:line(:column).
@Suite("Validation reports each mistake where it was made")
struct DiagnosticsTests {
    /// A valid schedule; each case replaces one line (marked by its text) to introduce a mistake.
    static let base = """
        version = 1
        timezone = "Europe/Berlin"
        fallback = "loop"

        [display]
        rotation = 90

        [[playlists.loop.items]]
        video = "clip.mp4"
        volume = 0.5

          [[playlists.loop.items.overlays]]
          image = "logo.png"
          rect = [0.7, 0.05, 0.25, 0.1]
          opacity = 0.9
          at = "00:00:05"
          duration = "5s"

        [[playlists.loop.items]]
        image = "still.png"
        duration = "10s"

        [entries.morning]
        playlist = "loop"
        days = ["mon", "tue"]
        start = "08:00"
        end = "10:00"
        from = 2026-01-01
        until = 2026-12-31
        """

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var replace: String
        var with: String
        var kind: ScheduleDiagnostic.Kind
        var line: Int
        var column: Int?
        var mentions: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "TOML syntax", replace: "volume = 0.5", with: "volume = = 0.5", kind: .syntax, line: 10, column: nil, mentions: "TOML syntax"),
        Case(name: "unknown key with a suggestion", replace: "volume = 0.5", with: "volum = 0.5", kind: .unknownKey, line: 10, column: 1, mentions: "did you mean \"volume\""),
        Case(name: "unknown top-level key", replace: "fallback = \"loop\"", with: "fallback = \"loop\"\nfalback = \"x\"", kind: .unknownKey, line: 4, column: 1, mentions: "did you mean \"fallback\""),
        Case(name: "wrong type", replace: "volume = 0.5", with: "volume = \"loud\"", kind: .wrongType, line: 10, column: 1, mentions: "must be a number"),
        Case(name: "missing playlist in an entry", replace: "playlist = \"loop\"\ndays", with: "days", kind: .missingKey, line: 23, column: 1, mentions: "needs a \"playlist\""),
        Case(name: "unsupported version", replace: "version = 1", with: "version = 7", kind: .unsupportedVersion, line: 1, column: 1, mentions: "version 7"),
        Case(name: "malformed duration", replace: "duration = \"5s\"", with: "duration = \"5 sec\"", kind: .malformedDuration, line: 17, column: 3, mentions: "\"5 sec\""),
        Case(name: "malformed cue", replace: "at = \"00:00:05\"", with: "at = \"halfway\"", kind: .malformedCue, line: 16, column: 3, mentions: "\"halfway\""),
        Case(name: "malformed time of day", replace: "start = \"08:00\"", with: "start = \"25:00\"", kind: .malformedTimeOfDay, line: 26, column: 1, mentions: "25:00"),
        Case(name: "date that does not exist", replace: "until = 2026-12-31", with: "until = \"2026-02-30\"", kind: .malformedDate, line: 29, column: 1, mentions: "2026-02-30"),
        Case(name: "unknown time zone", replace: "timezone = \"Europe/Berlin\"", with: "timezone = \"Europe/Berln\"", kind: .unknownTimeZone, line: 2, column: 1, mentions: "did you mean \"Europe/Berlin\""),
        Case(name: "unknown weekday", replace: "days = [\"mon\", \"tue\"]", with: "days = [\"mon\", \"tuseday\"]", kind: .unknownWeekday, line: 25, column: 16, mentions: "did you mean \"tuesday\""),
        Case(name: "unknown playlist", replace: "playlist = \"loop\"", with: "playlist = \"lop\"", kind: .unknownPlaylist, line: 24, column: 1, mentions: "did you mean \"loop\""),
        Case(name: "empty playlist", replace: "[entries.morning]", with: "[playlists.empty]\nitems = []\n[entries.morning]", kind: .emptyPlaylist, line: 24, column: 1, mentions: "no items"),
        Case(name: "two sources in one item", replace: "volume = 0.5", with: "image = \"x.png\"", kind: .conflictingKeys, line: 10, column: 1, mentions: "both"),
        Case(name: "opacity out of range", replace: "opacity = 0.9", with: "opacity = 1.5", kind: .outOfRange, line: 15, column: 3, mentions: "opacity"),
        Case(name: "rotation not a right angle", replace: "rotation = 90", with: "rotation = 45", kind: .invalidValue, line: 6, column: 1, mentions: "rotation"),
        Case(name: "out point before in point", replace: "volume = 0.5", with: "in = \"00:00:20\"\nout = \"00:00:10\"", kind: .invalidTrim, line: 11, column: 1, mentions: "not after the in point"),
        Case(name: "cue after the end of a 30 s clip", replace: "at = \"00:00:05\"", with: "at = \"00:00:40\"", kind: .cueOutsideItem, line: 16, column: 3, mentions: "outside the item"),
        Case(name: "cue before the start of a short image", replace: "duration = \"10s\"", with: "duration = \"10s\"\n  [[playlists.loop.items.overlays]]\n  text = \"x\"\n  at = \"end-12s\"", kind: .cueOutsideItem, line: 24, column: 3, mentions: "outside the item"),
        Case(name: "missing media file", replace: "video = \"clip.mp4\"", with: "video = \"gone.mp4\"", kind: .missingMedia, line: 8, column: 1, mentions: "gone.mp4"),
        Case(name: "unreadable media file", replace: "video = \"clip.mp4\"", with: "video = \"corrupt.mp4\"", kind: .unreadableMedia, line: 8, column: 1, mentions: "Invalid data"),
        Case(name: "equal priorities that overlap", replace: "until = 2026-12-31", with: "until = 2026-12-31\n[entries.also]\nplaylist = \"loop\"\ndays = [\"tue\"]\nstart = \"09:00\"\nend = \"11:00\"", kind: .overlappingEntries, line: 30, column: 1, mentions: "same priority 0"),
        Case(name: "invalid recurrence", replace: "until = 2026-12-31", with: "rrule = \"FREQ=YEARLY\"", kind: .invalidRecurrence, line: 29, column: 1, mentions: "YEARLY"),
        Case(name: "misspelt RRULE part", replace: "until = 2026-12-31", with: "rrule = \"FREQ=DAILY;CONT=3\"", kind: .invalidRecurrence, line: 29, column: 1, mentions: "did you mean COUNT"),
        Case(name: "date range backwards", replace: "until = 2026-12-31", with: "until = 2025-12-31", kind: .invalidDateRange, line: 29, column: 1, mentions: "before"),
        Case(name: "image without a duration", replace: "duration = \"10s\"", with: "gravity = \"fill\"", kind: .missingKey, line: 19, column: 1, mentions: "needs a \"duration\""),
        Case(name: "bad colour", replace: "image = \"logo.png\"", with: "text = \"Hello\"\n  color = \"white\"", kind: .invalidValue, line: 14, column: 3, mentions: "colour"),
        Case(name: "overlay rectangle off screen", replace: "rect = [0.7, 0.05, 0.25, 0.1]", with: "rect = [0.9, 0.05, 0.25, 0.1]", kind: .outOfRange, line: 14, column: 3, mentions: "does not fit"),
        Case(name: "bad gravity with a suggestion", replace: "volume = 0.5", with: "gravity = \"fil\"", kind: .invalidValue, line: 10, column: 1, mentions: "did you mean \"fill\""),
        Case(name: "no days at all", replace: "days = [\"mon\", \"tue\"]", with: "days = []", kind: .invalidValue, line: 25, column: 1, mentions: "never play"),
        Case(name: "interrupt without a start", replace: "start = \"08:00\"", with: "interrupt = true", kind: .missingKey, line: 26, column: 1, mentions: "needs a \"start\""),
    ]

    static let inspector = FixedInspector(durations: ["clip.mp4": seconds(30)], missing: ["gone.mp4"], unreadable: ["corrupt.mp4"])

    @Test("The base schedule is valid")
    func baseIsValid() {
        let found = diagnostics(Self.base, inspector: Self.inspector)
        #expect(found.isEmpty, "\(found)")
    }

    @Test("Each mistake is reported with its kind, line and column", arguments: cases)
    func mistake(_ c: Case) throws {
        #expect(Self.base.contains(c.replace), "the case must change the base")
        let text = Self.base.replacingOccurrences(of: c.replace, with: c.with)
        let found = diagnostics(text, path: "/srv/signage/lobby.toml", inspector: Self.inspector)
        let match = found.first { $0.kind == c.kind }
        let diagnostic = try #require(match, "expected \(c.kind) in \(found)")
        #expect(diagnostic.severity == .error)
        #expect(diagnostic.location.file == "/srv/signage/lobby.toml")
        #expect(diagnostic.location.line == c.line, "\(diagnostic)")
        if let column = c.column { #expect(diagnostic.location.column == column, "\(diagnostic)") }
        #expect(diagnostic.message.contains(c.mentions), "\(diagnostic)")
        #expect(diagnostic.description.hasPrefix("/srv/signage/lobby.toml:\(c.line):"))
    }

    @Test("At least 20 kinds of mistakes are covered")
    func coverage() {
        #expect(Set(Self.cases.map(\.kind)).count >= 20)
    }

    @Test("Every problem is reported, not just the first, in file order")
    func everyProblem() {
        let text = Self.base
            .replacingOccurrences(of: "rotation = 90", with: "rotation = 45")
            .replacingOccurrences(of: "volume = 0.5", with: "volum = 0.5")
            .replacingOccurrences(of: "at = \"00:00:05\"", with: "at = \"later\"")
            .replacingOccurrences(of: "start = \"08:00\"", with: "start = \"8 o'clock\"")
            .replacingOccurrences(of: "playlist = \"loop\"", with: "playlist = \"lop\"")
        let found = diagnostics(text, inspector: Self.inspector)
        #expect(found.map(\.kind) == [.invalidValue, .unknownKey, .malformedCue, .unknownPlaylist, .malformedTimeOfDay])
        #expect(found.map(\.location.line) == [6, 10, 16, 24, 26])
    }

    @Test("An empty schedule with no fallback is an error at line 1")
    func emptySchedule() {
        let found = diagnostics("version = 1\n")
        #expect(found.map(\.kind) == [.emptySchedule])
        #expect(found.first?.location.line == 1)
    }

    @Test("A missing version is reported")
    func missingVersion() {
        let found = diagnostics("fallback = \"p\"\n[[playlists.p.items]]\nimage = \"a.png\"\nduration = 5\n")
        #expect(found.map(\.kind) == [.missingKey])
        #expect(found.first?.message.contains("version") == true)
    }

    @Test("JSON schedules get the same checks with JSON line and column")
    func json() {
        let text = """
            {
              "version": 1,
              "fallback": "p",
              "playlists": {
                "p": {"items": [
                  {"image": "a.png", "duraton": "5s"}
                ]}
              }
            }
            """
        let found = diagnostics(text, path: "/tmp/s.json")
        let unknown = found.first { $0.kind == .unknownKey }
        #expect(unknown?.location == SourceLocation(file: "/tmp/s.json", line: 6, column: 26))
        #expect(unknown?.message.contains("did you mean \"duration\"") == true)
        let syntax = diagnostics("{\n  \"version\": 1,\n  \"version\": 2\n}", path: "/tmp/s.json")
        #expect(syntax.map(\.kind) == [.syntax])
        #expect(syntax.first?.location.line == 3)
        let broken = diagnostics("{\n  \"version\": 1,\n  \"fallback\" \"p\"\n}", path: "/tmp/s.json")
        #expect(broken.first?.location.line == 3)
    }

    @Test("Real files: a missing file and an empty one are found without any probe")
    func realFiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("present.png"))
        try Data().write(to: folder.appendingPathComponent("empty.mp4"))
        let text = """
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            image = "present.png"
            duration = "5s"
            [[playlists.p.items]]
            video = "empty.mp4"
            [[playlists.p.items]]
            video = "absent.mp4"
            """
        let path = folder.appendingPathComponent("schedule.toml").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        let report = ScheduleValidator.validate(path: path)
        #expect(report.diagnostics.map(\.kind) == [.unreadableMedia, .missingMedia])
        #expect(report.diagnostics.map(\.location.line) == [6, 8])
        #expect(report.exitStatus == 1)
        let unreadable = ScheduleValidator.validate(path: folder.appendingPathComponent("nope.toml").path)
        #expect(unreadable.exitStatus == 2)
    }
}
