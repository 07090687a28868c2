import ChildProcesses
import Displays
import Foundation
import MediaAsset
import MediaTime
import Playback
import Testing
import MediaSinks

/// Overlays: rectangle, stacking, opacity, fades, bad images.
@Suite("Overlays")
struct OverlayTests {
    static let mode = DisplayMode(width: 160, height: 90)

    static func solidImage(_ colour: RGB, width: Int = 40, height: Int = 20, alpha: UInt8 = 255) -> RGBAImage {
        var pixels = [UInt8]()
        for _ in 0..<(width * height) { pixels += [UInt8(colour.r), UInt8(colour.g), UInt8(colour.b), alpha] }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }

    /// A manual display showing a blue video, with its clock and source.
    static func blueScreen() throws -> (HeadlessDisplay, ManualClock, ScriptedSource) {
        let clock = ManualClock(start: .nanoseconds(1_000_000_000))
        let display = try HeadlessDisplay(mode: mode, gravity: .resize, pacing: .manual, clock: clock)
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.blue))
        try display.refresh()
        return (display, clock, source)
    }

    @Test("an image overlay covers exactly its pixel rectangle")
    func pixelRectangle() throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        display.layers.add(OverlayLayer(.image(Self.solidImage(.red)), frame: .pixels(x: 20, y: 10, width: 40, height: 20)))
        try display.refresh()
        let shot = try display.screenshot().image
        #expect(shot.rgb(21, 11) == .red)
        #expect(shot.rgb(58, 28) == .red)
        #expect(shot.rgb(18, 20) == .blue)
        #expect(shot.rgb(62, 20) == .blue)
        #expect(shot.rgb(40, 8) == .blue)
        #expect(shot.rgb(40, 31) == .blue)
    }

    @Test("a relative rectangle scales with the screen")
    func relativeRectangle() throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        display.layers.add(OverlayLayer(.image(Self.solidImage(.green, width: 40, height: 22)),
                                   frame: .relative(x: 0.5, y: 0.5, width: 0.25, height: 0.25)))
        try display.refresh()
        let shot = try display.screenshot().image
        #expect(shot.rgb(82, 47) == .green)
        #expect(shot.rgb(118, 66) == .green)
        #expect(shot.rgb(78, 50) == .blue)
        #expect(shot.rgb(122, 50) == .blue)
    }

    @Test("a higher z-index draws on top whatever the order of adding")
    func zOrder() throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        let rect = LayerFrame.pixels(x: 0, y: 0, width: 40, height: 20)
        display.layers.add(OverlayLayer(.image(Self.solidImage(.white)), frame: rect, zIndex: 2))
        display.layers.add(OverlayLayer(.image(Self.solidImage(.red)), frame: rect, zIndex: 1))
        try display.refresh()
        #expect(try display.screenshot().image.rgb(10, 10) == .white)
    }

    @Test("a clip rectangle keeps the overlay inside it, and the part shown is the matching part of the picture; moving keeps the clip")
    func clipped() throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        // Left half red, right half green: 40x20, placed at x 20; the clip lets x 30..<50 through.
        var pixels = [UInt8]()
        for _ in 0..<20 { for x in 0..<40 { pixels += x < 20 ? [255, 0, 0, 255] : [0, 255, 0, 255] } }
        let picture = RGBAImage(width: 40, height: 20, pixels: pixels)
        let id = display.layers.add(OverlayLayer(.image(picture), frame: .pixels(x: 20, y: 10, width: 40, height: 20),
                                                 clip: .pixels(x: 30, y: 0, width: 20, height: 90)))
        try display.refresh()
        var shot = try display.screenshot().image
        #expect(shot.rgb(25, 20) == .blue, "left of the clip")
        #expect(shot.rgb(33, 20) == .red, "inside the clip, the picture's left half")
        #expect(shot.rgb(45, 20) == .green, "inside the clip, the picture's right half")
        #expect(shot.rgb(55, 20) == .blue, "right of the clip")
        // Moved 20 px left: now only the picture's right half falls in the clip.
        display.layers.move(id, to: .pixels(x: 0, y: 10, width: 40, height: 20))
        try display.refresh()
        shot = try display.screenshot().image
        #expect(shot.rgb(33, 20) == .green)
        #expect(shot.rgb(15, 20) == .blue, "outside the clip although the picture is there")
        #expect(shot.rgb(45, 20) == .blue)
    }

    @Test("a steady opacity blends the overlay with the video")
    func opacity() throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        display.layers.add(OverlayLayer(.image(Self.solidImage(.red)), frame: .pixels(x: 0, y: 0, width: 40, height: 20), opacity: 0.25))
        try display.refresh()
        #expect(try display.screenshot().image.rgb(10, 10).isClose(to: RGB(r: 64, g: 0, b: 191), tolerance: 3))
    }

    @Test("fades: invisible when added, half-way at half the fade, full after; gone after the fade-out")
    func fades() throws {
        let (display, clock, _) = try Self.blueScreen()
        defer { display.stop() }
        let second = MediaTime(value: 1, timescale: 1), half = MediaTime(value: 1, timescale: 2)
        let id = display.layers.add(OverlayLayer(.image(Self.solidImage(.red)), frame: .pixels(x: 0, y: 0, width: 40, height: 20),
                                            fadeIn: second, fadeOut: second))
        let probe = { () throws -> RGB in try display.screenshot().image.rgb(10, 10) }

        try display.refresh()
        #expect(try probe() == .blue)
        clock.advance(by: half)
        try display.refresh()
        #expect(try probe().isClose(to: RGB(r: 128, g: 0, b: 128), tolerance: 3))
        clock.advance(by: half)
        try display.refresh()
        #expect(try probe() == .red)
        // Once the fade is over, nothing changes: nothing is redrawn.
        clock.advance(by: half)
        #expect(try display.refresh() == .skipped(RefreshTick(sequence: 4, hostTime: clock.now())))

        display.layers.remove(id)
        try display.refresh()
        #expect(try probe() == .red)
        clock.advance(by: half)
        try display.refresh()
        #expect(try probe().isClose(to: RGB(r: 128, g: 0, b: 128), tolerance: 3))
        clock.advance(by: half)
        try display.refresh()
        #expect(try probe() == .blue)
        #expect(display.layers.overlayIDs.isEmpty)
        clock.advance(by: half)
        guard case .skipped = try display.refresh() else {
            Issue.record("a screen with no fade under way was redrawn")
            return
        }
    }

    @Test("layers added from many tasks at once all appear on the next frame")
    func concurrentChanges() async throws {
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        let layers = display.layers
        await withTaskGroup(of: Void.self) { group in
            for column in 0..<4 {
                group.addTask {
                    layers.add(OverlayLayer(.image(Self.solidImage(.white, width: 10, height: 10)),
                                       frame: .pixels(x: column * 40, y: 0, width: 10, height: 10)))
                }
            }
        }
        try display.refresh()
        let shot = try display.screenshot().image
        for column in 0..<4 { #expect(shot.rgb(column * 40 + 5, 5) == .white) }
    }

    @Test("a missing or corrupt overlay image is skipped and the video goes on",
          arguments: ["/nonexistent/logo.png", "corrupt"])
    func badImage(path: String) throws {
        var file = path
        if path == "corrupt" {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-corrupt-\(UUID().uuidString).png")
            try Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4, 5]).write(to: url)
            file = url.path
        }
        defer { if path == "corrupt" { try? FileManager.default.removeItem(atPath: file) } }
        let (display, _, source) = try Self.blueScreen()
        defer { display.stop() }
        #expect(display.layers.addImage(contentsOf: file, frame: .pixels(x: 0, y: 0, width: 40, height: 20)) == nil)
        let next = source.enqueue(Patterns.solid(.green))
        try display.refresh()
        #expect(source.presentedIDs.last == next)
        #expect(try display.screenshot().image.rgb(10, 10) == .green)
    }

    @Test("a PNG file decoded with libavcodec shows as an overlay")
    func imageFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-overlay-\(UUID().uuidString).png")
        try Data(try Self.solidImage(.red, width: 16, height: 8).pngData()).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        #expect(display.layers.addImage(contentsOf: url.path, frame: .pixels(x: 0, y: 0, width: 32, height: 16)) != nil)
        try display.refresh()
        #expect(try display.screenshot().image.rgb(16, 8) == .red)
    }

    @Test("a JPEG file decoded with libavcodec shows as an overlay")
    func jpegFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-overlay-\(UUID().uuidString).jpg").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let ffmpeg = try ChildProcess.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi",
                                                     "-i", "color=c=red:size=32x16", "-frames:v", "1", path])
        try #require(ffmpeg.status == 0, "\(ffmpeg.stderr)")
        let (display, _, _) = try Self.blueScreen()
        defer { display.stop() }
        #expect(display.layers.addImage(contentsOf: path, frame: .pixels(x: 0, y: 0, width: 32, height: 16)) != nil)
        try display.refresh()
        #expect(try display.screenshot().image.rgb(16, 8).isClose(to: .red, tolerance: 12))
    }
}
