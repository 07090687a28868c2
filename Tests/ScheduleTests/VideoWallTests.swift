import MediaSinks
import Testing
@testable import Scheduling

/// `[display] wall` and `[display] crop`: a screen's tile of a video wall, read from TOML and JSON
/// and checked with file:line:column like every other key.
@Suite("Video walls in the schedule")
struct VideoWallTests {
    static func text(display: String) -> String {
        """
        version = 1
        fallback = "loop"

        [display]
        \(display)

        [[playlists.loop.items]]
        video = "clip.mp4"
        """
    }

    @Test("a 3x2 wall with bezels: the tile is this screen's rectangle of the whole, gaps included in the whole")
    func wallTile() throws {
        let text = Self.text(display: "wall = { columns = 3, rows = 2, column = 1, row = 0, bezel = [0.02, 0.03] }")
        #expect(diagnostics(text).isEmpty, "\(diagnostics(text))")
        let tile = try #require(try schedule(text).display.wall)
        // The whole is 3 + 2 * 0.02 screen widths wide and 2 + 0.03 screen heights high.
        #expect(abs(tile.width - 1 / 3.04) < 1e-12 && abs(tile.height - 1 / 2.03) < 1e-12)
        #expect(abs(tile.x - 1.02 / 3.04) < 1e-12 && tile.y == 0)
        // The last tile ends at the whole's right and bottom edges.
        let corner = try #require(WallTile(columns: 3, rows: 2, column: 2, row: 1, bezel: (0.02, 0.03)))
        #expect(abs(corner.x + corner.width - 1) < 1e-12 && abs(corner.y + corner.height - 1) < 1e-12)
    }

    @Test("the canvas a tile's screen lays the wall out on: the whole wall in this screen's pixels, the tile at a screen plus a bezel per step")
    func canvas() throws {
        let tile = try #require(WallTile(columns: 3, rows: 2, column: 2, row: 1, bezel: (0.05, 0.1)))
        let canvas = tile.canvas(screenWidth: 320, screenHeight: 180)
        #expect(abs(canvas.width - 992) < 1e-9 && abs(canvas.height - 378) < 1e-9, "\(canvas)")
        let origin = tile.origin(screenWidth: 320, screenHeight: 180)
        #expect(abs(origin.x - 672) < 1e-9 && abs(origin.y - 198) < 1e-9, "\(origin)")
        let whole = WallTile.whole.canvas(screenWidth: 320, screenHeight: 180)
        #expect(whole.width == 320 && whole.height == 180)
    }

    @Test("JSON spells the wall and the crop the same way")
    func json() throws {
        let wall = """
            {"version": 1, "fallback": "loop", "display": {"wall": {"columns": 2, "rows": 1, "column": 1, "row": 0}},
             "playlists": {"loop": {"items": [{"video": "clip.mp4"}]}}}
            """
        #expect(try schedule(wall, path: "/tmp/test.json").display.wall == WallTile(columns: 2, rows: 1, column: 1, row: 0))
        let crop = """
            {"version": 1, "fallback": "loop", "display": {"crop": [0.5, 0, 0.5, 1]},
             "playlists": {"loop": {"items": [{"video": "clip.mp4"}]}}}
            """
        #expect(try schedule(crop, path: "/tmp/test.json").display.wall == WallTile(x: 0.5, y: 0, width: 0.5, height: 1))
    }

    @Test("mistakes in a wall are reported where they are, saying what is expected",
          arguments: [
            ("wall = { columns = 3, rows = 2, column = 3, row = 0 }", "column 3, row 0 is not a screen of a 3x2 wall"),
            ("wall = { columns = 3, rows = 2, row = 0 }", "wall needs \"column\""),
            ("wall = { columns = 3, rows = 2, column = 0, row = 0, bezel = [0.02] }", "bezel is [horizontal, vertical]"),
            ("wall = { columns = 3, rows = 2, column = 0, row = 0, bezels = [0, 0] }", "unknown key \"bezels\" in wall"),
            ("wall = { columns = 0, rows = 2, column = 0, row = 0 }", "1…64 columns"),
            ("crop = [0.5, 0, 0.6, 1]", "is not inside the picture"),
            ("crop = [0.5, 0, 0.5]", "crop is [x, y, width, height]"),
            ("wall = { columns = 2, rows = 1, column = 0, row = 0 }\ncrop = [0, 0, 1, 1]", "wall or crop, not both"),
          ])
    func mistakes(_ line: String, _ message: String) throws {
        let found = diagnostics(Self.text(display: line))
        let problem = try #require(found.first { $0.message.contains(message) }, "\(found)")
        #expect(problem.location.line == 5 || problem.location.line == 6, "\(problem)")
        #expect(problem.location.column >= 1)
    }
}
