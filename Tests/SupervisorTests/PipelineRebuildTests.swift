import Displays
import Foundation
import MediaAsset
import MediaSinks
import MediaTime
import Playback
import Scheduling
import ShowRunner
import Supervisor
import Testing
import Threading

/// A real headless display whose failure a test can report, as KMS does when flips keep timing
/// out or the EGL context is lost: a double behind the sink protocol, everything else is real.
final class FailableDisplay: Display {
    let inner: HeadlessDisplay
    private let handler = LockedValue<(@Sendable (MediaError) -> Void)?>(nil)

    init(_ inner: HeadlessDisplay) { self.inner = inner }

    /// Reports that the display can no longer present.
    func fail() { handler.withLock { $0 }?(MediaError(source: "display", operation: "present", reason: .other, detail: "(test)")) }

    var name: String { inner.name }
    var mode: DisplayMode { inner.mode }
    var rotation: Rotation { inner.rotation }
    var layers: LayerStack { inner.layers }
    var heartbeat: UInt64 { inner.heartbeat }
    var refreshInterval: MediaTime { inner.refreshInterval }
    var outputSize: (width: Int, height: Int) { inner.outputSize }
    func waitUntilReady() throws(DisplayError) { try inner.waitUntilReady() }
    func screenshot() throws(DisplayError) -> Screenshot { try inner.screenshot() }
    func setEventHandler(_ handler: (@Sendable (DisplayEvent) -> Void)?) { inner.setEventHandler(handler) }
    func stop() { inner.stop() }
    func setSource(_ source: (any VideoFrameSource)?) { inner.setSource(source) }
    func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) { self.handler.withLock { $0 = handler } }
}

@Suite("Supervisor: the engine rebuilt inside the process")
struct PipelineRebuildTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var clip: String { root.appendingPathComponent("Fixtures/generated/queue1.mp4").path }

    /// Waits (real time, generous deadline) until `condition` holds.
    static func wait(seconds: Double = 60, _ condition: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > end { return false }
            usleep(10_000)
        }
        return true
    }

    @Test("an output failure rebuilds the player and frames flow again; the fourth within five minutes ends the process",
          .enabled(if: FileManager.default.fileExists(atPath: PipelineRebuildTests.clip), "needs the generated fixtures"))
    func rebuildThenExit() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-rebuild-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/show.toml"
        try "version = 1\nfallback = \"loop\"\n[[playlists.loop.items]]\nvideo = \"\(Self.clip)\"\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        guard case .loaded(let schedule) = await ScheduleLoader.load(path: path) else {
            Issue.record("the schedule did not load")
            return
        }
        let display = FailableDisplay(try HeadlessDisplay(mode: DisplayMode(width: 160, height: 120, refreshMillihertz: 25_000)))
        defer { display.stop() }
        let records = LockedValue<[PresentationRecord]>([])
        let log = ShowLog(writer: nil, observer: { record in records.withLock { $0.append(record) } })
        let show = ShowRunner(schedule: schedule, display: display, audioSink: nil, log: log, configuration: .init(watchesFile: false))
        let exits = LockedValue<[String]>([])
        let store = StateStore(directory: folder + "/state")
        let supervisor = Supervisor(show: show, policy: schedule.restartPolicy, store: store) { reason in
            exits.withLock { $0.append(reason) }
        }
        let reports = show.supervisionReports()
        let supervising = Task { await supervisor.run(reports) }
        show.start()
        defer { show.stop() }

        func frameCount() -> Int { records.withLock { $0.filter { if case .frame = $0 { true } else { false } }.count } }
        func rebuilds() -> Int {
            records.withLock { $0.filter { if case .event(let e) = $0 { e.kind == .pipelineRebuilt } else { false } }.count }
        }
        #expect(Self.wait { frameCount() > 5 }, "the show never presented")
        for round in 1...3 {
            display.fail()
            #expect(Self.wait { rebuilds() == round }, "no pipeline-rebuilt after failure \(round)")
            let before = frameCount()
            // The new player presents: frames flow again after the rebuild.
            #expect(Self.wait { frameCount() > before + 5 }, "no frames after rebuild \(round)")
        }
        #expect(exits.withLock { $0 }.isEmpty)
        display.fail()
        #expect(Self.wait { !exits.withLock { $0 }.isEmpty }, "the fourth failure did not end the process")
        #expect(rebuilds() == 3)
        #expect(try store.load().pipelineRebuilds == 3)
        show.stop()
        await supervising.value
    }
}
