import Foundation
import Testing
@testable import Scheduling

/// Bad input gets diagnostics, never a crash or a hang.
@Suite("Malformed schedules")
struct MalformedInputTests {
    /// Mutates `text` by deleting, duplicating or inserting characters and lines.
    static func mutate(_ text: String, using rng: inout SeededGenerator) -> String {
        var chars = Array(text)
        let inserts: [Character] = ["\"", "'", "[", "]", "{", "}", "=", "\n", "#", ".", ",", "\\", "0", "-", ":", " ", "é", "\u{0}"]
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            guard !chars.isEmpty else { break }
            let at = Int.random(in: 0..<chars.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: chars.remove(at: at)
            case 1: chars.insert(inserts.randomElement(using: &rng)!, at: at)
            case 2:
                let end = min(chars.count, at + Int.random(in: 1...40, using: &rng))
                chars.insert(contentsOf: chars[at..<end], at: at)
            default:
                let end = min(chars.count, at + Int.random(in: 1...20, using: &rng))
                chars.removeSubrange(at..<end)
            }
        }
        return String(chars)
    }

    @Test("2000 mutated schedules, TOML and JSON, all end in a schedule or diagnostics with positions")
    func mutations() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["MUTATION_ROUNDS"] ?? "") ?? 2000
        var rng = SeededGenerator(seed: 2026)
        let toml = [DiagnosticsTests.base, ReadingTests.toml]
        let json = [ReadingTests.json]
        var rejected = 0
        for round in 0..<rounds {
            let isJSON = round % 4 == 3
            let source = isJSON ? json[0] : toml[round % toml.count]
            let text = Self.mutate(source, using: &rng)
            let path = isJSON ? "/tmp/m.json" : "/tmp/m.toml"
            if let dump = ProcessInfo.processInfo.environment["DUMP_MUTATION"] { try text.write(toFile: dump, atomically: false, encoding: .utf8) }
            let report = ScheduleValidator.validate(text: text, path: path, inspector: FixedInspector(),
                                                    referenceDate: LocalDate(year: 2026, month: 1, day: 1)!)
            if report.schedule == nil {
                rejected += 1
                #expect(!report.diagnostics.isEmpty)
                #expect(report.diagnostics.allSatisfy { $0.location.file == path && $0.location.line >= 1 })
            }
        }
        #expect(rejected > 500)
    }

    /// "5\u{652}s" (a digit with an Arabic sukun) passed the digit check and crashed on `Int64(…)!`:
    /// found by Fuzz/FuzzScheduleJSON, kept in Fuzz/Regressions.
    @Test("Digits with combining marks are not digits: a diagnostic, not a crash")
    func combiningMarksOnDigits() {
        for text in ["5\u{652}s", "5\u{652}", "1\u{301}.5", "0.5\u{301}", "00:0\u{301}1", "1h3\u{20DD}0m"] {
            #expect(TimeSyntax.duration(text) == nil, "\(text)")
        }
        let toml = ScheduleReader.parse(text: "version = 1\n[restart]\nbackoff = \"5\u{652}s\"\n", path: "c.toml")
        #expect(toml.schedule == nil && toml.diagnostics.contains { $0.location.line == 3 })
        let json = ScheduleReader.parse(text: "{\"version\": 1, \"restart\": {\"backoff\": \"5\u{652}s\"}}", path: "c.json")
        #expect(json.schedule == nil && !json.diagnostics.isEmpty)
    }

    @Test("Empty, binary and huge inputs")
    func oddInputs() {
        #expect(ScheduleReader.parse(text: "", path: "e.toml").diagnostics.map(\.kind) == [.missingKey, .emptySchedule])
        #expect(ScheduleReader.parse(text: "\u{0}\u{1}\u{2}", path: "b.toml").diagnostics.map(\.kind) == [.syntax])
        #expect(ScheduleReader.parse(text: "[", path: "j.json").diagnostics.map(\.kind) == [.syntax])
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(ScheduleReader.parse(text: "{\"a\": \(deep)}", path: "d.json").diagnostics.map(\.kind) == [.syntax])
        let many = "version = 1\nfallback = \"p\"\n" + (0..<2000).map { "[[playlists.p.items]]\nimage = \"i\($0).png\"\nduration = 1\n" }.joined()
        #expect(ScheduleReader.parse(text: many, path: "m.toml").schedule?.playlists["p"]?.items.count == 2000)
    }
}
