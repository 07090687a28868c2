import MediaTime
import Testing
@testable import Scheduling

/// Windows around daylight-saving changes, in the zones operators use most.
@Suite("Resolver across DST transitions")
struct ResolverDSTTests {
    /// A schedule with one entry `window` and a 60 s clip playlist, plus a fallback.
    func makeSchedule(zone: String, entry: String) throws -> Schedule {
        try schedule("""
            version = 1
            timezone = "\(zone)"
            fallback = "idle"
            [[playlists.idle.items]]
            image = "idle.png"
            duration = "10s"
            [[playlists.show.items]]
            video = "clip.mp4"
            [entries.window]
            playlist = "show"
            \(entry)
            """, durations: ["clip.mp4": seconds(60)])
    }

    @Test("Berlin: a window spanning the spring change is an hour shorter in real time")
    func berlinSpringSpan() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: "start = \"00:00\"\nend = \"06:00\"")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-03-29")))
        #expect(occurrence.start == instant("2026-03-28T23:00:00Z"))
        #expect(occurrence.end == instant("2026-03-29T04:00:00Z"))
        // 03:30 CEST is 2.5 real hours after the start: 150 loops of 60 s, position 0.
        let state = resolver.resolve(at: instant("2026-03-29T01:30:00Z"))
        #expect(state.entry?.name == "window")
        #expect(state.position == .zero)
        #expect(state.nextChange == instant("2026-03-29T01:31:00Z"))
    }

    @Test("Berlin: a window spanning the autumn change is an hour longer")
    func berlinAutumnSpan() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: "start = \"00:00\"\nend = \"06:00\"")
        let occurrence = try #require(ScheduleResolver(schedule: s).occurrence(of: s.entries[0], on: date("2026-10-25")))
        #expect(occurrence.end.since(occurrence.start) == seconds(7 * 3600))
    }

    @Test("Berlin: a window starting in the skipped hour starts when clocks reach it (03:30 CEST)")
    func berlinSkippedHour() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: "start = \"02:30\"\nend = \"04:00\"")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-03-29")))
        #expect(occurrence.start == instant("2026-03-29T01:30:00Z"))
        #expect(occurrence.end == instant("2026-03-29T02:00:00Z"))
        #expect(resolver.resolve(at: instant("2026-03-29T01:29:59Z")).isFallback)
        #expect(resolver.resolve(at: instant("2026-03-29T01:29:59Z")).nextChange == instant("2026-03-29T01:30:00Z"))
        #expect(resolver.resolve(at: instant("2026-03-29T01:30:00Z")).entry?.name == "window")
        // The day before and after: 1.5 h windows at the usual offsets.
        #expect(resolver.occurrence(of: s.entries[0], on: date("2026-03-28"))?.start == instant("2026-03-28T01:30:00Z"))
        #expect(resolver.occurrence(of: s.entries[0], on: date("2026-03-30"))?.start == instant("2026-03-30T00:30:00Z"))
    }

    @Test("Berlin: a window entirely inside the skipped hour moves an hour later with both ends (nothing is lost)")
    func berlinWindowInsideGap() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: "start = \"02:10\"\nend = \"02:50\"")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-03-29")))
        #expect(occurrence.start == instant("2026-03-29T01:10:00Z"))  // 03:10 CEST
        #expect(occurrence.end == instant("2026-03-29T01:50:00Z"))    // 03:50 CEST
    }

    @Test("Berlin: a window at the repeated hour starts at its first occurrence and ends at the first 03:00")
    func berlinRepeatedHour() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: "start = \"02:30\"\nend = \"03:00\"")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-10-25")))
        #expect(occurrence.start == instant("2026-10-25T00:30:00Z"))  // 02:30 CEST
        #expect(occurrence.end == instant("2026-10-25T02:00:00Z"))    // 03:00 CET
        // During the second 02:30 (CET) the window is still running: 60 min in.
        let state = resolver.resolve(at: instant("2026-10-25T01:30:00Z"))
        #expect(state.entry?.name == "window")
        #expect(state.itemStart == instant("2026-10-25T01:30:00Z"))
    }

    @Test("New York: spring forward at 02:00, a window over the change and one in the skipped hour")
    func newYorkSpring() throws {
        let spanning = try makeSchedule(zone: "America/New_York", entry: "start = \"01:00\"\nend = \"04:00\"")
        let occurrence = try #require(ScheduleResolver(schedule: spanning).occurrence(of: spanning.entries[0], on: date("2026-03-08")))
        #expect(occurrence.start == instant("2026-03-08T06:00:00Z"))  // 01:00 EST
        #expect(occurrence.end == instant("2026-03-08T08:00:00Z"))    // 04:00 EDT: 2 real hours
        let skipped = try makeSchedule(zone: "America/New_York", entry: "start = \"02:15\"\nend = \"05:00\"")
        let late = try #require(ScheduleResolver(schedule: skipped).occurrence(of: skipped.entries[0], on: date("2026-03-08")))
        #expect(late.start == instant("2026-03-08T07:15:00Z"))  // 03:15 EDT
    }

    @Test("New York: fall back, the repeated 01:00–02:00 hour")
    func newYorkFall() throws {
        let s = try makeSchedule(zone: "America/New_York", entry: "start = \"01:30\"\nend = \"02:30\"")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-11-01")))
        #expect(occurrence.start == instant("2026-11-01T05:30:00Z"))  // 01:30 EDT
        #expect(occurrence.end == instant("2026-11-01T07:30:00Z"))    // 02:30 EST: two real hours
        // The second 01:30 (EST) is an hour into the window.
        #expect(resolver.resolve(at: instant("2026-11-01T06:30:00Z")).entry?.name == "window")
    }

    @Test("New York: an overnight window across the autumn change lasts an hour more")
    func newYorkOvernight() throws {
        let s = try makeSchedule(zone: "America/New_York", entry: "start = \"22:00\"\nend = \"06:00\"\ndays = [\"sat\"]")
        let resolver = ScheduleResolver(schedule: s)
        let occurrence = try #require(resolver.occurrence(of: s.entries[0], on: date("2026-10-31")))
        #expect(occurrence.start == instant("2026-11-01T02:00:00Z"))
        #expect(occurrence.end == instant("2026-11-01T11:00:00Z"))
        // Sunday 05:59 EST still belongs to Saturday's window; Sunday night has none.
        #expect(resolver.resolve(at: instant("2026-11-01T10:59:00Z")).entry?.name == "window")
        #expect(resolver.resolve(at: instant("2026-11-01T11:00:00Z")).isFallback)
        #expect(resolver.resolve(at: instant("2026-11-02T04:00:00Z")).isFallback)
    }

    @Test("A daily rule keeps its wall-clock time across the change (08:00 before and after)")
    func dailyRuleAcrossChange() throws {
        let s = try makeSchedule(zone: "Europe/Berlin", entry: """
            start = "08:00"
            end = "09:00"
            from = 2026-03-27
            rrule = "FREQ=DAILY;COUNT=4"
            """)
        let resolver = ScheduleResolver(schedule: s)
        let starts = resolver.occurrences(of: s.entries[0], from: instant("2026-03-26T00:00:00Z"), to: instant("2026-04-05T00:00:00Z")).map(\.start)
        #expect(starts == [instant("2026-03-27T07:00:00Z"), instant("2026-03-28T07:00:00Z"),
                           instant("2026-03-29T06:00:00Z"), instant("2026-03-30T06:00:00Z")])
    }
}
