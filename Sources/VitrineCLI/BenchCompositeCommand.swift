import ArgumentParser
import Displays
import MediaAsset
import MediaTime
import Playback
import Synchronization
import MediaSinks
import Threading

/// `vitrine bench composite`: how many 1080p frames a second the headless compositor sustains with a
/// YUV420P video layer, one image overlay and one text overlay (each frame uploaded, drawn, finished).
struct BenchCompositeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "composite",
        abstract: "Measure the compositor: 1080p YUV420P video + an image and a text overlay, headless.")

    @Option(help: "Frames to composite.")
    var frames: Int = 300

    @Option(help: "Output mode WxH (the video has the same size).")
    var mode: String = "1920x1080"

    @Option(help: "The frame rate the compositor must sustain, printed beside the result.")
    var required: Double = 30

    @Flag(name: .customLong("no-overlays"), help: "Composite the video layer alone.")
    var noOverlays = false

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
        let source = EndlessSource(width: displayMode.width, height: displayMode.height)
        display.setSource(source)
        if !noOverlays { addOverlays(to: display) }
        let clock = MonotonicClock()
        do {
            for _ in 0..<10 { try display.refresh() }  // warm-up: shader compilation, texture allocation
            let start = clock.now()
            for _ in 0..<frames { try display.refresh() }
            let elapsed = (clock.now() - start).seconds
            let fps = elapsed > 0 ? Double(frames) / elapsed : 0
            print("composite \(displayMode.width)x\(displayMode.height) yuv420p\(noOverlays ? "" : " + image + text"): frames=\(frames) seconds=\(MediaTime.format(seconds: elapsed, decimals: 3)) fps=\(MediaTime.format(seconds: fps, decimals: 1)) required=\(MediaTime.format(seconds: required, decimals: 0)) ratio=\(MediaTime.format(seconds: fps / required, decimals: 2))")
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
