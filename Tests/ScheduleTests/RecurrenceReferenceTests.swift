import Foundation
import Testing
@testable import Scheduling

/// Recurrence expansion checked against python-dateutil's rrule on randomised rules.
@Suite("Recurrence matches python-dateutil")
struct RecurrenceReferenceTests {
    struct Case {
        var dtstart: LocalDateTime
        var rule: String
        var exdates: [LocalDate]
    }

    static func randomCases(count: Int, seed: UInt64) -> [Case] {
        var rng = SeededGenerator(seed: seed)
        let days = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]
        var cases: [Case] = []
        while cases.count < count {
            let year = Int.random(in: 2020...2030, using: &rng)
            let month = Int.random(in: 1...12, using: &rng)
            let day = Int.random(in: 1...LocalDate.daysIn(month: month, year: year), using: &rng)
            let start = LocalDate(year: year, month: month, day: day)!
            let time = LocalTime(hour: Int.random(in: 0...23, using: &rng), minute: [0, 15, 30, 45].randomElement(using: &rng)!)!
            let frequency = ["DAILY", "WEEKLY", "MONTHLY"].randomElement(using: &rng)!
            var parts = ["FREQ=\(frequency)"]
            if Bool.random(using: &rng) { parts.append("INTERVAL=\(Int.random(in: 1...4, using: &rng))") }
            let byDayChance = frequency == "WEEKLY" ? 50 : (frequency == "MONTHLY" ? 40 : 30)
            if Int.random(in: 0..<100, using: &rng) < byDayChance {
                let picked = days.shuffled(using: &rng).prefix(Int.random(in: 1...3, using: &rng))
                let ordinals = frequency == "MONTHLY" && Bool.random(using: &rng)
                let elements = picked.map { code -> String in
                    if ordinals {
                        return "\([-2, -1, 1, 2, 3, 4, 5].randomElement(using: &rng)!)\(code)"
                    }
                    return code
                }
                parts.append("BYDAY=" + elements.joined(separator: ","))
            }
            if Int.random(in: 0..<100, using: &rng) < 25 {
                let values = (0..<Int.random(in: 1...2, using: &rng)).map { _ in
                    Bool.random(using: &rng) ? Int.random(in: 1...31, using: &rng) : -Int.random(in: 1...3, using: &rng)
                }
                parts.append("BYMONTHDAY=" + Array(Set(values)).sorted().map(String.init).joined(separator: ","))
            }
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...3:
                parts.append("COUNT=\(Int.random(in: 1...30, using: &rng))")
            case 4...6:
                let until = start.adding(days: Int.random(in: 0...800, using: &rng))
                let compact = until.description.replacingOccurrences(of: "-", with: "")
                if Bool.random(using: &rng) {
                    parts.append("UNTIL=\(compact)")
                } else {
                    // Sometimes exactly the start time: that occurrence is included.
                    let t = Bool.random(using: &rng) ? time : LocalTime(hour: Int.random(in: 0...23, using: &rng), minute: 0)!
                    parts.append("UNTIL=\(compact)T\(pad(t.hour, 2))\(pad(t.minute, 2))00")
                }
            default: break
            }
            if Int.random(in: 0..<100, using: &rng) < 15 { parts.append("WKST=\(days.randomElement(using: &rng)!)") }
            var exdates: [LocalDate] = []
            if Int.random(in: 0..<100, using: &rng) < 20 {
                exdates = (0..<Int.random(in: 1...3, using: &rng)).map { _ in start.adding(days: Int.random(in: 0...90, using: &rng)) }
            }
            cases.append(Case(dtstart: LocalDateTime(date: start, time: time), rule: parts.shuffled(using: &rng).joined(separator: ";"), exdates: exdates))
        }
        return cases
    }

    /// The dates on which `entry` starts a window, first `limit`, up to `through`.
    static func vitrineDates(_ entry: Entry, from: LocalDate, through: LocalDate, limit: Int) -> [LocalDate] {
        var dates: [LocalDate] = []
        var day = from
        while day <= through && dates.count < limit {
            if entry.startsWindow(on: day) { dates.append(day) }
            day = day.adding(days: 1)
        }
        return dates
    }

    @Test("600 random rules expand exactly as dateutil's rrule does, EXDATEs included")
    func randomRulesMatchDateutil() throws {
        let cases = Self.randomCases(count: 600, seed: 20_261_121)
        let limit = 60
        var input: [[String: Any]] = []
        var entries: [Entry] = []
        for (id, c) in cases.enumerated() {
            let rule = try RecurrenceRule(parsing: c.rule, dtstart: c.dtstart)
            let location = SourceLocation(file: "random", line: id + 1, column: 1)
            entries.append(Entry(name: "r\(id)", content: .playlist("p"), start: c.dtstart.time, firstDate: c.dtstart.date,
                                 recurrence: rule, exceptionDates: Set(c.exdates), location: location))
            input.append(["id": id, "dtstart": c.dtstart.description, "rrule": c.rule,
                          "exdates": c.exdates.map(\.description), "limit": limit,
                          "through": c.dtstart.date.adding(days: 6 * 366).description])
        }
        let script = packageRoot + "/scripts/rrule_reference.py"
        let output = try runPython(script: script, input: try JSONSerialization.data(withJSONObject: input))
        let results = try #require(try JSONSerialization.jsonObject(with: output) as? [[String: Any]])
        #expect(results.count == cases.count)
        var compared = 0
        var nonEmpty = 0
        for result in results {
            let id = try #require(result["id"] as? Int)
            let expected = try #require(result["dates"] as? [String])
            let c = cases[id]
            let ours = Self.vitrineDates(entries[id], from: c.dtstart.date, through: c.dtstart.date.adding(days: 6 * 366), limit: limit)
            #expect(ours.map(\.description) == expected, "rule \(c.rule) from \(c.dtstart) exdates \(c.exdates)")
            compared += 1
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(compared >= 500)
        // The generator must exercise real expansions, not mostly empty rules.
        #expect(nonEmpty >= 450)
    }

    @Test("The rule's own expansion agrees with day-by-day matching")
    func expansionAgreesWithMatching() throws {
        for c in Self.randomCases(count: 200, seed: 7) {
            let rule = try RecurrenceRule(parsing: c.rule, dtstart: c.dtstart)
            let through = c.dtstart.date.adding(days: 3 * 366)
            let expanded = rule.occurrences(limit: 40, through: through)
            var matched: [LocalDate] = []
            var day = c.dtstart.date
            while day <= through && matched.count < 40 {
                if rule.occurs(on: day) { matched.append(day) }
                day = day.adding(days: 1)
            }
            #expect(expanded == matched, "\(c.rule) from \(c.dtstart)")
        }
    }
}
