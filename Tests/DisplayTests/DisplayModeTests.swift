import Displays
import MediaTime
import MediaSinks
import Testing

@Suite("Display modes and options")
struct DisplayModeTests {
    @Test("WxH@Hz parses, with decimal rates kept exact in millihertz")
    func parsing() throws {
        #expect(try DisplayMode(parsing: "1920x1080@60") == DisplayMode(width: 1920, height: 1080, refreshMillihertz: 60_000))
        #expect(try DisplayMode(parsing: "1280x720@59.94").refreshMillihertz == 59_940)
        #expect(try DisplayMode(parsing: "800x600") == DisplayMode(width: 800, height: 600))
        #expect(DisplayMode.fullHD.description == "1920x1080@60")
        #expect(DisplayMode.fullHD.refreshInterval == MediaTime(value: 1, timescale: 60))
    }

    @Test("malformed modes are rejected with the expected form", arguments: ["", "1920", "1920x", "x1080", "0x0", "1920x1080@", "1920x1080@fast", "axb"])
    func malformed(_ text: String) {
        #expect(throws: DisplayError.invalidMode(text)) { try DisplayMode(parsing: text) }
    }

    @Test("command-line gravity names map to AVFoundation's")
    func gravityNames() {
        #expect(VideoGravity(commandLineName: "fit") == .resizeAspect)
        #expect(VideoGravity(commandLineName: "fill") == .resizeAspectFill)
        #expect(VideoGravity(commandLineName: "stretch") == .resize)
        #expect(VideoGravity(commandLineName: "zoom") == nil)
    }

    @Test("rotations are multiples of 90 degrees, normalised")
    func rotations() {
        #expect(Rotation(degrees: 90) == .clockwise90)
        #expect(Rotation(degrees: -90) == .clockwise270)
        #expect(Rotation(degrees: 450) == .clockwise90)
        #expect(Rotation(degrees: 45) == nil)
    }

    @Test("the output size swaps width and height for portrait rotations")
    func outputSize() throws {
        let display = try HeadlessDisplay(mode: DisplayMode(width: 64, height: 36), rotation: .clockwise90, pacing: .manual)
        defer { display.stop() }
        #expect(display.outputSize == (36, 64))
        #expect(display.refreshInterval == MediaTime(value: 1, timescale: 60))
    }
}
