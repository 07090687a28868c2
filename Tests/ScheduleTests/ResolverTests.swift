import MediaTime
import Testing
@testable import Scheduling

@Suite("Resolver: what plays now and what changes next")
struct ResolverTests {
    /// Playlists: "loop" = a.mp4 (30 s) then b.png (10 s, repeat 2); "news" = n.mp4 (45 s); "alert" = siren.mp4 (20 s).
    func makeSchedule(entries: String, fallback: String? = "loop", zone: String = "UTC") throws -> Schedule {
        try schedule("""
            version = 1
            timezone = "\(zone)"
            \(fallback.map { "fallback = \"\($0)\"" } ?? "")
            [[playlists.loop.items]]
            video = "a.mp4"
            [[playlists.loop.items]]
            image = "b.png"
            duration = "10s"
            repeat = 2
            [[playlists.news.items]]
            video = "n.mp4"
            [[playlists.alert.items]]
            video = "siren.mp4"
            \(entries)
            """, durations: ["a.mp4": seconds(30), "n.mp4": seconds(45), "siren.mp4": seconds(20)])
    }

    @Test("The fallback loops from the epoch: item, repetition and position follow the wall clock")
    func fallbackPositions() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: ""))
        // Pass = 30 + 2×10 = 50 s. 2026-01-01T00:00:00Z is 1_767_225_600 s = 35_344_512 passes exactly.
        let start = instant("2026-01-01T00:00:00Z")
        var state = resolver.resolve(at: start)
        #expect(state.isFallback && state.itemIndex == 0 && state.position == .zero)
        #expect(state.nextChange == instant("2026-01-01T00:00:30Z"))
        state = resolver.resolve(at: instant("2026-01-01T00:00:42.5Z"))
        #expect(state.itemIndex == 1 && state.repetition == 1)
        #expect(state.position == MediaTime(value: 5_500_000_000 - 3_000_000_000, timescale: 1_000_000_000))
        #expect(state.nextChange == instant("2026-01-01T00:00:50Z"))
    }

    @Test("Trim points shift the media time; the play length is out minus in")
    func trims() throws {
        let s = try schedule("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            video = "a.mp4"
            in = "00:00:05"
            out = "00:00:15"
            """, durations: ["a.mp4": seconds(30)])
        let state = ScheduleResolver(schedule: s).resolve(at: UTCInstant(secondsSinceEpoch: 1_000_003))
        #expect(state.position == seconds(3))
        #expect(state.mediaTime == seconds(8))
    }

    @Test("An overnight window belongs to the day it starts on and ends the next morning")
    func overnight() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.late]
            playlist = "news"
            days = ["fri"]
            start = "22:00"
            end = "02:00"
            """))
        // 2026-01-02 is a Friday.
        #expect(resolver.resolve(at: instant("2026-01-02T21:59:59Z")).isFallback)
        #expect(resolver.resolve(at: instant("2026-01-02T21:59:59Z")).nextChange == instant("2026-01-02T22:00:00Z"))
        #expect(resolver.resolve(at: instant("2026-01-03T01:59:59Z")).entry?.name == "late")
        #expect(resolver.resolve(at: instant("2026-01-03T02:00:00Z")).isFallback)
        // Thursday night → Friday morning has no window.
        #expect(resolver.resolve(at: instant("2026-01-02T01:00:00Z")).isFallback)
    }

    @Test("Overlapping entries: the higher priority wins, the lower resumes at its wall-clock position")
    func priorities() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.day]
            playlist = "loop"
            start = "08:00"
            end = "18:00"
            priority = 1
            [entries.lunch]
            playlist = "news"
            start = "12:00"
            end = "13:00"
            priority = 5
            """, fallback: nil))
        #expect(resolver.resolve(at: instant("2026-01-05T11:59:00Z")).entry?.name == "day")
        #expect(resolver.resolve(at: instant("2026-01-05T11:59:59Z")).nextChange == instant("2026-01-05T12:00:00Z"))
        #expect(resolver.resolve(at: instant("2026-01-05T12:30:00Z")).entry?.name == "lunch")
        let back = resolver.resolve(at: instant("2026-01-05T13:00:00Z"))
        #expect(back.entry?.name == "day")
        // 5 h after 08:00 = 18000 s = 360 passes of 50 s: the start of the loop.
        #expect(back.itemIndex == 0 && back.position == .zero)
        // Before 08:00 there is nothing and no fallback.
        let nothing = resolver.resolve(at: instant("2026-01-05T07:00:00Z"))
        #expect(nothing.playlistName == nil && nothing.itemIndex == nil)
        #expect(nothing.nextChange == instant("2026-01-05T08:00:00Z"))
    }

    @Test("An interrupt pre-empts at its start, plays once, and hands back mid-item to the normal programme")
    func interruptEndsMidItem() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.day]
            playlist = "news"
            start = "09:00"
            end = "17:00"
            [entries.alarm]
            playlist = "alert"
            interrupt = true
            start = "10:00:10"
            priority = -5
            """))
        let during = resolver.resolve(at: instant("2026-01-05T10:00:15Z"))
        #expect(during.entry?.name == "alarm")
        #expect(during.position == seconds(5))
        #expect(during.nextChange == instant("2026-01-05T10:00:30Z"))
        #expect(during.occurrence?.end == instant("2026-01-05T10:00:30Z"))
        let after = resolver.resolve(at: instant("2026-01-05T10:00:30Z"))
        #expect(after.entry?.name == "day")
        // 3630 s after 09:00 in a 45 s loop: 80 loops (3600 s) + 30 s: mid-item.
        #expect(after.itemIndex == 0 && after.position == seconds(30))
        #expect(after.nextChange == instant("2026-01-05T10:00:45Z"))
    }

    @Test("An interrupt with an end shorter than its playlist stops at the end")
    func interruptWindow() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.alarm]
            playlist = "alert"
            interrupt = true
            start = "10:00"
            end = "10:00:05"
            """))
        #expect(resolver.resolve(at: instant("2026-01-05T10:00:04Z")).entry?.name == "alarm")
        #expect(resolver.resolve(at: instant("2026-01-05T10:00:05Z")).isFallback)
    }

    @Test("Leap days: a Feb 29 date range, and a monthly rule on the 29th skips February in common years")
    func leapDays() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.leap]
            playlist = "news"
            from = 2028-02-29
            until = 2028-02-29
            [entries.monthly]
            playlist = "alert"
            priority = 1
            start = "12:00"
            end = "13:00"
            from = 2027-01-29
            rrule = "FREQ=MONTHLY;COUNT=14"
            """))
        #expect(resolver.resolve(at: instant("2028-02-29T23:59:59Z")).entry?.name == "leap")
        #expect(resolver.resolve(at: instant("2028-03-01T00:00:00Z")).isFallback)
        let entry = try #require(resolver.schedule.entries.first { $0.name == "monthly" })
        let dates = resolver.occurrences(of: entry, from: instant("2027-01-01T00:00:00Z"), to: instant("2029-01-01T00:00:00Z")).map(\.date.description)
        #expect(dates == ["2027-01-29", "2027-03-29", "2027-04-29", "2027-05-29", "2027-06-29", "2027-07-29", "2027-08-29",
                          "2027-09-29", "2027-10-29", "2027-11-29", "2027-12-29", "2028-01-29", "2028-02-29", "2028-03-29"])
    }

    @Test("COUNT and UNTIL edges: the last occurrence plays, the next does not; UNTIL at the start time is inclusive")
    func countAndUntil() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.counted]
            playlist = "news"
            start = "09:00"
            end = "10:00"
            from = 2026-01-05
            rrule = "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=3"
            [entries.until]
            playlist = "alert"
            start = "18:00"
            end = "19:00"
            from = 2026-01-05
            rrule = "FREQ=DAILY;INTERVAL=2;UNTIL=20260109T180000"
            """))
        #expect(resolver.resolve(at: instant("2026-01-12T09:30:00Z")).entry?.name == "counted")   // third
        #expect(resolver.resolve(at: instant("2026-01-14T09:30:00Z")).isFallback)                 // fourth: beyond COUNT
        #expect(resolver.resolve(at: instant("2026-01-09T18:30:00Z")).entry?.name == "until")     // UNTIL == start
        #expect(resolver.resolve(at: instant("2026-01-11T18:30:00Z")).isFallback)
        #expect(resolver.resolve(at: instant("2026-01-08T18:30:00Z")).isFallback)                 // not on the interval
    }

    @Test("A rule firing every 18 months: the timeline lists every window up to its end, and the next change is found however far")
    func rareWindows() throws {
        var resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.rare]
            playlist = "news"
            start = "09:00"
            end = "10:00"
            from = 2026-01-15
            rrule = "FREQ=MONTHLY;INTERVAL=18"
            """))
        let windows = resolver.timeline(from: instant("2026-01-01T00:00:00Z"), to: instant("2031-01-01T00:00:00Z"), entriesOnly: true)
            .filter { $0.entry?.name == "rare" }.map { $0.instant }
        #expect(windows == [instant("2026-01-15T09:00:00Z"), instant("2027-07-15T09:00:00Z"),
                            instant("2029-01-15T09:00:00Z"), instant("2030-07-15T09:00:00Z")])
        // With nothing else to play, the next change is the next window, 546 days away: a screen
        // showing nothing must still wake for it.
        let fallback = try makeSchedule(entries: """
            [entries.rare]
            playlist = "news"
            start = "09:00"
            end = "10:00"
            from = 2026-01-15
            rrule = "FREQ=MONTHLY;INTERVAL=18"
            """, fallback: nil)
        resolver = ScheduleResolver(schedule: fallback)
        #expect(resolver.resolve(at: instant("2026-02-01T00:00:00Z")).nextChange == instant("2027-07-15T09:00:00Z"))
        // Beyond the horizon, nothing: an explicit, bounded answer rather than a search without end.
        resolver.horizonDays = 400
        #expect(resolver.resolve(at: instant("2026-02-01T00:00:00Z")).nextChange == nil)
    }

    @Test("EXDATE and days filters remove windows")
    func exceptions() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.weekdays]
            playlist = "news"
            days = ["weekdays"]
            start = "09:00"
            end = "17:00"
            exdates = [2026-01-06]
            """))
        #expect(resolver.resolve(at: instant("2026-01-05T10:00:00Z")).entry?.name == "weekdays")
        #expect(resolver.resolve(at: instant("2026-01-06T10:00:00Z")).isFallback)
        #expect(resolver.resolve(at: instant("2026-01-10T10:00:00Z")).isFallback)  // Saturday
    }

    @Test("The timeline lists every change in order, each state agreeing with resolve(at:)")
    func timeline() throws {
        let resolver = ScheduleResolver(schedule: try makeSchedule(entries: """
            [entries.lunch]
            playlist = "news"
            start = "12:00"
            end = "12:02"
            """))
        let states = resolver.timeline(from: instant("2026-01-05T11:59:00Z"), to: instant("2026-01-05T12:03:00Z"))
        #expect(states.first?.instant == instant("2026-01-05T11:59:00Z"))
        for (a, b) in zip(states, states.dropFirst()) {
            #expect(a.nextChange == b.instant)
            let again = resolver.resolve(at: b.instant)
            #expect(again.itemIndex == b.itemIndex && again.position == b.position)
        }
        let lunchStarts = states.filter { $0.entry?.name == "lunch" }.map(\.instant)
        #expect(lunchStarts == [instant("2026-01-05T12:00:00Z"), instant("2026-01-05T12:00:45Z"), instant("2026-01-05T12:01:30Z")])
        #expect(states.contains { $0.instant == instant("2026-01-05T12:02:00Z") && $0.isFallback })
    }

    @Test("Overlay cues resolve to media times from an item's length")
    func cues() throws {
        let length = seconds(40)
        #expect(Cue(parsing: "00:00:12.5")?.resolve(itemDuration: nil) == MediaTime(value: 125, timescale: 10))
        #expect(Cue(parsing: "25%")?.resolve(itemDuration: length) == seconds(10))
        #expect(Cue(parsing: "12.5%")?.resolve(itemDuration: length) == seconds(5))
        #expect(Cue(parsing: "end-5s")?.resolve(itemDuration: length) == seconds(35))
        #expect(Cue(parsing: "end")?.resolve(itemDuration: length) == length)
        #expect(Cue(parsing: "25%")?.resolve(itemDuration: nil) == nil)
        #expect(Cue(parsing: "101%") == nil)
        #expect(Cue(parsing: "soon") == nil)
        let s = try schedule("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            video = "a.mp4"
            [[playlists.p.items.overlays]]
            text = "hi"
            at = "end-10s"
            duration = "4s"
            [[playlists.p.items.overlays]]
            text = "to the end"
            at = "50%"
            """, durations: ["a.mp4": seconds(30)])
        let timeline = s.playlists["p"]!.items[0].overlayTimeline()
        #expect(timeline.map(\.range) == [TimeRange(start: seconds(20), end: seconds(24)), TimeRange(start: seconds(15), end: seconds(30))])
    }

    @Test("Restart policy backoff doubles up to the maximum")
    func backoff() {
        let policy = RestartPolicy(retries: 5, backoff: seconds(1), backoffMultiplier: 2, maximumBackoff: seconds(5))
        #expect((1...5).map { policy.delay(beforeRetry: $0).seconds } == [1, 2, 4, 5, 5])
    }
}

@Suite("Resolver with absurd input")
struct ResolverRobustnessTests {
    @Test("A window in the year 6025 (past what 64-bit nanoseconds hold) is validated without trapping; its instants saturate")
    func farFutureWindow() {
        // Found by the TOML fuzzer: the overlap check turned 6025-01-05 into nanoseconds and trapped.
        _ = diagnostics("""
            version = 1
            timezone = "Europe/Berlin"
            fallback = "p"
            [[playlists.p.items]]
            image = "a.png"
            duration = "10s"
            [entries.lunch]
            playlist = "p"
            start = "11:00"
            end = "14:00"
            priority = 10
            [entries.specials]
            playlist = "p"
            start = "12:00"
            end = "13:00"
            from = 6025-01-05
            rrule = "FREQ=MONTHLY;BYDAY=1MO"
            exdates = [4052-06-01]
            priority = 10
            """)
        #expect(UTCInstant(secondsSinceEpoch: 127_000_000_000).nanosecondsSinceEpoch == .max)
        #expect(UTCInstant(secondsSinceEpoch: -127_000_000_000).nanosecondsSinceEpoch == .min)
        #expect(UTCInstant(secondsSinceEpoch: 1_800_000_000, nanoseconds: 5).nanosecondsSinceEpoch == 1_800_000_000_000_000_005)
    }

    @Test("Instants at the ends of 64-bit nanoseconds resolve without trapping, and the addressable range's edges give a programme")
    func edgesOfTime() throws {
        // `vitrine programme --from 2262-04-10` trapped: the search for the next change saturated
        // at Int64.max and then asked who wins one nanosecond later.
        let s = try schedule("""
            version = 1
            timezone = "Europe/Berlin"
            fallback = "p"
            [[playlists.p.items]]
            image = "a.png"
            duration = "10s"
            [[playlists.alert.items]]
            image = "b.png"
            duration = "30s"
            [entries.alert]
            playlist = "alert"
            interrupt = true
            start = "08:00"
            [entries.mondays]
            playlist = "p"
            start = "09:00"
            end = "17:00"
            from = 1899-12-25
            rrule = "FREQ=WEEKLY;BYDAY=MO"
            """)
        let resolver = ScheduleResolver(schedule: s)
        for edge in [Int64.max, .max - 1, .min, .min + 1] {
            let state = resolver.resolve(at: UTCInstant(nanosecondsSinceEpoch: edge))
            #expect(state.playlistName != nil)
            _ = resolver.timeline(from: UTCInstant(nanosecondsSinceEpoch: edge), to: UTCInstant(nanosecondsSinceEpoch: .max), maximumChanges: 50)
        }
        let day: Int64 = 86_400_000_000_000
        let last = UTCInstant.addressable.upperBound
        let lastDays = resolver.timeline(from: UTCInstant(nanosecondsSinceEpoch: last.nanosecondsSinceEpoch - 3 * day), to: last, entriesOnly: true)
        // Three days before 2200-01-01 (a Wednesday): the alert on each of them, and Monday's window.
        #expect(lastDays.filter { $0.entry?.name == "alert" }.count == 3)
        #expect(lastDays.filter { $0.entry?.name == "mondays" }.count == 1)
        let first = UTCInstant.addressable.lowerBound
        let firstDays = resolver.timeline(from: first, to: UTCInstant(nanosecondsSinceEpoch: first.nanosecondsSinceEpoch + 2 * day), entriesOnly: true)
        #expect(firstDays.filter { $0.entry?.name == "alert" }.count == 2)
        #expect(UTCInstant(nanosecondsSinceEpoch: .max).since(UTCInstant(nanosecondsSinceEpoch: .min)).value == .max)
        #expect(UTCInstant(nanosecondsSinceEpoch: .min).since(UTCInstant(nanosecondsSinceEpoch: 1)).value == .min)
        // A fallback alone: the search for a change runs to the end in chunks four times longer each
        // round, and a chunk of 131,072 days overflowed its nanoseconds (`programme --to 2199-12-31`).
        let quiet = ScheduleResolver(schedule: try schedule("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            image = "a.png"
            duration = "10s"
            """))
        let century = quiet.timeline(from: instant("2026-01-01T00:00:00Z"), to: last, entriesOnly: true)
        #expect(century.count == 1 && century.first?.nextChange == nil)
        #expect(UTCInstant.addressable.lowerBound.description == "1900-01-01T00:00:00Z")
        #expect(UTCInstant.addressable.upperBound.description == "2200-01-01T00:00:00Z")
    }

    @Test("Huge lengths and repeat counts resolve without trapping")
    func hugeLengths() throws {
        let s = try schedule("""
            version = 1
            fallback = "p"
            [[playlists.p.items]]
            image = "a.png"
            duration = "99999999h"
            repeat = 100000
            [[playlists.alert.items]]
            image = "b.png"
            duration = "99999999h"
            [entries.alert]
            playlist = "alert"
            interrupt = true
            start = "10:00"
            """)
        let state = ScheduleResolver(schedule: s).resolve(at: instant("2026-01-05T10:00:01Z"))
        #expect(state.entry?.name == "alert")
        #expect(state.position == seconds(1))
        #expect(TimeSyntax.duration("99999999999999999999s") == nil)
    }
}
