import Displays
import Foundation
import MediaAsset
import MediaSinks
import MediaTime
import Playback
import Testing

/// Player layers in a display's layer tree: where each picture lands (gravity, rotation, its rectangle),
/// the z-order shared with overlays, opacity, hiding, and moving layers between displays. Checked on
/// real EGL pixels with scripted sources.
@Suite("Player layers")
struct PlayerLayerTests {
    static let mode = DisplayMode(width: 160, height: 90)
    static let frameWidth = 64, frameHeight = 48

    /// The physical pixel showing upright-canvas pixel (x, y) under `rotation` on `mode`.
    static func physical(_ x: Int, _ y: Int, rotation: Rotation, mode: DisplayMode = mode) -> (Int, Int) {
        let w = mode.width, h = mode.height
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (w - 1 - y, x)
        case .upsideDown: return (w - 1 - x, h - 1 - y)
        case .clockwise270: return (y, h - 1 - x)
        }
    }

    /// Where a `frameWidth`×`frameHeight` picture lands in `bounds` with `gravity` (AVPlayerLayer's rule,
    /// written out again here rather than taken from the compositor).
    static func expectedRect(_ bounds: ScreenRect, gravity: VideoGravity) -> ScreenRect {
        guard gravity != .resize else { return bounds }
        let scaleX = bounds.width / Double(frameWidth), scaleY = bounds.height / Double(frameHeight)
        let scale = gravity == .resizeAspect ? min(scaleX, scaleY) : max(scaleX, scaleY)
        let width = Double(frameWidth) * scale, height = Double(frameHeight) * scale
        return ScreenRect(x: bounds.x + (bounds.width - width) / 2, y: bounds.y + (bounds.height - height) / 2, width: width, height: height)
    }

    static func close(_ a: ScreenRect, _ b: ScreenRect) -> Bool {
        abs(a.x - b.x) < 0.01 && abs(a.y - b.y) < 0.01 && abs(a.width - b.width) < 0.01 && abs(a.height - b.height) < 0.01
    }

    @Test("each layer lays its picture into its own rectangle with its gravity, and videoRect says where, at every output rotation",
          arguments: Rotation.allCases)
    func gravityAndVideoRect(rotation: Rotation) throws {
        let display = try HeadlessDisplay(mode: Self.mode, rotation: rotation, pacing: .manual)
        defer { display.stop() }
        let canvas = display.outputSize
        // Left half: fit; top right: fill (cropped to it); bottom right: stretch, a solid green picture.
        let zones: [(String, LayerFrame, VideoGravity)] = [
            ("fit", .relative(x: 0, y: 0, width: 0.5, height: 1), .resizeAspect),
            ("fill", .relative(x: 0.5, y: 0, width: 0.5, height: 0.5), .resizeAspectFill),
            ("stretch", .relative(x: 0.5, y: 0.5, width: 0.5, height: 0.5), .resize),
        ]
        var layers: [PlayerLayer] = []
        var sources: [ScriptedSource] = []
        for (name, frame, gravity) in zones {
            let layer = PlayerLayer(name: name)
            layer.frame = frame
            layer.videoGravity = gravity
            #expect(layer.outputSize == (0, 0) && layer.videoRect == .zero)
            display.layers.add(layer)
            #expect(layer.outputSize == canvas)
            let source = ScriptedSource()
            layer.setSource(source)
            layers.append(layer)
            sources.append(source)
        }
        sources[0].enqueue(Patterns.quadrants(width: Self.frameWidth, height: Self.frameHeight))
        sources[1].enqueue(Patterns.quadrants(width: Self.frameWidth, height: Self.frameHeight))
        sources[2].enqueue(Patterns.solid(.green, width: Self.frameWidth, height: Self.frameHeight))
        try display.refresh()
        let shot = try display.screenshot().image
        for source in sources { #expect(source.presentedIDs == [1]) }

        for (index, layer) in layers.enumerated() {
            let bounds = zones[index].1.resolve(canvasWidth: canvas.width, canvasHeight: canvas.height)
            let expected = Self.expectedRect(bounds, gravity: zones[index].2)
            #expect(Self.close(layer.videoRect, expected), "\(layer.name): videoRect \(layer.videoRect), expected \(expected)")
            guard index < 2 else { continue }
            // The quadrants of the picture, cropped to the layer: each shows its colour at its centre.
            let colours: [RGB] = [.red, .green, .blue, .white]
            for quadrant in 0..<4 {
                let part = ScreenRect(x: expected.x + Double(quadrant % 2) * expected.width / 2,
                                      y: expected.y + Double(quadrant / 2) * expected.height / 2,
                                      width: expected.width / 2, height: expected.height / 2)
                guard let visible = part.intersection(bounds), visible.width >= 4, visible.height >= 4 else { continue }
                let (px, py) = Self.physical(Int(visible.x + visible.width / 2), Int(visible.y + visible.height / 2), rotation: rotation)
                #expect(shot.rgb(px, py).isClose(to: colours[quadrant]), "\(layer.name) quadrant \(quadrant) at (\(px), \(py)): \(shot.rgb(px, py))")
            }
        }
        // The fit layer's bars (above and below its picture) are black.
        let fitRect = layers[0].videoRect
        let (barX, barY) = Self.physical(Int(fitRect.x + fitRect.width / 2), Int(fitRect.y / 2), rotation: rotation)
        #expect(shot.rgb(barX, barY) == .black)
        // The fill layer's overflow is cropped: just below it, the stretch layer's green shows, not the
        // fill picture's blue bottom-left quadrant.
        let fill = zones[1].1.resolve(canvasWidth: canvas.width, canvasHeight: canvas.height)
        let (belowX, belowY) = Self.physical(Int(fill.x) + 3, Int(fill.maxY) + 2, rotation: rotation)
        #expect(shot.rgb(belowX, belowY).isClose(to: .green), "below the fill zone: \(shot.rgb(belowX, belowY))")
    }

    @Test("a track's own rotation is applied inside its layer before the gravity, and videoRect has the turned size")
    func trackRotationInLayer() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        defer { display.stop() }
        let layer = PlayerLayer(name: "turned")
        layer.frame = .pixels(x: 80, y: 0, width: 80, height: 90)
        let source = ScriptedSource()
        layer.setSource(source)
        display.layers.add(layer)
        source.enqueue(Patterns.quadrants(width: Self.frameWidth, height: Self.frameHeight, rotation: 90))
        try display.refresh()
        // 64x48 turned a quarter is 48x64: fit into 80x90 gives 67.5x90.
        #expect(Self.close(layer.videoRect, ScreenRect(x: 80 + (80 - 67.5) / 2, y: 0, width: 67.5, height: 90)), "\(layer.videoRect)")
        let shot = try display.screenshot().image
        // Turned clockwise: the picture's bottom-left (blue) is now top-left.
        #expect(shot.rgb(100, 20).isClose(to: .blue))
        #expect(shot.rgb(140, 70).isClose(to: .green))
    }

    @Test("video layers and overlays share one z-order: higher draws above, overlays above video at equal values")
    func sharedZOrder() throws {
        let display = try HeadlessDisplay(mode: Self.mode, gravity: .resize, pacing: .manual)
        defer { display.stop() }
        let root = ScriptedSource()
        display.setSource(root)
        root.enqueue(Patterns.solid(.white))
        let low = PlayerLayer(name: "low"), high = PlayerLayer(name: "high")
        low.frame = .pixels(x: 0, y: 0, width: 100, height: 90)
        high.frame = .pixels(x: 60, y: 0, width: 100, height: 90)
        low.videoGravity = .resize
        high.videoGravity = .resize
        let lowSource = ScriptedSource(), highSource = ScriptedSource()
        low.setSource(lowSource)
        high.setSource(highSource)
        // Added high first: the order of adding decides only at equal z.
        high.zPosition = 2
        display.layers.add(high)
        display.layers.add(low)
        low.zPosition = 1
        lowSource.enqueue(Patterns.solid(.red))
        highSource.enqueue(Patterns.solid(.blue))
        // An overlay at z 1 lies above the low layer (equal z) and below the high one.
        let image = RGBAImage(width: 1, height: 1, pixels: [0, 255, 0, 255])
        display.layers.add(OverlayLayer(.image(image), frame: .pixels(x: 40, y: 0, width: 40, height: 40), zIndex: 1))
        try display.refresh()
        var shot = try display.screenshot().image
        #expect(shot.rgb(10, 50).isClose(to: .red))     // low alone
        #expect(shot.rgb(80, 60).isClose(to: .blue))    // low and high overlap: high on top
        #expect(shot.rgb(50, 20).isClose(to: .green))   // the overlay above low
        #expect(shot.rgb(70, 20).isClose(to: .blue))    // the overlay below high
        #expect(shot.rgb(150, 80).isClose(to: .blue))   // the root (white) is below everything

        // Swapping z redraws without a new frame; a hidden layer goes, the root shows through.
        low.zPosition = 3
        try display.refresh()
        shot = try display.screenshot().image
        #expect(shot.rgb(80, 60).isClose(to: .red))
        #expect(shot.rgb(50, 20).isClose(to: .red))     // the overlay (z 1) is now below low (z 3)
        high.isHidden = true
        try display.refresh()
        shot = try display.screenshot().image
        #expect(shot.rgb(150, 80).isClose(to: .white))
    }

    @Test("opacity blends a layer over what lies below, and a hidden layer's source still sees its frames presented")
    func opacityAndHidden() throws {
        let display = try HeadlessDisplay(mode: Self.mode, gravity: .resize, pacing: .manual)
        defer { display.stop() }
        let root = ScriptedSource()
        display.setSource(root)
        root.enqueue(Patterns.solid(.blue))
        let layer = PlayerLayer(name: "half")
        layer.videoGravity = .resize
        layer.opacity = 0.5
        let source = ScriptedSource()
        layer.setSource(source)
        display.layers.add(layer)
        source.enqueue(Patterns.solid(.red))
        try display.refresh()
        let mixed = try display.screenshot().image.rgb(80, 45)
        #expect(mixed.isClose(to: RGB(r: 128, g: 0, b: 128), tolerance: 4), "\(mixed)")
        layer.opacity = 7  // clamped
        #expect(layer.opacity == 1)

        layer.isHidden = true
        let id = source.enqueue(Patterns.solid(.green))
        try display.refresh()
        #expect(try display.screenshot().image.rgb(80, 45).isClose(to: .blue))
        #expect(source.presentedIDs.last == id)
    }

    @Test("a layer is in one display at a time: adding it to another moves it; a removed layer is no longer pulled")
    func moveAndRemove() throws {
        let first = try HeadlessDisplay(mode: Self.mode, gravity: .resize, pacing: .manual)
        defer { first.stop() }
        let second = try HeadlessDisplay(mode: DisplayMode(width: 64, height: 64, refreshMillihertz: 30_000), pacing: .manual)
        defer { second.stop() }
        let layer = PlayerLayer(name: "roaming")
        layer.videoGravity = .resize
        let source = ScriptedSource()
        layer.setSource(source)
        first.layers.add(layer)
        #expect(first.layers.playerLayers.map(\.name) == ["roaming"])
        #expect(layer.refreshInterval == first.refreshInterval)
        source.enqueue(Patterns.solid(.red))
        try first.refresh()
        #expect(layer.videoRect == ScreenRect(x: 0, y: 0, width: 160, height: 90))

        second.layers.add(layer)
        #expect(first.layers.playerLayers.isEmpty)
        #expect(layer.refreshInterval == second.refreshInterval && layer.outputSize == (64, 64))
        let id = source.enqueue(Patterns.solid(.green))
        try first.refresh()
        #expect(source.presentedIDs == [1], "the first display no longer pulls the layer")
        try second.refresh()
        #expect(source.presentedIDs == [1, id])
        #expect(try second.screenshot().image.rgb(32, 32).isClose(to: .green))

        second.layers.remove(layer)
        #expect(layer.videoRect == .zero && layer.outputSize == (0, 0))
        source.enqueue(Patterns.solid(.blue))
        try second.refresh()
        #expect(source.presentedIDs == [1, id])
        // The layer's textures went with it: the screen is black again.
        try second.refresh()
        #expect(try second.screenshot().image.rgb(32, 32) == .black)
    }
}
