import Foundation
import MediaSinks
import MediaTime
import Testing
@testable import Scheduling

@Suite("Reading TOML and JSON schedules")
struct ReadingTests {
    static let toml = """
        version = 1
        timezone = "America/New_York"
        fallback = "main"

        [display]
        mode = "1080x1920@60"
        rotation = 270
        gravity = "fill"
        connector = "HDMI-A-1"

        [restart]
        retries = 4
        backoff = "500ms"
        backoff_multiplier = 1.5
        max_backoff = "1m"
        on_failure = "fallback"
        fallback_after = 2

        [[playlists.main.items]]
        video = "media/a.mp4"
        volume = 0.25
        mute = true
        gravity = "stretch"
        in = "00:00:01.5"
        out = 00:00:09
        repeat = 3

          [[playlists.main.items.overlays]]
          text = '''Multi
        line'''
          ticker = true
          rect = [0, 0.9, 1, 0.1]
          z = -1
          opacity = 0.5
          fade_in = 0.25
          fade_out = "1s"
          at = "end-2.5s"
          duration = "2s"
          color = "#FF000080"

        [[playlists.main.items]]
        url = "rtsp://camera.local/stream"

        [entries.weekday]
        playlist = "main"
        priority = 3
        days = ["weekdays"]
        start = 07:30:00
        end = "19:00"
        from = 2026-01-05
        until = "2026-06-30"
        rrule = "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE"
        exdates = [2026-01-07, "2026-01-19"]

        [entries."fire drill"]
        playlist = "main"
        interrupt = true
        start = "11:00"
        """

    static let json = """
        {
          "version": 1,
          "timezone": "America/New_York",
          "fallback": "main",
          "display": {"mode": "1080x1920@60", "rotation": 270, "gravity": "fill", "connector": "HDMI-A-1"},
          "restart": {"retries": 4, "backoff": "500ms", "backoff_multiplier": 1.5, "max_backoff": "1m",
                      "on_failure": "fallback", "fallback_after": 2},
          "playlists": {
            "main": {"items": [
              {"video": "media/a.mp4", "volume": 0.25, "mute": true, "gravity": "stretch", "in": "00:00:01.5",
               "out": "00:00:09", "repeat": 3,
               "overlays": [{"text": "Multi\\nline", "ticker": true, "rect": [0, 0.9, 1, 0.1], "z": -1, "opacity": 0.5,
                             "fade_in": 0.25, "fade_out": "1s", "at": "end-2.5s", "duration": "2s", "color": "#FF000080"}]},
              {"url": "rtsp://camera.local/stream"}
            ]}
          },
          "entries": {
            "weekday": {"playlist": "main", "priority": 3, "days": ["weekdays"], "start": "07:30:00", "end": "19:00",
                        "from": "2026-01-05", "until": "2026-06-30", "rrule": "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE",
                        "exdates": ["2026-01-07", "2026-01-19"]},
            "fire drill": {"playlist": "main", "interrupt": true, "start": "11:00"}
          }
        }
        """

    func check(_ s: Schedule) throws {
        #expect(s.timeZone.identifier == "America/New_York")
        #expect(s.baseDirectory == "/srv/show")
        #expect(s.display == DisplaySettings(mode: .explicit(width: 1080, height: 1920, refreshHz: 60), rotationDegrees: 270, gravity: .resizeAspectFill, connector: "HDMI-A-1"))
        #expect(s.restartPolicy == RestartPolicy(retries: 4, backoff: MediaTime(value: 1, timescale: 2), backoffMultiplier: 1.5,
                                                 maximumBackoff: seconds(60), onFailure: .fallback, fallbackAfter: 2))
        let items = try #require(s.playlists["main"]?.items)
        #expect(items.count == 2)
        #expect(items[0].source == .videoFile(path: "/srv/show/media/a.mp4"))
        #expect(items[0].writtenLocation == "media/a.mp4")
        #expect(items[0].volume == 0.25 && items[0].isMuted && items[0].gravity == .resize)
        #expect(items[0].inPoint == MediaTime(value: 3, timescale: 2) && items[0].outPoint == seconds(9) && items[0].repeatCount == 3)
        #expect(items[0].playDuration == MediaTime(value: 15, timescale: 2))
        let overlay = try #require(items[0].overlays.first)
        guard case .text(let style) = overlay.content else { Issue.record("not text"); return }
        #expect(style.text == "Multi\nline" && style.tickerSpeed == 0.25 && style.color == RGBAColor(red: 255, green: 0, blue: 0, alpha: 128))
        #expect(overlay.rect == OverlayRect(x: 0, y: 0.9, width: 1, height: 0.1))
        #expect(overlay.zIndex == -1 && overlay.opacity == 0.5 && overlay.fadeIn == MediaTime(value: 1, timescale: 4) && overlay.fadeOut == seconds(1))
        #expect(overlay.cue == .fromEnd(MediaTime(value: 5, timescale: 2)) && overlay.duration == seconds(2))
        #expect(items[1].source == .url("rtsp://camera.local/stream"))
        #expect(s.entries.map(\.name) == ["fire drill", "weekday"])
        let weekday = s.entries[1]
        #expect(weekday.priority == 3 && weekday.days == [.monday, .tuesday, .wednesday, .thursday, .friday])
        #expect(weekday.start == LocalTime(hour: 7, minute: 30) && weekday.end == LocalTime(hour: 19, minute: 0))
        #expect(weekday.firstDate == date("2026-01-05") && weekday.lastDate == date("2026-06-30"))
        #expect(weekday.exceptionDates == [date("2026-01-07"), date("2026-01-19")])
        #expect(weekday.recurrence?.frequency == .weekly && weekday.recurrence?.interval == 2)
        #expect(s.entries[0].isInterrupt)
    }

    @Test("A TOML schedule reads into the model with every option")
    func tomlModel() throws {
        let result = ScheduleReader.parse(text: Self.toml, path: "/srv/show/schedule.toml")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        try check(try #require(result.schedule))
    }

    @Test("The same schedule in JSON reads into the same model")
    func jsonModel() throws {
        let result = ScheduleReader.parse(text: Self.json, path: "/srv/show/schedule.json")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        try check(try #require(result.schedule))
    }

    @Test("Duration forms are exact")
    func durations() {
        #expect(TimeSyntax.duration("90s") == seconds(90))
        #expect(TimeSyntax.duration("1h30m") == seconds(5400))
        #expect(TimeSyntax.duration("1m 0.5s") == MediaTime(value: 121, timescale: 2))
        #expect(TimeSyntax.duration("250ms") == MediaTime(value: 1, timescale: 4))
        #expect(TimeSyntax.duration("00:01:02.25") == MediaTime(value: 249, timescale: 4))
        #expect(TimeSyntax.duration("01:02") == seconds(62))
        #expect(TimeSyntax.duration("12.5") == MediaTime(value: 25, timescale: 2))
        for bad in ["", "5 sec", "1s1h", "-3s", "00:61:00", "1:2:3", "s", "1.2.3s"] {
            #expect(TimeSyntax.duration(bad) == nil, "\(bad)")
        }
    }

    @Test("Key positions survive inline tables, dotted keys, quoted keys and multi-line strings")
    func positions() throws {
        let text = """
            version = 1
            fallback = "p"
            note = \"\"\"
            a "quoted" [bracket] line
            \"\"\"
            playlists.p.items = [
              { image = "a.png", duration = "1s" },  # comment ] with bracket
              { image = "b.png", "dura tion" = "1s" },
            ]
            """
        let found = ScheduleReader.parse(text: text, path: "t.toml").diagnostics
        let expected: [String] = [
            "t.toml:3:1: error: unknown key \"note\" in the schedule",
            "t.toml:8:3: error: an image item needs a \"duration\" (how long it shows, e.g. \"10s\")",
            "t.toml:8:22: error: unknown key \"dura tion\" in an item (did you mean \"duration\"?)",
        ]
        #expect(found.map(\.description) == expected)
    }
}
