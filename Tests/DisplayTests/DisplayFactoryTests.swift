import Displays
import Foundation
import MediaTime
import MediaSinks
import Testing

/// The display factory the command line uses, on a machine without a DRM device.
@Suite("Display factory")
struct DisplayFactoryTests {
    static var hasDRM: Bool { FileManager.default.fileExists(atPath: "/dev/dri/card0") }

    @Test("command-line words become a configuration")
    func parsing() throws {
        let configuration = try DisplayConfiguration(display: "headless", mode: "1280x720@50", rotation: "270", gravity: "fill")
        #expect(configuration.kind == .headless)
        #expect(configuration.mode == DisplayMode(width: 1280, height: 720, refreshMillihertz: 50_000))
        #expect(configuration.rotation == .clockwise270)
        #expect(configuration.gravity == .resizeAspectFill)
        #expect(try DisplayConfiguration(mode: "1280x720").modeRateGiven == false)
    }

    @Test("bad options name the option and what it accepts")
    func badOptions() {
        #expect(throws: DisplayConfigurationError(option: "--display", value: "x11", expected: "headless, kms or auto")) {
            try DisplayConfiguration(display: "x11")
        }
        #expect(throws: DisplayConfigurationError(option: "--rotation", value: "45", expected: "0, 90, 180 or 270")) {
            try DisplayConfiguration(rotation: "45")
        }
        #expect(throws: DisplayConfigurationError(option: "--gravity", value: "zoom", expected: "fit, fill or stretch")) {
            try DisplayConfiguration(gravity: "zoom")
        }
        #expect(throws: DisplayConfigurationError.self) { try DisplayConfiguration(mode: "big") }
    }

    @Test("--screenshot-at TIME=PATH parses")
    func screenshotRequest() throws {
        let request = try ScreenshotRequest(parsing: "2.5=/tmp/a=b.png")
        #expect(request.time == MediaTime(value: 5, timescale: 2))
        #expect(request.path == "/tmp/a=b.png")
        #expect(throws: DisplayConfigurationError.self) { try ScreenshotRequest(parsing: "later=/tmp/x.png") }
        #expect(throws: DisplayConfigurationError.self) { try ScreenshotRequest(parsing: "3=") }
    }

    @Test("headless opens at the configured mode and rotation")
    func headless() throws {
        let display = try makeDisplay(DisplayConfiguration(kind: .headless, mode: DisplayMode(width: 64, height: 48), rotation: .clockwise90))
        defer { display.stop() }
        #expect(display.name == "headless 64x48@60")
        #expect(display.outputSize == (48, 64))
    }

    @Test("a display made not to start rendering has no render loop running until it is started; one stopped first never starts")
    func deferredRendering() throws {
        let display = try makeDisplay(DisplayConfiguration(kind: .headless, mode: DisplayMode(width: 64, height: 48)), startsRendering: false)
        defer { display.stop() }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(display.heartbeat == 0)
        try display.startRendering()
        try display.waitUntilReady()
        try display.startRendering()  // once only
        let deadline = Date().addingTimeInterval(30)
        while display.heartbeat < 3 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(display.heartbeat >= 3)

        let neverStarted = try makeDisplay(DisplayConfiguration(kind: .headless, mode: DisplayMode(width: 64, height: 48)), startsRendering: false)
        neverStarted.stop()  // returns: there is no render thread to wait for
        #expect(throws: DisplayError.notRunning) { try neverStarted.waitUntilReady() }
        #expect(throws: DisplayError.notRunning) { try neverStarted.screenshot() }
        #expect(neverStarted.heartbeat == 0)
    }

    @Test("auto falls back to headless when there is no usable card", .enabled(if: !hasDRM))
    func autoFallsBack() throws {
        let display = try makeDisplay(DisplayConfiguration(kind: .auto, mode: DisplayMode(width: 64, height: 48)))
        defer { display.stop() }
        #expect(display.name.hasPrefix("headless"))
    }

    @Test("kms without a device names what was tried and suggests --display headless", .enabled(if: !hasDRM))
    func kmsWithoutDevice() {
        do {
            let display = try makeDisplay(DisplayConfiguration(kind: .kms))
            display.stop()
            Issue.record("a KMS display opened without a DRM device")
        } catch {
            guard case .noDevice(let tried) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(!tried.isEmpty)
            #expect(error.description.contains("/dev/dri"))
            #expect(error.description.contains("--display headless"))
        }
    }

    @Test("a screenshot written to a file is a PNG")
    func writePNG() throws {
        let display = try HeadlessDisplay(mode: DisplayMode(width: 32, height: 18), pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.green))
        try display.refresh()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-shot-\(UUID().uuidString).png").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try display.screenshot().writePNG(to: path)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        #expect(throws: DisplayError.self) { try display.screenshot().writePNG(to: "/nonexistent/dir/shot.png") }
    }
}
