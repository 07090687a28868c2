import Displays
import MediaAsset
import MediaTime
import Playback
import Synchronization
import Testing
import MediaSinks
import Threading

/// Screenshots are exactly the last presented frame; unchanged screens are not redrawn.
@Suite("Presenting and screenshots")
struct ScreenshotTests {
    static let mode = DisplayMode(width: 64, height: 36)
    static let colours: [RGB] = [.red, .green, .blue, .white, RGB(r: 255, g: 255, b: 0), RGB(r: 0, g: 255, b: 255)]

    @Test("a screenshot taken right after presenting frame N shows frame N")
    func screenshotIsLastFrame() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        for colour in Self.colours {
            let id = source.enqueue(Patterns.solid(colour))
            #expect(try display.refresh() == .presented(frameID: id, at: source.presentations.last!.1))
            let shot = try display.screenshot()
            #expect(shot.frameID == id)
            #expect(shot.image.rgb(32, 18) == colour)
        }
        #expect(source.presentedIDs == Array(1...UInt64(Self.colours.count)))
    }

    @Test("nothing presented yet: the screenshot says so")
    func nothingYet() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        defer { display.stop() }
        #expect(throws: DisplayError.nothingPresented) { try display.screenshot() }
    }

    @Test("a screenshot encodes as PNG")
    func png() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.red))
        try display.refresh()
        let bytes = try display.screenshot().pngData()
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test("a static screen is neither redrawn nor presented again")
    func staticScreen() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        defer { display.stop() }
        let source = ScriptedSource()
        display.setSource(source)
        source.enqueue(Patterns.solid(.red))
        guard case .presented = try display.refresh() else {
            Issue.record("the first frame was not presented")
            return
        }
        for _ in 0..<5 {
            guard case .skipped = try display.refresh() else {
                Issue.record("an unchanged screen was presented again")
                return
            }
        }
        #expect(source.presentedIDs == [1])
        #expect(source.skippedCount == 5)
    }

    /// Serves a new solid frame at every refresh and screenshots from inside `didPresent`.
    final class CheckingSource: VideoFrameSource {
        struct State {
            var served: UInt64 = 0
            var checked = 0
            var mismatches: [String] = []
            var ticks: [RefreshTick] = []
        }
        let state = LockedValue(State())
        let display = LockedValue<HeadlessDisplay?>(nil)

        func content(for tick: RefreshTick) -> VideoSinkContent? {
            let id = state.withLock { state -> UInt64 in
                state.served += 1
                return state.served
            }
            return VideoSinkContent(frameID: id, frame: Patterns.solid(ScreenshotTests.colours[Int(id) % ScreenshotTests.colours.count]))
        }

        func didPresent(frameID: UInt64, at tick: RefreshTick) {
            guard let display = display.withLock({ $0 }) else { return }
            let shot = try? display.screenshot()
            let expected = ScreenshotTests.colours[Int(frameID) % ScreenshotTests.colours.count]
            state.withLock { state in
                state.checked += 1
                state.ticks.append(tick)
                if shot?.frameID != frameID || shot?.image.rgb(32, 18) != expected {
                    state.mismatches.append("frame \(frameID)")
                }
            }
        }

        func didSkipRefresh(_ tick: RefreshTick) {}
    }

    @Test("with the real timer, each presented frame is the one on screen when its presentation is reported")
    func timerPacedScreenshots() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .timer)
        let source = CheckingSource()
        source.display.withLock { $0 = display }
        display.setSource(source)
        let clock = MonotonicClock()
        clock.sleep(until: clock.now() + MediaTime(value: 3, timescale: 10))
        // A screenshot from another thread shows the frame its id names.
        let shot = try display.screenshot()
        let id = try #require(shot.frameID)
        #expect(shot.image.rgb(32, 18) == Self.colours[Int(id) % Self.colours.count])
        display.setSource(nil)
        display.stop()
        source.display.withLock { $0 = nil }
        let state = source.state.withLock { $0 }
        #expect(state.checked > 3)
        #expect(state.mismatches.isEmpty)
        // Presentation times and sequence numbers only move forward.
        for (earlier, later) in zip(state.ticks, state.ticks.dropFirst()) {
            #expect(later.sequence > earlier.sequence)
            #expect(later.hostTime > earlier.hostTime)
        }
        // The timer's ticks are the headless vblanks: every presentation lies on the refresh grid
        // (first + k intervals), however long rendering took, so pacing never drifts by the render time.
        // (A 60 Hz interval is not a whole number of nanoseconds, so host times carry sub-ns rounding.)
        let interval = Self.mode.refreshInterval.seconds
        if let first = state.ticks.first {
            for tick in state.ticks {
                let elapsed = (tick.hostTime - first.hostTime).seconds
                let offGrid = abs(elapsed - (elapsed / interval).rounded() * interval)
                #expect(offGrid < 1e-6, "\(tick) is \(offGrid * 1e3) ms off the refresh grid")
            }
        }
    }

    @Test("after stop, the display refuses work instead of hanging")
    func stopped() throws {
        let display = try HeadlessDisplay(mode: Self.mode, pacing: .manual)
        display.stop()
        display.stop()
        #expect(throws: DisplayError.notRunning) { try display.refresh() }
    }
}
