import Displays
import MediaAsset
import MediaTime
import Playback
import MediaSinks
import Testing

/// Text overlays and subtitles drawn with FreeType and DejaVu Sans.
@Suite("Text overlays")
struct TextOverlayTests {
    static let mode = DisplayMode(width: 320, height: 180)

    /// The bounding box of pixels satisfying `test`, or nil.
    static func bounds(_ image: RGBAImage, where test: (RGB) -> Bool) -> (minX: Int, minY: Int, maxX: Int, maxY: Int)? {
        var result: (Int, Int, Int, Int)?
        for y in 0..<image.height {
            for x in 0..<image.width where test(image.rgb(x, y)) {
                if let r = result {
                    result = (min(r.0, x), min(r.1, y), max(r.2, x), max(r.3, y))
                } else {
                    result = (x, y, x, y)
                }
            }
        }
        return result.map { ($0.0, $0.1, $0.2, $0.3) }
    }

    static func blackScreen() throws -> HeadlessDisplay {
        let display = try HeadlessDisplay(mode: mode, gravity: .resize, pacing: .manual)
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.black))
        try display.refresh()
        return display
    }

    static func isGlyph(_ c: RGB) -> Bool { c.r > 200 && c.g > 200 && c.b > 200 }
    static func isBox(_ c: RGB) -> Bool { c.r > 200 && c.g < 40 && c.b < 40 }

    @Test("UTF-8 text renders glyphs inside its rectangle, on its background box")
    func glyphsInsideBox() throws {
        let display = try Self.blackScreen()
        defer { display.stop() }
        let style = TextStyle(pixelSize: 20, color: .white, background: RGBAColor(red: 255, green: 0, blue: 0), padding: 4)
        display.layers.add(OverlayLayer(.text("Grüße, Vitrine!", style), frame: .pixels(x: 40, y: 50, width: 240, height: 60)))
        try display.refresh()
        let shot = try display.screenshot().image
        let glyphs = try #require(Self.bounds(shot, where: Self.isGlyph))
        let box = try #require(Self.bounds(shot, where: Self.isBox))
        #expect(glyphs.minX >= 40 && glyphs.maxX < 280 && glyphs.minY >= 50 && glyphs.maxY < 110)
        #expect(box.minX >= 40 && box.maxX < 280 && box.minY >= 50 && box.maxY < 110)
        // Glyphs sit inside the box that hugs them.
        #expect(glyphs.minX > box.minX && glyphs.maxX < box.maxX && glyphs.minY > box.minY && glyphs.maxY < box.maxY)
        // A line of 15 characters at 20 px is far wider than tall.
        #expect(glyphs.maxX - glyphs.minX > 3 * (glyphs.maxY - glyphs.minY))
    }

    @Test("long text wraps onto more lines inside a narrow rectangle, and stays one line in a wide one")
    func wrapping() throws {
        let words = "Opening hours today nine to six"
        var heights: [Int] = []
        for width in [320, 90] {
            let display = try Self.blackScreen()
            defer { display.stop() }
            display.layers.add(OverlayLayer(.text(words, TextStyle(pixelSize: 16)), frame: .pixels(x: 0, y: 0, width: width, height: 180)))
            try display.refresh()
            let glyphs = try #require(Self.bounds(try display.screenshot().image, where: Self.isGlyph))
            #expect(glyphs.maxX < width)
            heights.append(glyphs.maxY - glyphs.minY)
        }
        #expect(heights[0] < 2 * 16)
        #expect(heights[1] > 3 * 16)
    }

    @Test("alignment moves each line to the leading edge, the centre or the trailing edge",
          arguments: TextAlignment.allCases)
    func alignment(_ alignment: TextAlignment) throws {
        let display = try Self.blackScreen()
        defer { display.stop() }
        display.layers.add(OverlayLayer(.text("Hi", TextStyle(pixelSize: 24, alignment: alignment, padding: 10)),
                                   frame: .pixels(x: 0, y: 0, width: 320, height: 60)))
        try display.refresh()
        let glyphs = try #require(Self.bounds(try display.screenshot().image, where: Self.isGlyph))
        let middle = (glyphs.minX + glyphs.maxX) / 2
        switch alignment {
        case .leading: #expect(glyphs.minX >= 10 && glyphs.minX < 20)
        case .center: #expect(abs(middle - 160) < 6)
        case .trailing: #expect(glyphs.maxX <= 310 && glyphs.maxX > 295)
        }
    }

    @Test("the text colour is used for the glyphs")
    func colour() throws {
        let display = try Self.blackScreen()
        defer { display.stop() }
        display.layers.add(OverlayLayer(.text("MMMM", TextStyle(pixelSize: 40, color: RGBAColor(red: 0, green: 255, blue: 0))),
                                   frame: .pixels(x: 0, y: 0, width: 320, height: 80)))
        try display.refresh()
        let shot = try display.screenshot().image
        #expect(Self.bounds(shot) { $0.g > 200 && $0.r < 40 && $0.b < 40 } != nil)
        #expect(Self.bounds(shot, where: Self.isGlyph) == nil)
    }

    @Test("a text subtitle from the engine is drawn near the bottom of the video, and cleared")
    func subtitle() throws {
        let display = try HeadlessDisplay(mode: Self.mode, gravity: .resize, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.black), subtitle: .text("Hello"))
        try display.refresh()
        let glyphs = try #require(Self.bounds(try display.screenshot().image, where: Self.isGlyph))
        #expect(glyphs.minY > Self.mode.height / 2)
        source.enqueue(nil, subtitle: nil)
        try display.refresh()
        #expect(Self.bounds(try display.screenshot().image, where: Self.isGlyph) == nil)
    }
}
