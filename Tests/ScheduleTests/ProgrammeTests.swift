import Foundation
import MediaTime
import Testing
@testable import Scheduling

@Suite("Programme report (vitrine programme)")
struct ProgrammeTests {
    static let text = """
        version = 1
        timezone = "Europe/Berlin"
        fallback = "idle"
        [[playlists.idle.items]]
        image = "idle.png"
        duration = "1h"
        [[playlists.morning.items]]
        video = "news.mp4"
        [[playlists.morning.items]]
        image = "weather.png"
        duration = "30s"
        [entries.mornings]
        playlist = "morning"
        start = "08:00"
        end = "08:05"
        from = 2026-03-23
        rrule = "FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=5"
        """

    func report(entriesOnly: Bool = false) throws -> ProgrammeReport {
        let s = try schedule(Self.text, path: "/tmp/p.toml", durations: ["news.mp4": seconds(90)])
        let zone = s.timeZone
        return ProgrammeReport(schedule: s, from: try #require(zone.parseInstant("2026-03-23")),
                               to: try #require(zone.parseInstant("2026-04-06")), entriesOnly: entriesOnly)
    }

    func changes(_ report: ProgrammeReport) throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any]
        #expect(object?["format"] as? String == "vitrine-programme")
        #expect(object?["version"] as? Int == 1)
        #expect(object?["timezone"] as? String == "Europe/Berlin")
        return try #require(object?["changes"] as? [[String: Any]])
    }

    @Test("The JSON lists each change in local time and UTC, agreeing with the resolver")
    func jsonAgreesWithResolver() throws {
        let report = try report()
        let rows = try changes(report)
        #expect(rows.count == report.states.count)
        let resolver = ScheduleResolver(schedule: report.schedule)
        for row in rows {
            let utc = try #require(row["utc"] as? String)
            let state = resolver.resolve(at: instant(utc))
            #expect(row["entry"] as? String == state.entry?.name)
            #expect(row["playlist"] as? String == state.playlistName)
            #expect(row["item"] as? Int == state.itemIndex)
            #expect(row["fallback"] as? Bool == state.isFallback)
            let position = try #require(row["position_seconds"] as? Double)
            #expect(abs(position - state.position.seconds) < 1e-9)
            let local = try #require(row["local"] as? String)
            #expect(report.schedule.timeZone.parseInstant(local) == instant(utc))
            if let next = row["next_change"] as? [String: String], let nextUTC = next["utc"] {
                #expect(instant(nextUTC) == state.nextChange)
            }
        }
        // Monday 2026-03-30, after the change to summer time: 08:00 CEST is 06:00 UTC.
        let monday = rows.first { ($0["local"] as? String) == "2026-03-30T08:00:00+02:00" }
        #expect(monday?["utc"] as? String == "2026-03-30T06:00:00Z")
        #expect(monday?["entry"] as? String == "mornings")
        #expect(monday?["media"] as? String == "news.mp4")
        // News 90 s, weather 30 s: the weather starts at 08:01:30.
        #expect(rows.contains { ($0["local"] as? String) == "2026-03-30T08:01:30+02:00" && ($0["item"] as? Int) == 1 })
    }

    @Test("Window starts in the programme match dateutil's expansion of the entry's rule")
    func windowsMatchDateutil() throws {
        let report = try report(entriesOnly: true)
        let rows = try changes(report)
        let starts = rows.filter { ($0["entry"] as? String) == "mornings" }.compactMap { $0["local"] as? String }
        let input: [[String: Any]] = [["id": 0, "dtstart": "2026-03-23T08:00:00", "rrule": "FREQ=WEEKLY;BYDAY=MO,WE,FR;COUNT=5",
                                       "exdates": [String](), "limit": 100, "through": "2026-04-05"]]
        let output = try runPython(script: packageRoot + "/scripts/rrule_reference.py", input: try JSONSerialization.data(withJSONObject: input))
        let reference = try #require((try JSONSerialization.jsonObject(with: output) as? [[String: Any]])?.first?["dates"] as? [String])
        #expect(reference.count == 5)
        // Before 29 March Berlin is at +01:00, after it at +02:00.
        let expected = reference.map { $0 + "T08:00:00" + ($0 < "2026-03-29" ? "+01:00" : "+02:00") }
        #expect(starts == expected)
        // Entries-only: each row's next change is the next row, and a window is one row,
        // followed by the fallback at its end.
        for (row, following) in zip(rows, rows.dropFirst()) {
            #expect((row["next_change"] as? [String: String])?["utc"] == following["utc"] as? String)
        }
        #expect(rows.count == 11)
        let afterFirst = rows.first { ($0["local"] as? String) == "2026-03-23T08:05:00+01:00" }
        #expect(afterFirst?["fallback"] as? Bool == true)
    }

    @Test("The text table shows the zone, local and UTC times")
    func textTable() throws {
        let text = try report(entriesOnly: true).text()
        #expect(text.contains("in Europe/Berlin"))
        #expect(text.contains("2026-03-30T08:00:00+02:00 CEST  2026-03-30T06:00:00Z  mornings"))
        #expect(text.contains("(fallback)"))
    }

    @Test("ISO 8601 arguments: absolute with Z or offset, or wall time in the schedule's zone")
    func parsingInstants() throws {
        let berlin = try ZoneInfo(identifier: "Europe/Berlin")
        #expect(berlin.parseInstant("2026-03-30T08:00") == instant("2026-03-30T06:00:00Z"))
        #expect(berlin.parseInstant("2026-03-30T08:00:00+05:00") == instant("2026-03-30T03:00:00Z"))
        #expect(berlin.parseInstant("2026-03-30T08:00Z") == instant("2026-03-30T08:00:00Z"))
        #expect(berlin.parseInstant("2026-01-01") == instant("2025-12-31T23:00:00Z"))
        #expect(berlin.parseInstant("Monday 8am") == nil)
    }
}
