import Foundation
import MediaTime

/// The accelerated soak's schedule: a fallback playlist with image and text overlays (a ticker among
/// them), two day-part windows, an interrupt every six minutes, and the revisions that replace the
/// file every simulated hour — valid ones, and broken ones the show must reject.
///
/// Every clip's top half is one solid colour (``colour(of:)``), so a screenshot says which clip is on
/// screen; overlays stay in the bottom half. Each overlay shows something no other overlay shows (its
/// own picture file, or text naming its playlist and revision), so an `overlay-shown` line's detail
/// says which cue it had.
struct SoakProgramme {
    /// A clip or picture of the soak (Fixtures/generated, made by scripts/fixtures.sh).
    struct Media {
        let path: String
        /// What the probe pixel of the top half shows.
        let colour: SoakColour
        /// One play, from its first frame to its end (a still: the duration the schedule gives it).
        let length: MediaTime
        let isStill: Bool
        /// How many overlays it carries in every playlist and every revision: an item played whole
        /// shows exactly this many.
        let overlays: Int
        /// It has a sound track.
        var hasSound = false
    }

    static let red = Media(path: Fixtures.path("soak1.mp4"), colour: .red, length: seconds(6), isStill: false, overlays: 2)
    static let green = Media(path: Fixtures.path("soak2.mp4"), colour: .green, length: seconds(8), isStill: false, overlays: 2, hasSound: true)
    static let blue = Media(path: Fixtures.path("soak3.mp4"), colour: .blue, length: seconds(10), isStill: false, overlays: 1)
    static let alert = Media(path: Fixtures.path("soak-alert.mp4"), colour: .yellow, length: seconds(4), isStill: false, overlays: 1, hasSound: true)
    static let still = Media(path: Fixtures.path("soak-still.png"), colour: .magenta, length: seconds(6), isStill: true, overlays: 1)
    static let media = [red, green, blue, alert, still]

    static var available: Bool {
        media.allSatisfy { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// When the interrupts start, in seconds of the day: every six minutes from 00:03, at a second
    /// that changes each time so that most land inside an item (never on the hour, when a day part
    /// opens or closes, nor at half past, when the file is replaced).
    static let interruptSeconds: [Int] = stride(from: 3, to: 24 * 60, by: 6).enumerated().map { index, minute in
        minute * 60 + 5 + (index * 17) % 50
    }
    /// Each revision lists the interrupts of the two hours after it is written, as a content system
    /// publishing a rolling schedule would (a broken revision leaves the one before it in force, which
    /// still covers the hour after): the show resolves every entry at every tick, and a day's 240 in
    /// one file would make the ticks, not the playback, the soak's cost.
    static let interruptHorizon = 2 * 3600
    /// Hours whose replacement file is broken (a syntax error, a cue outside its item, a fallback
    /// naming no playlist); each must be rejected while the show plays on.
    static let brokenHours: [Int: String] = [5: "syntax", 13: "cue", 21: "playlist"]
    /// The revision (the one written at 10:30) that adds an interrupt starting at that very minute:
    /// it must cut in at once.
    static let bulletinRevision = 11

    let directory: String
    var path: String { directory + "/soak.toml" }

    /// Writes the overlay pictures and revision 0.
    init(directory: String) throws {
        self.directory = directory
        let pictures: [(String, UInt8, UInt8, UInt8)] = [
            ("badge-1", 0, 255, 255), ("badge-2", 255, 255, 255), ("badge-3", 255, 128, 0),
            ("badge-4", 128, 0, 255), ("badge-5", 0, 128, 128), ("badge-still", 255, 255, 0),
        ]
        for (name, red, green, blue) in pictures {
            try writeSolidPNG(directory + "/\(name).png", red: red, green: green, blue: blue)
        }
        try text(revision: 0).write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }

    /// The colour a screenshot shows for the item playing `source`.
    static func colour(of source: String) -> SoakColour? { media.first { $0.path == source }?.colour }
    static func medium(_ source: String) -> Media? { media.first { $0.path == source } }

    /// Where each overlay's cue falls in its item's timeline, by what the overlay shows (the part of
    /// its `overlay-shown` detail before " at "), for `revision`.
    static func cues(revision: Int) -> [String: MediaTime] {
        func at(_ millis: Int64) -> MediaTime { MediaTime(value: millis, timescale: 1000) }
        return [
            "badge-1.png": at(1300),                              // between the frames at 1.2 and 1.4 s
            "text \"House r\(revision)\"": at(houseTextCue(revision).millis),
            "text \"Still r\(revision)\"": at(2500),              // end-3.5s of a 6 s still
            "badge-2.png": at(2000),                              // 25% of 8 s
            "text \"Ticker r\(revision)\"": at(5000),             // end-3s of 8 s
            "badge-3.png": at(500),                               // between the frames at 0.4 and 0.6 s
            "text \"Morning r\(revision)\"": at(7900),            // end-2.1s of 10 s
            "badge-still.png": at(1000),
            "badge-4.png": at(3300),
            "text \"Evening r\(revision)\"": at(4000),            // 50% of 8 s
            "badge-5.png": at(200),                               // on a frame
            "text \"Dusk r\(revision)\"": at(4900),
            "text \"Alert r\(revision)\"": at(400),
        ]
    }

    /// The house text's cue moves with each revision.
    static func houseTextCue(_ revision: Int) -> (text: String, millis: Int64) {
        [("2s", 2000), ("2.5s", 2500), ("00:00:03.1", 3100)][revision % 3]
    }

    /// The schedule of `revision`; for a broken hour's revision, the broken file.
    func text(revision: Int, broken: String? = nil) -> String {
        let r = revision
        let houseOrder: [String] = r % 2 == 0 ? ["red", "still", "green", "blue"] : ["blue", "red", "still", "green"]
        let house: [String: String] = [
            "red": """
                [[playlists.house.items]]
                video = "\(Self.red.path)"
                \(r % 2 == 1 ? "repeat = 2" : "")
                  [[playlists.house.items.overlays]]
                  image = "badge-1.png"
                  rect = [0.05, 0.55, 0.2, 0.4]
                  at = "\(broken == "cue" ? "7s" : "1.3s")"
                  duration = "2s"
                  fade_in = "0.2s"
                  [[playlists.house.items.overlays]]
                  text = "House r\(r)"
                  rect = [0.3, 0.6, 0.65, 0.3]
                  background = "#000000B0"
                  at = "\(Self.houseTextCue(r).text)"
                  duration = "2s"
                """,
            "still": """
                [[playlists.house.items]]
                image = "\(Self.still.path)"
                duration = "6s"
                  [[playlists.house.items.overlays]]
                  text = "Still r\(r)"
                  rect = [0.1, 0.6, 0.8, 0.3]
                  at = "end-3.5s"
                  duration = "3s"
                """,
            "green": """
                [[playlists.house.items]]
                video = "\(Self.green.path)"
                volume = 0.8
                  [[playlists.house.items.overlays]]
                  image = "badge-2.png"
                  rect = [0.7, 0.55, 0.25, 0.4]
                  at = "25%"
                  duration = "1s"
                  [[playlists.house.items.overlays]]
                  text = "Ticker r\(r)"
                  ticker = true
                  ticker_speed = 0.5
                  rect = [0.0, 0.78, 1.0, 0.22]
                  background = "#202020FF"
                  at = "end-3s"
                """,
            "blue": """
                [[playlists.house.items]]
                video = "\(Self.blue.path)"
                  [[playlists.house.items.overlays]]
                  image = "badge-3.png"
                  rect = [0.4, 0.6, 0.2, 0.35]
                  at = "0.5s"
                  duration = "4s"
                  fade_out = "0.5s"
                """,
        ]
        var text = """
            # The accelerated soak's programme, revision \(r) (Tests/ShowRunnerTests/SoakProgramme.swift).
            version = 1
            timezone = "UTC"
            fallback = "\(broken == "playlist" ? "hall" : "house")"

            """
        for name in houseOrder { text += house[name]! + "\n" }
        text += """

            [[playlists.morning.items]]
            video = "\(Self.blue.path)"
              [[playlists.morning.items.overlays]]
              text = "Morning r\(r)"
              rect = [0.0, 0.6, 1.0, 0.3]
              at = "end-2.1s"
            [[playlists.morning.items]]
            image = "\(Self.still.path)"
            duration = "6s"
              [[playlists.morning.items.overlays]]
              image = "badge-still.png"
              rect = [0.4, 0.6, 0.2, 0.35]
              at = "1s"
              duration = "2s"

            [[playlists.evening.items]]
            video = "\(Self.green.path)"
              [[playlists.evening.items.overlays]]
              image = "badge-4.png"
              rect = [0.05, 0.55, 0.2, 0.4]
              at = "3.3s"
              duration = "1.5s"
              [[playlists.evening.items.overlays]]
              text = "Evening r\(r)"
              rect = [0.3, 0.6, 0.65, 0.3]
              at = "50%"
              duration = "3s"
            [[playlists.evening.items]]
            video = "\(Self.red.path)"
              [[playlists.evening.items.overlays]]
              image = "badge-5.png"
              rect = [0.7, 0.55, 0.25, 0.4]
              at = "0.2s"
              duration = "1s"
              [[playlists.evening.items.overlays]]
              text = "Dusk r\(r)"
              rect = [0.0, 0.6, 0.6, 0.3]
              at = "4.9s"

            [[playlists.alert.items]]
            video = "\(Self.alert.path)"
              [[playlists.alert.items.overlays]]
              text = "Alert r\(r)"
              rect = [0.0, 0.55, 1.0, 0.4]
              background = "#C00000FF"
              at = "0.4s"
              duration = "3s"

            [entries.breakfast]
            playlist = "morning"
            start = "06:00"
            end = "09:30"

            [entries.evening]
            playlist = "evening"
            start = "18:00"
            end = "21:00"

            """
        if r >= Self.bulletinRevision {
            text += """

                [entries.bulletin]
                playlist = "alert"
                interrupt = true
                start = "10:30"
                priority = 1000

                """
        }
        // One daily entry per interrupt (a rule repeats a window by days, weeks or months, not
        // within a day). Distinct priorities: among interrupts the higher wins.
        let written = r == 0 ? 0 : (r - 1) * 3600 + 1800
        for (index, second) in Self.interruptSeconds.enumerated() where second >= written && second < written + Self.interruptHorizon {
            text += """

                [entries.\(Self.interruptName(second))]
                playlist = "alert"
                interrupt = true
                start = "\(String(format: "%02d:%02d:%02d", second / 3600, second / 60 % 60, second % 60))"
                priority = \(index + 1)

                """
        }
        if broken == "syntax" { text = text.replacingOccurrences(of: "fallback = \"house\"", with: "fallback = \"house") }
        return text
    }

    /// "alert-HHMMSS": the entry of the interrupt starting at `second` of the day.
    static func interruptName(_ second: Int) -> String {
        String(format: "alert-%02d%02d%02d", second / 3600, second / 60 % 60, second % 60)
    }
}

/// The solid colours of the soak's clips, as a screenshot's probe pixel shows them.
enum SoakColour: String, Sendable {
    case red, green, blue, yellow, magenta

    /// Whether `pixel` shows this colour (after YUV encoding and the compositor's conversion): each
    /// channel clearly on or clearly off. Black matches none.
    func matches(_ pixel: (r: UInt8, g: UInt8, b: UInt8, a: UInt8)) -> Bool {
        let on: (Bool, Bool, Bool)
        switch self {
        case .red: on = (true, false, false)
        case .green: on = (false, true, false)   // FFmpeg's "green" is #008000
        case .blue: on = (false, false, true)
        case .yellow: on = (true, true, false)
        case .magenta: on = (true, false, true)
        }
        func level(_ value: UInt8, _ isOn: Bool) -> Bool { isOn ? value > 100 : value < 70 }
        return level(pixel.r, on.0) && level(pixel.g, on.1) && level(pixel.b, on.2)
    }
}
