import ArgumentParser
import Displays
import Logging
import MediaAsset
import MediaTime
import Playback
import Synchronization
import MediaSinks
import ServiceLifecycle
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// `vitrine test-pattern`: shows a known picture on a display — quadrants red, green, blue and white with a
/// text caption — for installers checking a screen and for the KMS proof in a VM.
struct TestPatternCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "test-pattern",
        abstract: "Show a test pattern (red, green, blue, white quadrants and a caption) on a display.")

    @Option(help: "headless, kms or auto.")
    var display: String = "auto"

    @Option(help: "Mode WxH or WxH@Hz (default: the screen's preferred mode; headless 1920x1080@60).")
    var mode: String?

    @Option(help: "Output rotation: 0, 90, 180 or 270.")
    var rotation: String = "0"

    @Option(help: "fit, fill or stretch.")
    var gravity: String = "stretch"

    @Option(help: "Seconds to show the pattern.")
    var seconds: Double = 5

    @Option(help: "Write a screenshot of the presented pattern to this PNG file.")
    var screenshot: String?

    @Flag(help: "Move a bar across the middle at every refresh (exercises page flips) and report the presentation intervals.")
    var animate = false

    @Option(help: ArgumentHelp(
        "With --animate: stop animating once this many frames have been presented, report them at once and keep the last one up (until --seconds or SIGTERM); fails if --seconds passes first.",
        valueName: "N"))
    var frames: Int?

    func validate() throws {
        guard seconds > 0 else { throw ValidationError("--seconds must be a positive number of seconds") }
        if let frames {
            guard animate else { throw ValidationError("--frames counts animated frames: add --animate") }
            guard frames > 0 else { throw ValidationError("--frames must be a positive number") }
        }
    }

    func run() async throws {
        var logger = Logger(label: "vitrine")
        logger.logLevel = .info
        let configuration: DisplayConfiguration
        do {
            configuration = try DisplayConfiguration(display: display, mode: mode, rotation: rotation, gravity: gravity)
        } catch {
            printError("vitrine test-pattern: \(error)")
            throw ExitCode(2)
        }
        let screen: any Display
        do { screen = try makeDisplay(configuration, logger: logger) } catch {
            printError("vitrine test-pattern: \(error)")
            throw ExitCode(1)
        }
        let source = PatternSource(animated: animate, limit: frames)
        screen.setSource(source)
        screen.layers.add(OverlayLayer(.text("Vitrine test pattern", TextStyle(pixelSize: 32, background: .translucentBlack, alignment: .center)),
                                  frame: .relative(x: 0.2, y: 0.42, width: 0.6, height: 0.16)))
        do { try await screen.ready() } catch {
            printError("vitrine test-pattern: \(screen.name): \(error)")
            throw ExitCode(1)
        }
        // The pattern stays up for --seconds or until SIGTERM/SIGINT; then the display stops (on KMS:
        // the screen found at start is put back) and the command exits 0.
        let watch = PatternWatch(command: self, source: source, screen: screen)
        do { try await ServiceRunner.run([DisplayService(display: screen), watch], logger: logger) } catch {
            printError("vitrine test-pattern: stopping: \(error)")
            throw ExitCode(1)
        }
        let (announced, reported) = watch.outcome
        if animate && !reported {
            report(source, on: screen)
        }
        if !announced {
            printError("vitrine test-pattern: the pattern was never presented")
            throw ExitCode(1)
        }
        if let frames, source.statistics.0 < frames {
            printError("vitrine test-pattern: only \(source.statistics.0) of \(frames) frames were presented in \(MediaTime.format(seconds: seconds, decimals: 1)) s")
            throw ExitCode(1)
        }
    }

    /// Watches the pattern until --seconds pass: announces it once presented (and takes the
    /// screenshot), reports the frame count once --frames were presented. Returns whether it was
    /// announced and reported.
    fileprivate func watch(_ source: PatternSource, on screen: any Display) async -> (announced: Bool, reported: Bool) {
        let clock = MonotonicClock()
        let end = clock.now() + MediaTime(seconds: seconds, preferredTimescale: 1000)
        var announced = false
        var reported = false
        while clock.now() < end, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(50))
            if !announced, let tick = source.presented {
                // Flushed at once: scripts wait for this line while the pattern is still up.
                print("vitrine: pattern presented on \(screen.name) at \(MediaTime.format(seconds: tick.hostTime.seconds, decimals: 6))")
                fflush(nil)
                announced = true
                if let screenshot {
                    do { try screen.screenshot().writePNG(to: screenshot) } catch {
                        printError("vitrine test-pattern: screenshot: \(error)")
                    }
                }
            }
            if let frames, !reported, source.statistics.0 >= frames {
                // Counted over however long the flips took (a slow screen is slow, not wrong); the
                // last frame stays up for whoever checks the screen.
                report(source, on: screen)
                reported = true
            }
        }
        return (announced, reported)
    }

    /// Prints how many frames were presented and their mean interval (flushed: scripts wait for it).
    private func report(_ source: PatternSource, on screen: any Display) {
        let (count, first, last) = source.statistics
        let interval = count > 1 ? (last - first).seconds / Double(count - 1) * 1000 : 0
        print("vitrine: presented \(count) frames, mean interval \(MediaTime.format(seconds: interval, decimals: 2)) ms, refresh \(MediaTime.format(seconds: screen.refreshInterval.seconds * 1000, decimals: 2)) ms")
        fflush(nil)
    }
}

/// The pattern's watch as the group's driving service: it ends after --seconds (shutting the
/// group down) or when the group shuts down (SIGTERM, SIGINT).
private final class PatternWatch: Service, CustomStringConvertible {
    private let command: TestPatternCommand
    private let source: PatternSource
    private let screen: any Display
    private let result = LockedValue<(announced: Bool, reported: Bool)>((false, false))

    init(command: TestPatternCommand, source: PatternSource, screen: any Display) {
        self.command = command
        self.source = source
        self.screen = screen
    }

    var description: String { "test pattern" }
    var outcome: (announced: Bool, reported: Bool) { result.withLock { $0 } }

    func run() async throws {
        let watched = await cancelWhenGracefulShutdown { [command, source, screen] in await command.watch(source, on: screen) }
        result.withLock { $0 = watched }
    }
}

/// Offers the quadrant pattern (once, or a new frame each refresh when animated) and remembers when
/// frames were presented.
private final class PatternSource: VideoFrameSource {
    private struct State {
        var offered: UInt64 = 0
        var presented: RefreshTick?
        var count = 0
        var first: MediaTime = .zero
        var last: MediaTime = .zero
    }
    private let state = LockedValue(State())
    private let animated: Bool
    private let limit: Int?

    /// `limit`: stop offering new frames once this many have been presented (nil: one per refresh for as long as asked).
    init(animated: Bool, limit: Int? = nil) {
        self.animated = animated
        self.limit = limit
    }

    var presented: RefreshTick? { state.withLock { $0.presented } }
    /// Frames presented, the first and the last presentation time.
    var statistics: (Int, MediaTime, MediaTime) { state.withLock { ($0.count, $0.first, $0.last) } }

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        let number = state.withLock { state -> UInt64? in
            guard animated || state.offered == 0 else { return nil }
            if let limit, state.count >= limit { return nil }
            state.offered += 1
            return state.offered
        }
        guard let number else { return nil }
        return VideoSinkContent(frameID: number, frame: PatternSource.quadrants(width: 320, height: 180, bar: animated ? Int(number % 320) : nil))
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {
        state.withLock { state in
            if state.count == 0 { state.first = tick.hostTime }
            state.count += 1
            state.last = tick.hostTime
            state.presented = tick
        }
    }

    func didSkipRefresh(_ tick: RefreshTick) {}

    /// Quadrants red, green, blue, white; with `bar`, a black 8-pixel bar at that column across the middle rows.
    static func quadrants(width: Int, height: Int, bar: Int? = nil) -> VideoFrame {
        var pixels = [UInt8](repeating: 255, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let i = (y * width + x) * 4
                let left = x < width / 2, top = y < height / 2
                let (r, g, b): (UInt8, UInt8, UInt8) = top ? (left ? (255, 0, 0) : (0, 255, 0)) : (left ? (0, 0, 255) : (255, 255, 255))
                let inBar = bar.map { x >= $0 && x < $0 + 8 && abs(y - height / 2) < 12 } ?? false
                pixels[i] = inBar ? 0 : r
                pixels[i + 1] = inBar ? 0 : g
                pixels[i + 2] = inBar ? 0 : b
            }
        }
        return VideoFrame(planes: [pixels], bytesPerRow: [width * 4], width: width, height: height, pixelFormat: .rgba)
    }
}
