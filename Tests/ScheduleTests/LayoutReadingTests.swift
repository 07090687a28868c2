import Foundation
import MediaSinks
import MediaTime
import Testing
@testable import Scheduling

/// Layouts in the schedule format: both spellings, and every mistake `vitrine validate` reports
/// about them, at the line and column where it was made.
@Suite("Layouts: reading and validation")
struct LayoutReadingTests {
    static let toml = """
        version = 1
        fallback = "house"

        [[playlists.house.items]]
        video = "h.mp4"

        [[playlists.lobby.items]]
        video = "a.mp4"

        [[playlists.adverts.items]]
        image = "c.png"
        duration = "7s"

        [layouts.split]
        background = "#101010"

          [[layouts.split.zones]]
          name = "main"
          rect = [0.0, 0.0, 0.75, 1.0]
          playlist = "lobby"

          [[layouts.split.zones]]
          name = "side"
          rect = [0.75, 0.0, 0.25, 1.0]
          playlist = "adverts"
          gravity = "fill"
          audio = true

          [[layouts.split.zones]]
          name = "badge"
          rect = [0.02, 0.02, 0.2, 0.1]
          playlist = "adverts"
          audio = false
          z = 1

        [entries.day]
        layout = "split"
        start = "08:00"
        end = "18:00"

        [entries.drill]
        playlist = "house"
        interrupt = true
        start = "12:00"
        end = "12:05"
        """

    static let json = """
        {
          "version": 1,
          "fallback": "house",
          "playlists": {
            "house": {"items": [{"video": "h.mp4"}]},
            "lobby": {"items": [{"video": "a.mp4"}]},
            "adverts": {"items": [{"image": "c.png", "duration": "7s"}]}
          },
          "layouts": {
            "split": {"background": "#101010", "zones": [
              {"name": "main", "rect": [0.0, 0.0, 0.75, 1.0], "playlist": "lobby"},
              {"name": "side", "rect": [0.75, 0.0, 0.25, 1.0], "playlist": "adverts", "gravity": "fill", "audio": true},
              {"name": "badge", "rect": [0.02, 0.02, 0.2, 0.1], "playlist": "adverts", "audio": false, "z": 1}
            ]}
          },
          "entries": {
            "day": {"layout": "split", "start": "08:00", "end": "18:00"},
            "drill": {"playlist": "house", "interrupt": true, "start": "12:00", "end": "12:05"}
          }
        }
        """

    func check(_ s: Schedule) throws {
        let layout = try #require(s.layouts["split"])
        #expect(s.layouts.count == 1)
        #expect(layout.name == "split")
        #expect(layout.background == RGBAColor(red: 0x10, green: 0x10, blue: 0x10))
        #expect(layout.zones.map(\.name) == ["main", "side", "badge"])
        #expect(layout.zones.map(\.rect) == [OverlayRect(x: 0, y: 0, width: 0.75, height: 1), OverlayRect(x: 0.75, y: 0, width: 0.25, height: 1),
                                             OverlayRect(x: 0.02, y: 0.02, width: 0.2, height: 0.1)])
        #expect(layout.zones.map(\.playlist) == ["lobby", "adverts", "adverts"])
        #expect(layout.zones.map(\.gravity) == [nil, .resizeAspectFill, nil])
        #expect(layout.zones.map(\.audio) == [nil, true, false])
        #expect(layout.zones.map(\.zIndex) == [0, 0, 1])
        #expect(layout.soundZoneIndex == 1)
        #expect(s.entries.map(\.name) == ["day", "drill"])
        #expect(s.entries.map(\.content) == [.layout("split"), .playlist("house")])
        #expect(s.entries[0].content.layoutName == "split" && s.entries[0].content.playlistName == nil)
        #expect(s.entries[1].content.playlistName == "house" && s.entries[1].isInterrupt)
        #expect(s.fallbackPlaylist == "house")
    }

    @Test("A layout in TOML reads into the model: background, zones with rect, playlist, gravity, audio and z, and an entry naming it")
    func tomlModel() throws {
        let result = ScheduleReader.parse(text: Self.toml, path: "/srv/show/schedule.toml")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        try check(try #require(result.schedule))
    }

    @Test("The same layout in JSON reads into the same model")
    func jsonModel() throws {
        let result = ScheduleReader.parse(text: Self.json, path: "/srv/show/schedule.json")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        try check(try #require(result.schedule))
    }

    @Test("The zone whose sound plays: the one marked audio, else the first not marked silent, else none")
    func soundZone() {
        func layout(_ audio: [Bool?]) -> Layout {
            let here = SourceLocation(file: "t", line: 1, column: 1)
            return Layout(name: "l", zones: audio.enumerated().map { LayoutZone(name: "z\($0.offset)", playlist: "p", audio: $0.element, location: here) },
                          location: here)
        }
        #expect(layout([nil, nil]).soundZoneIndex == 0)
        #expect(layout([nil, true]).soundZoneIndex == 1)
        #expect(layout([false, nil, nil]).soundZoneIndex == 1)
        #expect(layout([false, false]).soundZoneIndex == nil)
    }

    @Test("Zones that meet edge to edge do not overlap; zones that share an area do")
    func intersections() {
        let main = OverlayRect(x: 0, y: 0, width: 0.75, height: 1)
        #expect(main.intersection(OverlayRect(x: 0.75, y: 0, width: 0.25, height: 1)) == nil)
        #expect(main.intersection(OverlayRect(x: 0.1 + 0.2 + 0.45, y: 0, width: 0.25, height: 1)) == nil)
        #expect(main.intersection(OverlayRect(x: 0, y: 1, width: 1, height: 0)) == nil)
        let shared = main.intersection(OverlayRect(x: 0.5, y: 0.5, width: 0.5, height: 0.5))
        #expect(shared == OverlayRect(x: 0.5, y: 0.5, width: 0.25, height: 0.5))
    }

    // MARK: Mistakes

    /// Each case replaces one line of ``toml`` (marked by its text) to introduce one mistake.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var replace: String
        var with: String
        var kind: ScheduleDiagnostic.Kind
        var line: Int
        var column: Int
        var message: String
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "a zone off the screen to the right", replace: "rect = [0.75, 0.0, 0.25, 1.0]", with: "rect = [0.8, 0.0, 0.25, 1.0]",
             kind: .outOfRange, line: 24, column: 3,
             message: "rect [0.8, 0.0, 0.25, 1.0] does not fit on the screen (fractions 0…1; x+width and y+height at most 1)"),
        Case(name: "a zone above the screen", replace: "rect = [0.02, 0.02, 0.2, 0.1]", with: "rect = [0.02, -0.1, 0.2, 0.1]",
             kind: .outOfRange, line: 31, column: 3,
             message: "rect [0.02, -0.1, 0.2, 0.1] does not fit on the screen (fractions 0…1; x+width and y+height at most 1)"),
        Case(name: "a zone without a size", replace: "rect = [0.02, 0.02, 0.2, 0.1]", with: "rect = [0.02, 0.02, 0.0, 0.1]",
             kind: .outOfRange, line: 31, column: 3,
             message: "rect [0.02, 0.02, 0.0, 0.1] does not fit on the screen (fractions 0…1; x+width and y+height at most 1)"),
        Case(name: "a rect that is not four numbers", replace: "rect = [0.02, 0.02, 0.2, 0.1]", with: "rect = [0.02, 0.02]",
             kind: .invalidValue, line: 31, column: 3,
             message: "rect is [x, y, width, height] as fractions of the screen, e.g. [0.7, 0.05, 0.25, 0.1]"),
        Case(name: "overlapping zones with the same z", replace: "  z = 1\n", with: "",
             kind: .overlappingZones, line: 31, column: 3,
             message: "zones \"main\" (/srv/signage/lobby.toml:17:3) and \"badge\" of layout \"split\" overlap at [0.02, 0.02, 0.2, 0.1] with the same z 0; give one a higher z, or move it"),
        Case(name: "overlapping zones with the same explicit z", replace: "  playlist = \"lobby\"\n", with: "  playlist = \"lobby\"\n  z = 1\n",
             kind: .overlappingZones, line: 32, column: 3,
             message: "zones \"main\" (/srv/signage/lobby.toml:17:3) and \"badge\" of layout \"split\" overlap at [0.02, 0.02, 0.2, 0.1] with the same z 1; give one a higher z, or move it"),
        Case(name: "a zone naming no playlist", replace: "playlist = \"adverts\"\n  gravity", with: "playlist = \"advert\"\n  gravity",
             kind: .unknownPlaylist, line: 25, column: 3, message: "no playlist named \"advert\" (did you mean \"adverts\"?)"),
        Case(name: "an entry with both a layout and a playlist", replace: "layout = \"split\"", with: "layout = \"split\"\nplaylist = \"house\"",
             kind: .conflictingKeys, line: 38, column: 1,
             message: "entry \"day\" has both \"layout\" and \"playlist\"; an entry plays one playlist or one layout"),
        Case(name: "an entry with a playlist, then a layout", replace: "layout = \"split\"", with: "playlist = \"house\"\nlayout = \"split\"",
             kind: .conflictingKeys, line: 38, column: 1,
             message: "entry \"day\" has both \"playlist\" and \"layout\"; an entry plays one playlist or one layout"),
        Case(name: "an entry with neither", replace: "layout = \"split\"\n", with: "",
             kind: .missingKey, line: 36, column: 1, message: "entry \"day\" needs a \"playlist\" or a \"layout\""),
        Case(name: "an interrupt naming a layout", replace: "playlist = \"house\"\ninterrupt", with: "layout = \"split\"\ninterrupt",
             kind: .conflictingKeys, line: 42, column: 1,
             message: "interrupt \"drill\" names a layout: interrupts still take the whole screen, so an interrupt plays one \"playlist\""),
        Case(name: "an entry naming no layout", replace: "layout = \"split\"", with: "layout = \"spilt\"",
             kind: .unknownLayout, line: 37, column: 1, message: "no layout named \"spilt\" (did you mean \"split\"?)"),
        Case(name: "an entry naming a playlist as a layout", replace: "layout = \"split\"", with: "layout = \"lobby\"",
             kind: .unknownLayout, line: 37, column: 1, message: "no layout named \"lobby\": \"lobby\" is a playlist (write playlist = \"lobby\")"),
        Case(name: "an entry naming a layout as a playlist", replace: "layout = \"split\"", with: "playlist = \"split\"",
             kind: .unknownPlaylist, line: 37, column: 1, message: "no playlist named \"split\": \"split\" is a layout (write layout = \"split\")"),
        Case(name: "a fallback naming a layout", replace: "fallback = \"house\"", with: "fallback = \"split\"",
             kind: .unknownPlaylist, line: 2, column: 1,
             message: "no playlist named \"split\": \"split\" is a layout, and the fallback plays one playlist full screen"),
        Case(name: "two zones with one name", replace: "name = \"badge\"", with: "name = \"main\"",
             kind: .duplicateName, line: 30, column: 3,
             message: "layout \"split\" has two zones named \"main\" (the other at /srv/signage/lobby.toml:17:3); zone names must differ"),
        Case(name: "two zones with sound", replace: "audio = false", with: "audio = true",
             kind: .conflictingKeys, line: 33, column: 3,
             message: "zones \"side\" and \"badge\" of layout \"split\" both have audio = true; at most one zone's sound plays"),
        Case(name: "a zone without a name", replace: "  name = \"badge\"\n", with: "",
             kind: .missingKey, line: 29, column: 3, message: "a zone of layout \"split\" needs a \"name\""),
        Case(name: "a zone with an empty name", replace: "name = \"badge\"", with: "name = \"\"",
             kind: .invalidValue, line: 30, column: 3, message: "a zone's name must not be empty"),
        Case(name: "a zone without a playlist", replace: "  playlist = \"lobby\"\n", with: "",
             kind: .missingKey, line: 17, column: 3, message: "zone \"main\" of layout \"split\" needs a \"playlist\""),
        Case(name: "a misspelt key in a zone", replace: "gravity = \"fill\"", with: "gravty = \"fill\"",
             kind: .unknownKey, line: 26, column: 3, message: "unknown key \"gravty\" in a zone of layout \"split\" (did you mean \"gravity\"?)"),
        Case(name: "a misspelt key in a layout", replace: "background = \"#101010\"", with: "backgound = \"#101010\"",
             kind: .unknownKey, line: 15, column: 1, message: "unknown key \"backgound\" in layout \"split\" (did you mean \"background\"?)"),
        Case(name: "a background that is not a colour", replace: "background = \"#101010\"", with: "background = \"grey\"",
             kind: .invalidValue, line: 15, column: 1, message: "background \"grey\" is not a colour such as \"#FFFFFF\" or \"#000000AA\""),
        Case(name: "audio that is not a boolean", replace: "audio = true", with: "audio = \"yes\"",
             kind: .wrongType, line: 27, column: 3, message: "\"audio\" must be true or false, not a string"),
        Case(name: "a gravity that does not exist", replace: "gravity = \"fill\"", with: "gravity = \"fil\"",
             kind: .invalidValue, line: 26, column: 3, message: "gravity must be \"fit\", \"fill\" or \"stretch\", not \"fil\" (did you mean \"fill\"?)"),
        Case(name: "a layout with no zones", replace: "[layouts.split]", with: "[layouts.empty]\n[layouts.split]",
             kind: .emptyLayout, line: 14, column: 1, message: "layout \"empty\" has no zones (add [[layouts.empty.zones]])"),
    ]

    @Test("Each mistake in a layout is reported with its kind, file:line:column and message", arguments: cases)
    func mistake(_ c: Case) throws {
        #expect(Self.toml.contains(c.replace), "the case must change the schedule")
        let text = Self.toml.replacingOccurrences(of: c.replace, with: c.with)
        let found = diagnostics(text, path: "/srv/signage/lobby.toml")
        let errors = found.filter { $0.severity == .error }
        #expect(errors.count == 1, "\(found)")
        let diagnostic = try #require(errors.first { $0.kind == c.kind }, "expected \(c.kind) in \(found)")
        #expect(diagnostic.description == "/srv/signage/lobby.toml:\(c.line):\(c.column): error: \(c.message)")
    }

    @Test("Zones that overlap with different z, and zones edge to edge, are valid")
    func validOverlaps() {
        #expect(diagnostics(Self.toml).isEmpty)
    }

    @Test("JSON layouts get the same checks, at JSON lines and columns")
    func jsonMistakes() {
        let text = Self.json
            .replacingOccurrences(of: "\"rect\": [0.75, 0.0, 0.25, 1.0]", with: "\"rect\": [0.75, 0.0, 0.3, 1.0]")
            .replacingOccurrences(of: "\"audio\": false, \"z\": 1", with: "\"audio\": false")
            .replacingOccurrences(of: "\"day\": {\"layout\": \"split\",", with: "\"day\": {\"layout\": \"split\", \"playlist\": \"house\",")
            .replacingOccurrences(of: "\"drill\": {\"playlist\": \"house\",", with: "\"drill\": {\"layout\": \"split\",")
            .replacingOccurrences(of: "\"playlist\": \"lobby\"}", with: "\"playlist\": \"loby\"}")
        let found = diagnostics(text, path: "/tmp/s.json").map(\.description)
        #expect(found == [
            "/tmp/s.json:11:55: error: no playlist named \"loby\" (did you mean \"lobby\"?)",
            "/tmp/s.json:12:24: error: rect [0.75, 0.0, 0.3, 1.0] does not fit on the screen (fractions 0…1; x+width and y+height at most 1)",
            "/tmp/s.json:13:25: error: zones \"main\" (/tmp/s.json:11:7) and \"badge\" of layout \"split\" overlap at [0.02, 0.02, 0.2, 0.1] with the same z 0; give one a higher z, or move it",
            "/tmp/s.json:17:32: error: entry \"day\" has both \"layout\" and \"playlist\"; an entry plays one playlist or one layout",
            "/tmp/s.json:18:15: error: interrupt \"drill\" names a layout: interrupts still take the whole screen, so an interrupt plays one \"playlist\"",
        ], "\(found)")
    }
}
