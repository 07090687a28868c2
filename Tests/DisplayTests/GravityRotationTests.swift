import Displays
import MediaTime
import Playback
import MediaSinks
import Testing

/// Where the video lands for each gravity and output rotation, checked on real EGL pixels.
@Suite("Video gravity and rotation")
struct GravityRotationTests {
    static let frameWidth = 64, frameHeight = 48  // 4:3 into a 16:9 screen
    static let mode = DisplayMode(width: 160, height: 90)

    /// The physical pixel showing logical (upright canvas) pixel (x, y) under `rotation`.
    static func physical(_ x: Int, _ y: Int, rotation: Rotation) -> (Int, Int) {
        let w = mode.width, h = mode.height
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (w - 1 - y, x)
        case .upsideDown: return (w - 1 - x, h - 1 - y)
        case .clockwise270: return (y, h - 1 - x)
        }
    }

    @Test("each gravity places the quadrants and bars where AVPlayerLayer would, at every output rotation",
          arguments: VideoGravity.allCases, Rotation.allCases)
    func placement(gravity: VideoGravity, rotation: Rotation) throws {
        let display = try HeadlessDisplay(mode: Self.mode, rotation: rotation, gravity: gravity, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.quadrants(width: Self.frameWidth, height: Self.frameHeight))
        try display.refresh()
        let shot = try display.screenshot().image
        #expect(shot.width == Self.mode.width && shot.height == Self.mode.height)

        let canvas = display.outputSize
        let cw = Double(canvas.width), ch = Double(canvas.height)
        var w = cw, h = ch
        if gravity != .resize {
            let scale = gravity == .resizeAspect
                ? min(cw / Double(Self.frameWidth), ch / Double(Self.frameHeight))
                : max(cw / Double(Self.frameWidth), ch / Double(Self.frameHeight))
            w = Double(Self.frameWidth) * scale
            h = Double(Self.frameHeight) * scale
        }
        let left = max((cw - w) / 2, 0), top = max((ch - h) / 2, 0)
        let visibleWidth = min(w, cw), visibleHeight = min(h, ch)
        let samples: [(Double, Double, RGB)] = [
            (left + visibleWidth * 0.25, top + visibleHeight * 0.25, .red),
            (left + visibleWidth * 0.75, top + visibleHeight * 0.25, .green),
            (left + visibleWidth * 0.25, top + visibleHeight * 0.75, .blue),
            (left + visibleWidth * 0.75, top + visibleHeight * 0.75, .white),
        ]
        for (x, y, expected) in samples {
            let (px, py) = Self.physical(Int(x), Int(y), rotation: rotation)
            #expect(shot.rgb(px, py).isClose(to: expected), "logical (\(Int(x)), \(Int(y))) → physical (\(px), \(py))")
        }
        // Bars: only with resizeAspect, in the middle of each bar.
        if gravity == .resizeAspect {
            let bars: [(Double, Double)] = w < cw
                ? [(left / 2, ch / 2), (cw - left / 2, ch / 2)]
                : [(cw / 2, top / 2), (cw / 2, ch - top / 2)]
            for (x, y) in bars {
                let (px, py) = Self.physical(min(Int(x), canvas.width - 1), min(Int(y), canvas.height - 1), rotation: rotation)
                #expect(shot.rgb(px, py) == .black, "bar at logical (\(Int(x)), \(Int(y)))")
            }
        }
    }

    @Test("a track's own rotation turns the picture before the gravity applies", arguments: [90, 180, 270])
    func trackRotation(degrees: Int) throws {
        let display = try HeadlessDisplay(mode: Self.mode, gravity: .resize, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.quadrants(width: Self.frameWidth, height: Self.frameHeight, rotation: degrees))
        try display.refresh()
        let shot = try display.screenshot().image
        // Quadrants clockwise from the top-left: red, green, white, blue; a turn shifts them.
        let clockwise: [RGB] = [.red, .green, .white, .blue]
        let corners = [(20, 12), (140, 12), (140, 78), (20, 78)]
        let turns = degrees / 90
        for (index, corner) in corners.enumerated() {
            let expected = clockwise[(index - turns + 4) % 4]
            #expect(shot.rgb(corner.0, corner.1).isClose(to: expected), "corner \(index) after \(degrees)°")
        }
    }
}
