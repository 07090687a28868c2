import Foundation
import MediaTime
import Testing
@testable import Scheduling

/// The resolver and the programme for layouts: every zone's playlist on the wall clock from the
/// window's start, item changes of any zone, interrupts over the whole screen.
@Suite("Layouts: resolver and programme")
struct LayoutResolverTests {
    /// "lobby" = a.mp4 (30 s) then b.png (10 s, twice): 50 s a pass. "adverts" = c.png (7 s) then
    /// d.mp4 trimmed to 00:05–00:10 (5 s): 12 s a pass. "house" = h.mp4 (60 s); "alert" = siren.mp4 (20 s).
    static let text = """
        version = 1
        timezone = "UTC"
        fallback = "house"
        [[playlists.house.items]]
        video = "h.mp4"
        [[playlists.lobby.items]]
        video = "a.mp4"
        [[playlists.lobby.items]]
        image = "b.png"
        duration = "10s"
        repeat = 2
        [[playlists.adverts.items]]
        image = "c.png"
        duration = "7s"
        [[playlists.adverts.items]]
        video = "d.mp4"
        in = "00:00:05"
        out = "00:00:10"
        [[playlists.alert.items]]
        video = "siren.mp4"
        [layouts.split]
        [[layouts.split.zones]]
        name = "main"
        rect = [0, 0, 0.75, 1]
        playlist = "lobby"
        [[layouts.split.zones]]
        name = "side"
        rect = [0.75, 0, 0.25, 1]
        playlist = "adverts"
        audio = true
        [entries.day]
        layout = "split"
        start = "08:00"
        end = "18:00:10"
        [entries.alert]
        playlist = "alert"
        interrupt = true
        start = "09:00"
        """

    static func resolver() throws -> ScheduleResolver {
        ScheduleResolver(schedule: try schedule(text, durations: ["h.mp4": seconds(60), "a.mp4": seconds(30), "d.mp4": seconds(20), "siren.mp4": seconds(20)]))
    }

    /// What one zone should show: item, repetition, position and media time in milliseconds, and
    /// the times of day its item started, ends and next changes.
    struct Expected {
        var item: Int
        var repetition = 0
        var position: Int64
        var mediaTime: Int64? = nil
        var start: String
        var end: String
        var next: String
    }

    func check(_ zone: ZoneState, name: String, playlist: String, _ e: Expected, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        #expect(zone.zone.name == name, sourceLocation: sourceLocation)
        #expect(zone.state.playlistName == playlist, sourceLocation: sourceLocation)
        #expect(zone.state.itemIndex == e.item, "\(name) item", sourceLocation: sourceLocation)
        #expect(zone.state.repetition == e.repetition, "\(name) repetition", sourceLocation: sourceLocation)
        #expect(zone.state.position == MediaTime(value: e.position, timescale: 1000), "\(name) position \(zone.state.position.seconds)", sourceLocation: sourceLocation)
        #expect(zone.state.mediaTime == MediaTime(value: e.mediaTime ?? e.position, timescale: 1000), "\(name) media time", sourceLocation: sourceLocation)
        #expect(zone.state.itemStart == instant(e.start), "\(name) item start", sourceLocation: sourceLocation)
        #expect(zone.state.itemEnd == instant(e.end), "\(name) item end", sourceLocation: sourceLocation)
        #expect(zone.state.nextChange == instant(e.next), "\(name) next change", sourceLocation: sourceLocation)
    }

    /// Resolves `at` (a time on 2026-01-05, a Monday) and checks both zones against the hand-computed values.
    func expect(at time: String, main: Expected, side: Expected, next: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let state = try Self.resolver().resolve(at: instant("2026-01-05T\(time)Z"))
        #expect(state.entry?.name == "day" && state.layoutName == "split", sourceLocation: sourceLocation)
        #expect(state.playlistName == nil && state.itemIndex == nil && !state.isFallback, sourceLocation: sourceLocation)
        #expect(state.nextChange == instant("2026-01-05T\(next)Z"), "next change", sourceLocation: sourceLocation)
        #expect(state.zones.count == 2, sourceLocation: sourceLocation)
        guard state.zones.count == 2 else { return }
        #expect(state.zones.map(\.playsSound) == [false, true], sourceLocation: sourceLocation)
        for (zone, s) in zip(state.zones, [state.zones[0].state, state.zones[1].state]) {
            #expect(s.entry?.name == "day" && s.occurrence == state.occurrence && s.zones.isEmpty, "\(zone.zone.name)", sourceLocation: sourceLocation)
        }
        func day(_ e: Expected) -> Expected {
            var e = e
            e.start = "2026-01-05T\(e.start)Z"
            e.end = "2026-01-05T\(e.end)Z"
            e.next = "2026-01-05T\(e.next)Z"
            return e
        }
        check(state.zones[0], name: "main", playlist: "lobby", day(main), sourceLocation: sourceLocation)
        check(state.zones[1], name: "side", playlist: "adverts", day(side), sourceLocation: sourceLocation)
    }

    // Both playlists start at the window's start, 08:00:00. The side zone's seams fall every 7 s
    // and 5 s (08:00:07, :12, :19, :24, :31, …); the main zone's at 08:00:30, :40 and :50.

    @Test("At the window's start both zones start their first item")
    func windowStart() throws {
        try expect(at: "08:00:00",
                   main: Expected(item: 0, position: 0, start: "08:00:00", end: "08:00:30", next: "08:00:30"),
                   side: Expected(item: 0, position: 0, start: "08:00:00", end: "08:00:07", next: "08:00:07"),
                   next: "08:00:07")
    }

    @Test("Mid-item in both zones: the trimmed clip's media time is its position plus the in point")
    func midItems() throws {
        try expect(at: "08:00:08.5",
                   main: Expected(item: 0, position: 8500, start: "08:00:00", end: "08:00:30", next: "08:00:30"),
                   side: Expected(item: 1, position: 1500, mediaTime: 6500, start: "08:00:07", end: "08:00:12", next: "08:00:12"),
                   next: "08:00:12")
    }

    @Test("Across the main zone's seam the side zone's still continues, with the same start and end")
    func seamWhileTheOtherContinues() throws {
        // 08:00:24 the side zone's second pass starts with the still, until 08:00:31.
        try expect(at: "08:00:29.999",
                   main: Expected(item: 0, position: 29999, start: "08:00:00", end: "08:00:30", next: "08:00:30"),
                   side: Expected(item: 0, position: 5999, start: "08:00:24", end: "08:00:31", next: "08:00:31"),
                   next: "08:00:30")
        try expect(at: "08:00:30",
                   main: Expected(item: 1, position: 0, start: "08:00:30", end: "08:00:40", next: "08:00:40"),
                   side: Expected(item: 0, position: 6000, start: "08:00:24", end: "08:00:31", next: "08:00:31"),
                   next: "08:00:31")
    }

    @Test("A repeated still in one zone, the loop of the other")
    func repetitionAndLoop() throws {
        try expect(at: "08:00:45",
                   main: Expected(item: 1, repetition: 1, position: 5000, start: "08:00:40", end: "08:00:50", next: "08:00:50"),
                   side: Expected(item: 1, position: 2000, mediaTime: 7000, start: "08:00:43", end: "08:00:48", next: "08:00:48"),
                   next: "08:00:48")
    }

    @Test("The window's end cuts the zones' items: their next change is the window's end, their item ends are not")
    func windowEndCutsItems() throws {
        // The window ends at 18:00:10, 36 010 s after its start; at 18:00:00 both playlists begin
        // a pass (36 000 is a multiple of 50 and of 12).
        try expect(at: "17:59:56",
                   main: Expected(item: 1, repetition: 1, position: 6000, start: "17:59:50", end: "18:00:00", next: "18:00:00"),
                   side: Expected(item: 1, position: 1000, mediaTime: 6000, start: "17:59:55", end: "18:00:00", next: "18:00:00"),
                   next: "18:00:00")
        try expect(at: "18:00:08",
                   main: Expected(item: 0, position: 8000, start: "18:00:00", end: "18:00:30", next: "18:00:10"),
                   side: Expected(item: 1, position: 1000, mediaTime: 6000, start: "18:00:07", end: "18:00:12", next: "18:00:10"),
                   next: "18:00:10")
        let after = try Self.resolver().resolve(at: instant("2026-01-05T18:00:10Z"))
        #expect(after.isFallback && after.playlistName == "house" && after.zones.isEmpty && after.layoutName == nil)
    }

    @Test("The window ends after one zone's item and before the other's: each zone gets its own next change")
    func windowEndBetweenItemEnds() throws {
        try expect(at: "18:00:06",
                   main: Expected(item: 0, position: 6000, start: "18:00:00", end: "18:00:30", next: "18:00:10"),
                   side: Expected(item: 0, position: 6000, start: "18:00:00", end: "18:00:07", next: "18:00:07"),
                   next: "18:00:07")
    }

    @Test("An interrupt takes the whole screen; afterwards each zone resumes at its wall-clock position")
    func interrupt() throws {
        let resolver = try Self.resolver()
        let during = resolver.resolve(at: instant("2026-01-05T09:00:05Z"))
        #expect(during.entry?.name == "alert" && during.playlistName == "alert" && during.itemIndex == 0)
        #expect(during.layoutName == nil && during.zones.isEmpty)
        #expect(during.nextChange == instant("2026-01-05T09:00:20Z"))
        // 09:00:20 is 3 620 s into the window: 3 620 mod 50 = 20, 3 620 mod 12 = 8.
        try expect(at: "09:00:20",
                   main: Expected(item: 0, position: 20000, start: "09:00:00", end: "09:00:30", next: "09:00:30"),
                   side: Expected(item: 1, position: 1000, mediaTime: 6000, start: "09:00:19", end: "09:00:24", next: "09:00:24"),
                   next: "09:00:24")
        // Just before the interrupt, the next change is the interrupt itself, for every zone.
        let before = resolver.resolve(at: instant("2026-01-05T08:59:58Z"))
        #expect(before.nextChange == instant("2026-01-05T09:00:00Z"))
        #expect(before.zones.map(\.state.nextChange) == [instant("2026-01-05T09:00:00Z"), instant("2026-01-05T09:00:00Z")])
    }

    @Test("The timeline has a change whenever any zone's item changes, each listing every zone as resolve(at:) does")
    func timeline() throws {
        let resolver = try Self.resolver()
        let states = resolver.timeline(from: instant("2026-01-05T08:00:00Z"), to: instant("2026-01-05T08:01:00Z"))
        let seconds = ["00", "07", "12", "19", "24", "30", "31", "36", "40", "43", "48", "50", "55"]
        #expect(states.map(\.instant) == seconds.map { instant("2026-01-05T08:00:\($0)Z") })
        for (state, following) in zip(states, states.dropFirst()) {
            #expect(state.nextChange == following.instant)
        }
        #expect(states.last?.nextChange == instant("2026-01-05T08:01:00Z"))
        for state in states {
            let resolved = resolver.resolve(at: state.instant)
            #expect(state.zones.count == 2 && resolved.zones.count == 2)
            #expect(state.nextChange == resolved.nextChange)
            for (a, b) in zip(state.zones, resolved.zones) {
                #expect(a.zone.name == b.zone.name && a.playsSound == b.playsSound)
                #expect(a.state.playlistName == b.state.playlistName && a.state.itemIndex == b.state.itemIndex && a.state.repetition == b.state.repetition)
                #expect(a.state.position == b.state.position && a.state.mediaTime == b.state.mediaTime)
                #expect(a.state.itemStart == b.state.itemStart && a.state.itemEnd == b.state.itemEnd && a.state.nextChange == b.state.nextChange)
            }
        }
        // Across the window's opening: the fallback until 08:00, then the layout.
        let opening = resolver.timeline(from: instant("2026-01-05T07:59:59Z"), to: instant("2026-01-05T08:00:01Z"))
        #expect(opening.map(\.instant) == [instant("2026-01-05T07:59:59Z"), instant("2026-01-05T08:00:00Z")])
        #expect(opening.map(\.layoutName) == [nil, "split"])
        #expect(opening.first?.zones.isEmpty == true && opening.first?.isFallback == true)
    }

    // MARK: Programme

    func report(from: String, to: String) throws -> ProgrammeReport {
        ProgrammeReport(schedule: try Self.resolver().schedule, from: instant(from), to: instant(to))
    }

    @Test("Programme JSON: a layout's change adds layout and zones with each zone's item; a playlist's change has neither")
    func programmeJSON() throws {
        let report = try report(from: "2026-01-05T07:59:59Z", to: "2026-01-05T08:00:13Z")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.json().utf8)) as? [String: Any])
        let changes = try #require(object["changes"] as? [[String: Any]])
        #expect(changes.map { $0["utc"] as? String } == ["2026-01-05T07:59:59Z", "2026-01-05T08:00:00Z", "2026-01-05T08:00:07Z", "2026-01-05T08:00:12Z"])
        let fallback = changes[0]
        #expect(fallback["playlist"] as? String == "house" && fallback["layout"] == nil && fallback["zones"] == nil)
        for change in changes.dropFirst() {
            #expect(change["entry"] as? String == "day" && change["layout"] as? String == "split")
            #expect(change["playlist"] is NSNull && change["item"] is NSNull && change["media"] is NSNull && change["position_seconds"] is NSNull)
        }
        let zones = try #require(changes[2]["zones"] as? [[String: Any]])
        #expect(zones.map { $0["name"] as? String } == ["main", "side"])
        #expect(zones.map { $0["playlist"] as? String } == ["lobby", "adverts"])
        #expect(zones.map { $0["item"] as? Int } == [0, 1])
        #expect(zones.map { $0["media"] as? String } == ["a.mp4", "d.mp4"])
        #expect(zones.map { $0["position_seconds"] as? Double } == [7, 0])
        #expect(zones.map { $0["media_time_seconds"] as? Double } == [7, 5])
        #expect(zones.map { $0["item_length_seconds"] as? Double } == [30, 5])
        #expect(zones.map { $0["repetition"] as? Int } == [0, 0])
        #expect(zones.map { $0["audio"] as? Bool } == [false, true])
        #expect(zones.map { ($0["next_change"] as? [String: String])?["utc"] } == ["2026-01-05T08:00:30Z", "2026-01-05T08:00:12Z"])
        #expect((changes[2]["next_change"] as? [String: String])?["utc"] == "2026-01-05T08:00:12Z")
        // The line as printed: the zones come last, in the schedule's order.
        let line = try #require(report.json().split(separator: "\n").first { $0.hasPrefix("    {\"utc\": \"2026-01-05T08:00:07Z\"") })
        #expect(line.hasSuffix("""
            "layout": "split", "zones": [{"name": "main", "playlist": "lobby", "item": 0, "media": "a.mp4", "item_length_seconds": 30, "repetition": 0, \
            "position_seconds": 7, "media_time_seconds": 7, "audio": false, "next_change": {"utc": "2026-01-05T08:00:30Z", "local": "2026-01-05T08:00:30+00:00"}}, \
            {"name": "side", "playlist": "adverts", "item": 1, "media": "d.mp4", "item_length_seconds": 5, "repetition": 0, "position_seconds": 0, \
            "media_time_seconds": 5, "audio": true, "next_change": {"utc": "2026-01-05T08:00:12Z", "local": "2026-01-05T08:00:12+00:00"}}]},
            """), "\(line)")
    }

    @Test("Programme text: a layout's line, then a line per zone with its playlist, item and position")
    func programmeText() throws {
        let text = try report(from: "2026-01-05T07:59:59Z", to: "2026-01-05T08:00:08Z").text()
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines == [
            "Programme of /tmp/test.toml in UTC, 2026-01-05T07:59:59+00:00 to 2026-01-05T08:00:08+00:00",
            "LOCAL                          UTC                   ENTRY                PLAYLIST      ITEM     POSITION",
            "2026-01-05T07:59:59+00:00 UTC  2026-01-05T07:59:59Z  (fallback)           house         1 h.mp4  00:00:59.000",
            "2026-01-05T08:00:00+00:00 UTC  2026-01-05T08:00:00Z  day                  layout split",
            "                                                       zone main          lobby         1 a.mp4  00:00:00.000",
            "                                                       zone side (audio)  adverts       1 c.png  00:00:00.000",
            "2026-01-05T08:00:07+00:00 UTC  2026-01-05T08:00:07Z  day                  layout split",
            "                                                       zone main          lobby         1 a.mp4  00:00:07.000",
            "                                                       zone side (audio)  adverts       2 d.mp4  00:00:00.000",
        ], "\(text)")
    }
}
