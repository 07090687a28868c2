import ChildProcesses
import Displays
import Foundation
import MediaAsset
import MediaTime
import Playback
import SinkDoubles
import Scheduling
@testable import ShowRunner
import Synchronization
import MediaSinks
import Threading

/// Fixtures, schedule files and a show on the real headless display stepped by a manual clock, so that
/// every refresh and every presented frame is deterministic.
enum Fixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func path(_ name: String) -> String { root.appendingPathComponent("Fixtures/generated/\(name)").path }
    static var available: Bool {
        FileManager.default.fileExists(atPath: path("h264_aac.mp4")) && FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe")
    }

    static func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-show-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }

    /// Replaces `path` atomically with `text` (write beside, rename over): how a new schedule arrives.
    static func replace(_ path: String, with text: String) throws {
        let temporary = path + ".new"
        try text.write(toFile: temporary, atomically: false, encoding: .utf8)
        guard rename(temporary, path) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// ffprobe's presentation times of every video frame, in the item's timeline (start time 0).
    static func framePTS(_ name: String) throws -> [MediaTime] {
        let text = try ChildProcess.run("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base:frame=pts",
                                                    "-of", "default=noprint_wrappers=1", path(name)]).stdout
        var timescale: Int32 = 1
        var values: [Int64] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("time_base=1/") { timescale = Int32(line.dropFirst("time_base=1/".count))! }
            if line.hasPrefix("pts="), let value = Int64(line.dropFirst(4)) { values.append(value) }
        }
        let first = values.min() ?? 0
        return values.sorted().map { MediaTime(value: $0 - first, timescale: timescale) }
    }
}

/// Every record the show logged, in order.
final class RecordCollector: Sendable {
    private let records = LockedValue<[PresentationRecord]>([])
    func append(_ record: PresentationRecord) { records.withLock { $0.append(record) } }
    var all: [PresentationRecord] { records.withLock { $0 } }
    var frames: [PresentedFrame] { all.compactMap { if case .frame(let f) = $0 { f } else { nil } } }
    func events(_ kind: PresentationEvent.Kind) -> [PresentationEvent] {
        all.compactMap { if case .event(let e) = $0, e.kind == kind { e } else { nil } }
    }
}

/// A show on a 320x240@50 headless display, paced by hand on a manual clock.
final class ShowHarness {
    let clock: ManualClock
    let display: HeadlessDisplay
    let collector = RecordCollector()
    let runner: ShowRunner

    init(schedulePath: String, startAt: UTCInstant, watchesFile: Bool = false,
         mode: DisplayMode = DisplayMode(width: 320, height: 240, refreshMillihertz: 50_000),
         audioSink: (any AudioSink)? = nil, clock: ManualClock = ManualClock(start: MediaTime(value: 1, timescale: 1)),
         shift: WallClockShift? = nil, records: (@Sendable (PresentationRecord) -> Void)? = nil) async throws {
        self.clock = clock
        guard case .loaded(let schedule) = await ScheduleLoader.load(path: schedulePath) else {
            throw ScheduleError(diagnostics: [])
        }
        display = try HeadlessDisplay(mode: mode, pacing: .manual, clock: clock)
        let collector = self.collector
        // A long show hands its records to `records` as they come instead of keeping them all.
        let observer: @Sendable (PresentationRecord) -> Void = records ?? { collector.append($0) }
        let log = ShowLog(writer: nil, observer: observer, zoneObserver: { collector.append($0) })
        runner = ShowRunner(schedule: schedule, display: display, audioSink: audioSink, log: log,
                            configuration: .init(clock: .starting(at: startAt, host: clock, shift: shift), automaticTicks: false, watchesFile: watchesFile),
                            hostClock: clock)
        runner.start()
    }

    /// Runs `count` refreshes; `after` sees each refresh's outcome. Before each refresh it waits until the
    /// engine has the frames due (decoding is real and runs at its own speed).
    func refresh(_ count: Int, after: ((RefreshOutcome) throws -> Void)? = nil) throws {
        for index in 0..<count {
            var waited = 0
            while (runner.gate.isWaitingForData() || display.isWaitingForData()) && waited < 5000 {
                usleep(1000)
                waited += 1
            }
            clock.advance(by: display.refreshInterval)
            let outcome = try display.refresh()
            try after?(outcome)
            if index % 5 == 0 { runner.tick() }
        }
    }

    /// Waits (real time, without blocking a thread: the reload runs as a task) until the log has
    /// `count` events of `kind`.
    func waitFor(_ kind: PresentationEvent.Kind, count: Int, seconds: Double = 20) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if collector.events(kind).count >= count { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    func stop() {
        runner.stop()
        display.stop()
    }
}

/// A solid colour PNG for overlays.
func writeSolidPNG(_ path: String, red: UInt8, green: UInt8, blue: UInt8) throws {
    let pixels = [UInt8]((0..<(16 * 16)).flatMap { _ in [red, green, blue, 255] })
    let data = try RGBAImage(width: 16, height: 16, pixels: pixels).pngData()
    try Data(data).write(to: URL(fileURLWithPath: path))
}

extension UTCInstant {
    static func iso(_ text: String) -> UTCInstant { ZoneInfo.utc.parseInstant(text)! }
}
