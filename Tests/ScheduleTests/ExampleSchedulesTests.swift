import Foundation
import MediaTime
import Testing
@testable import Scheduling

/// The schedules in Schedules/ are documentation: they must stay valid and mean what they say.
@Suite("Example schedules")
struct ExampleSchedulesTests {
    /// Lengths of the fixtures made by scripts/fixtures.sh.
    static let inspector = FixedInspector(durations: [
        "h264_aac.mp4": seconds(10), "queue1.mp4": seconds(2), "queue2.mp4": seconds(2), "queue3.mp4": seconds(2),
        "hevc.mkv": seconds(3), "vp9_opus.webm": seconds(3), "mpeg2.ts": seconds(3), "multilang.mkv": seconds(4),
        "ntsc.mp4": seconds(3), "rotated.mp4": seconds(2),
    ])

    static func load(_ name: String) throws -> Schedule {
        let report = ScheduleValidator.validate(path: packageRoot + "/Schedules/" + name, inspector: inspector,
                                                referenceDate: LocalDate(year: 2026, month: 1, day: 1)!)
        #expect(report.diagnostics.isEmpty, "\(report.diagnostics)")
        return try #require(report.schedule)
    }

    @Test("Every example is valid and uses only media that scripts/fixtures.sh makes", arguments: ["demo.toml", "week.toml", "emergency.toml", "portrait.toml", "layout.toml"])
    func valid(_ name: String) throws {
        let s = try Self.load(name)
        let fixtures = try String(contentsOfFile: packageRoot + "/scripts/fixtures.sh", encoding: .utf8)
        for playlist in s.playlists.values {
            for item in playlist.items {
                var names = [item.writtenLocation]
                for overlay in item.overlays { if case .image(let path) = overlay.content { names.append(path) } }
                for written in names {
                    let file = String(written.split(separator: "/").last!.split(separator: ".").first!)
                    #expect(written.contains("Fixtures/generated/"), "\(written)")
                    #expect(fixtures.contains(file), "\(file) is not made by fixtures.sh")
                }
            }
        }
    }

    @Test("The demo loops a 19 s playlist with a logo at 2 s and a ticker at 25 %")
    func demo() throws {
        let s = try Self.load("demo.toml")
        let playlist = try #require(s.playlists["demo"])
        #expect(playlist.passDuration == seconds(19))
        let overlays = playlist.items[0].overlayTimeline()
        #expect(overlays.map(\.range.start) == [seconds(2), MediaTime(value: 5, timescale: 2)])
        guard case .text(let style) = overlays[1].overlay.content else { Issue.record("the ticker is not text"); return }
        #expect(style.tickerSpeed != nil)
        let state = ScheduleResolver(schedule: s).resolve(at: UTCInstant(secondsSinceEpoch: 19 * 1000 + 12))
        #expect(state.isFallback && state.itemIndex == 1 && state.position == seconds(2))
    }

    @Test("The emergency interrupt plays 20 s from 14:00 and hands back mid-item")
    func emergency() throws {
        let s = try Self.load("emergency.toml")
        let resolver = ScheduleResolver(schedule: s)
        let during = resolver.resolve(at: instant("2026-04-15T18:00:05Z"))
        #expect(during.entry?.name == "evacuation")
        #expect(during.nextChange == instant("2026-04-15T18:00:20Z"))
        let after = resolver.resolve(at: instant("2026-04-15T18:00:20Z"))
        #expect(after.isFallback)
        // The normal loop (10 s + 3 s) runs from the epoch: 1_776_276_020 mod 13 = 12, 2 s into the second clip.
        #expect(after.itemIndex == 1 && after.position == seconds(2))
    }

    @Test("The week: breakfast on Monday at 08:00, late night past midnight on Saturday, specials on the first Monday")
    func week() throws {
        let s = try Self.load("week.toml")
        let resolver = ScheduleResolver(schedule: s)
        let zone = s.timeZone
        #expect(resolver.resolve(at: zone.parseInstant("2026-03-30T08:00")!).entry?.name == "breakfast")
        #expect(resolver.resolve(at: zone.parseInstant("2026-04-04T01:30")!).entry?.name == "late")  // Friday's window
        #expect(resolver.resolve(at: zone.parseInstant("2026-04-06T12:30")!).entry?.name == "specials")
        #expect(resolver.resolve(at: zone.parseInstant("2026-04-13T12:30")!).entry?.name == "lunch")
        #expect(resolver.resolve(at: zone.parseInstant("2026-06-01T12:30")!).entry?.name == "lunch")  // EXDATE
        #expect(resolver.resolve(at: zone.parseInstant("2026-12-24T08:00")!).entry?.name == "closed")
    }

    @Test("The portrait screen is rotated 90 degrees")
    func portrait() throws {
        let s = try Self.load("portrait.toml")
        #expect(s.display.rotationDegrees == 90)
        #expect(s.display.mode == .explicit(width: 1920, height: 1080, refreshHz: nil))
        #expect(s.playlists["lobby"]?.items[1].playDuration == seconds(6))
    }

    @Test("The layout example: three zones on the wall clock from midnight, the feature's sound, a full-screen interrupt on Mondays")
    func layout() throws {
        let s = try Self.load("layout.toml")
        let layout = try #require(s.layouts["split"])
        #expect(layout.zones.map(\.name) == ["main", "side", "ticker"])
        #expect(layout.zones.map(\.playlist) == ["feature", "adverts", "ticker"])
        #expect(layout.soundZoneIndex == 0)
        #expect(s.playlists["feature"]?.passDuration == seconds(12))
        #expect(s.playlists["adverts"]?.passDuration == seconds(9))
        #expect(s.playlists["ticker"]?.passDuration == seconds(20))
        let resolver = ScheduleResolver(schedule: s)
        let zone = s.timeZone
        func zones(at local: String) throws -> [ProgrammeState] {
            let state = resolver.resolve(at: try #require(zone.parseInstant(local)))
            #expect(state.entry?.name == "allday" && state.layoutName == "split")
            return state.zones.map(\.state)
        }
        // Tuesday 08:00 is 28 800 s after midnight, a multiple of 12, 9 and 20: every zone starts a pass.
        #expect(try zones(at: "2026-03-31T08:00").map(\.itemIndex) == [0, 0, 0])
        #expect(try zones(at: "2026-03-31T08:00").map(\.position) == [.zero, .zero, .zero])
        // 5 s later: the feature clip at 5 s, the advert clip 1 s in (after the 4 s still), the ticker at 5 s.
        #expect(try zones(at: "2026-03-31T08:00:05").map(\.itemIndex) == [0, 1, 0])
        #expect(try zones(at: "2026-03-31T08:00:05").map(\.position) == [seconds(5), seconds(1), seconds(5)])
        // At 10 s the feature crosses its seam into the short clip while the adverts' still runs on.
        #expect(try zones(at: "2026-03-31T08:00:10").map(\.itemIndex) == [1, 0, 0])
        #expect(try zones(at: "2026-03-31T08:00:10").map(\.position) == [.zero, seconds(1), seconds(10)])
        // Monday at noon the interrupt takes the whole screen for its 10 s still.
        let notice = resolver.resolve(at: try #require(zone.parseInstant("2026-03-30T12:00:05")))
        #expect(notice.entry?.name == "notice" && notice.playlistName == "notice" && notice.zones.isEmpty)
        #expect(notice.nextChange == zone.parseInstant("2026-03-30T12:00:10"))
        // Then every zone is where the wall clock says: 43 210 s mod 12, 9 and 20.
        let after = resolver.resolve(at: try #require(zone.parseInstant("2026-03-30T12:00:10")))
        #expect(after.entry?.name == "allday")
        #expect(after.zones.map(\.state.itemIndex) == [1, 0, 0])
        #expect(after.zones.map(\.state.position) == [.zero, seconds(1), seconds(10)])
    }
}
