import ArgumentParser
import Displays
import MediaAsset
import MediaTime
import Playback
import Synchronization
import MediaSinks
import Threading

/// `vitrine bench composite`: how many 1080p frames a second the headless compositor sustains with a
/// YUV420P video layer, one image overlay and one text overlay (each frame uploaded, drawn, finished);
/// with `--zones`, a signage layout instead: a 1080p video in a main zone, two 480p videos in side
/// zones (three player layers, each with a new frame at every refresh) and a ticker moving at every refresh.
struct BenchCompositeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "composite",
        abstract: "Measure the compositor: 1080p YUV420P video + an image and a text overlay (or --zones), headless.")

    @Option(help: "Frames to composite.")
    var frames: Int = 300

    @Option(help: "Output mode WxH (the video has the same size).")
    var mode: String = "1920x1080"

    @Option(help: "The frame rate the compositor must sustain, printed beside the result.")
    var required: Double = 30

    @Flag(name: .customLong("no-overlays"), help: "Composite the video layer alone.")
    var noOverlays = false

    @Flag(name: .customLong("zones"), help: "A 1080p main zone, two 480p side zones and a scrolling ticker, in player layers.")
    var zones = false

    func run() throws {
        let displayMode: DisplayMode
        do { displayMode = try DisplayMode(parsing: mode) } catch {
            printError("vitrine bench composite: \(error)")
            throw ExitCode(2)
        }
        let display: HeadlessDisplay
        do {
            display = try HeadlessDisplay(mode: displayMode, pacing: .manual)
        } catch {
            printError("vitrine bench composite: \(error)")
            throw ExitCode(1)
        }
        defer { display.stop() }
        let what: String
        var betweenRefreshes: (Int) -> Void = { _ in }
        if zones {
            betweenRefreshes = addZones(to: display)
            what = "zones 1920x1080 + 2x 854x480 yuv420p + ticker on \(displayMode.width)x\(displayMode.height)"
        } else {
            display.setSource(EndlessSource(width: displayMode.width, height: displayMode.height))
            if !noOverlays { addOverlays(to: display) }
            what = "\(displayMode.width)x\(displayMode.height) yuv420p\(noOverlays ? "" : " + image + text")"
        }
        let clock = MonotonicClock()
        do {
            for index in 0..<10 {  // warm-up: shader compilation, texture allocation
                betweenRefreshes(index)
                try display.refresh()
            }
            let start = clock.now()
            for index in 0..<frames {
                betweenRefreshes(10 + index)
                try display.refresh()
            }
            let elapsed = (clock.now() - start).seconds
            let fps = elapsed > 0 ? Double(frames) / elapsed : 0
            print("composite \(what): frames=\(frames) seconds=\(MediaTime.format(seconds: elapsed, decimals: 3)) fps=\(MediaTime.format(seconds: fps, decimals: 1)) required=\(MediaTime.format(seconds: required, decimals: 0)) ratio=\(MediaTime.format(seconds: fps / required, decimals: 2))")
        } catch {
            printError("vitrine bench composite: \(error)")
            throw ExitCode(1)
        }
    }

    private func addOverlays(to display: HeadlessDisplay) {
        display.layers.add(OverlayLayer(.image(Self.logo()), frame: .relative(x: 0.78, y: 0.04, width: 0.18, height: 0.12)))
        display.layers.add(OverlayLayer(
            .text("Vitrine — composite benchmark. Opening hours: 9:00–18:00", TextStyle(pixelSize: 40, background: .translucentBlack)),
            frame: .relative(x: 0.05, y: 0.82, width: 0.9, height: 0.12)))
    }

    /// A signage layout on a 1920x1080 screen: the main zone (1440x810, 16:9) shows a 1920x1080 video, the
    /// two side zones (480x405 each) an 854x480 video each, and a ticker runs through a bar at the bottom.
    /// Returns what moves the ticker before each refresh (by 4 pixels a refresh, as a show's ticker does).
    private func addZones(to display: HeadlessDisplay) -> (Int) -> Void {
        let zones: [(name: String, frame: LayerFrame, width: Int, height: Int)] = [
            ("main", .relative(x: 0, y: 0, width: 0.75, height: 0.75), 1920, 1080),
            ("side-top", .relative(x: 0.75, y: 0, width: 0.25, height: 0.375), 854, 480),
            ("side-bottom", .relative(x: 0.75, y: 0.375, width: 0.25, height: 0.375), 854, 480),
        ]
        for zone in zones {
            let layer = PlayerLayer(name: zone.name)
            layer.frame = zone.frame
            layer.setSource(EndlessSource(width: zone.width, height: zone.height))
            display.layers.add(layer)
        }
        let canvas = display.outputSize
        let bar = (x: 0, y: canvas.height * 80 / 100, width: canvas.width, height: canvas.height * 12 / 100)
        // The bar: a full-size picture, as a show's ticker has (an image keeps its aspect in its box).
        let barPixels = [UInt8]((0..<(bar.width * bar.height)).flatMap { _ in [UInt8(0), 0, 64, 255] })
        display.layers.add(OverlayLayer(
            .image(RGBAImage(width: bar.width, height: bar.height, pixels: barPixels)),
            frame: .pixels(x: bar.x, y: bar.y, width: bar.width, height: bar.height)))
        let words = "Vitrine — composite benchmark: a ticker running through its bar while three zones play. Opening hours 9:00–18:00."
        let pixelSize = 56
        let lineWidth = Int(Double(pixelSize) * 0.8 * Double(words.count)) + pixelSize  // one line, never wrapped
        let line = display.layers.add(OverlayLayer(
            .text(words, TextStyle(pixelSize: pixelSize, padding: 0)),
            frame: .pixels(x: bar.width, y: bar.y, width: lineWidth, height: bar.height),
            clip: .pixels(x: bar.x, y: bar.y, width: bar.width, height: bar.height)))
        return { refresh in
            let offset = (refresh * 4) % (bar.width + lineWidth)
            display.layers.move(line, to: .pixels(x: bar.x + bar.width - offset, y: bar.y, width: lineWidth, height: bar.height))
        }
    }

    /// A 256x128 logo-like picture with a diagonal gradient and soft alpha edge.
    static func logo() -> RGBAImage {
        let width = 256, height = 128
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                pixels[i] = UInt8(x)
                pixels[i + 1] = UInt8(y * 2)
                pixels[i + 2] = UInt8(255 - x)
                pixels[i + 3] = UInt8(min(min(x, width - 1 - x), min(y, height - 1 - y)) >= 8 ? 255 : 128)
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }
}

/// Hands the display a new YUV420P frame at every refresh (two alternating pictures, so every refresh
/// uploads and draws like real video).
private final class EndlessSource: VideoFrameSource {
    private let frames: [VideoFrame]
    private let counter = LockedValue<UInt64>(0)

    init(width: Int, height: Int) {
        frames = (0..<2).map { phase in
            let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
            var luma = [UInt8](repeating: 0, count: width * height)
            for y in 0..<height {
                for x in 0..<width { luma[y * width + x] = UInt8(16 + (x + y + phase * 64) % 220) }
            }
            let cb = [UInt8]((0..<(chromaWidth * chromaHeight)).map { UInt8(64 + ($0 % chromaWidth) % 128) })
            let cr = [UInt8]((0..<(chromaWidth * chromaHeight)).map { UInt8(64 + (($0 / chromaWidth) + phase * 32) % 128) })
            return VideoFrame(planes: [luma, cb, cr], bytesPerRow: [width, chromaWidth, chromaWidth], width: width,
                              height: height, pixelFormat: .yuv420p)
        }
    }

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        let id = counter.withLock { value -> UInt64 in
            value += 1
            return value
        }
        return VideoSinkContent(frameID: id, frame: frames[Int(id % 2)])
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {}
    func didSkipRefresh(_ tick: RefreshTick) {}
}
