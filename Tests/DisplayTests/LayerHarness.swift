import ChildProcesses
import Displays
import Foundation
import MediaAsset
import MediaSinks
import MediaTime
import Playback
import Synchronization
import Threading

/// Players in layers on the real headless display, stepped by hand on a manual clock: before each
/// refresh it waits (real time, bounded) while a player says a frame the refresh may need is being
/// decoded, so what is presented never depends on decode speed.
final class LayerHarness {
    let clock = ManualClock(start: .nanoseconds(1_000_000_000))
    let display: HeadlessDisplay

    init(mode: DisplayMode, rotation: Rotation = .none) throws {
        display = try HeadlessDisplay(mode: mode, rotation: rotation, pacing: .manual, clock: clock)
    }

    deinit { display.stop() }

    /// One refresh at the clock's time, then the clock moves on by one refresh.
    @discardableResult
    func step() throws -> RefreshOutcome {
        var waited = 0
        while display.isWaitingForData() && waited < 20_000 {
            usleep(500)
            waited += 1
        }
        let outcome = try display.refresh()
        clock.advance(by: display.refreshInterval)
        return outcome
    }

    /// Refreshes until `condition` holds (checked after each) or `maxRefreshes` ran; whether it held.
    @discardableResult
    func run(until condition: () -> Bool, maxRefreshes: Int) throws -> Bool {
        for _ in 0..<maxRefreshes {
            try step()
            if condition() { return true }
        }
        return false
    }

    /// A player of a fixture without sound, on the harness's clock.
    func player(_ fixture: String) -> Player {
        Player(item: MediaFixtures.item(fixture), clock: clock)
    }
}

/// Presentation records of one player.
final class RecordList: Sendable {
    private let records = LockedValue<[PresentationRecord]>([])
    func append(_ record: PresentationRecord) { records.withLock { $0.append(record) } }
    var frames: [PresentedFrame] { records.withLock { $0 }.compactMap { if case .frame(let f) = $0 { f } else { nil } } }
    func events(_ kind: PresentationEvent.Kind) -> [PresentationEvent] {
        records.withLock { $0 }.compactMap { if case .event(let e) = $0, e.kind == kind { e } else { nil } }
    }

    /// Starts recording `player`'s presentation log.
    static func recording(_ player: Player) -> RecordList {
        let list = RecordList()
        player.setPresentationHandler { list.append($0) }
        return list
    }
}

/// Values collected from another task or thread, in order.
final class Values<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }

    /// Waits (real time) until `condition` holds for the values, up to `seconds`.
    func wait(seconds: Double = 10, for condition: ([Value]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition(all) { return true }
            usleep(2_000)
        }
        return condition(all)
    }
}

/// The generated fixtures and FFmpeg's view of them: the reference the layers are checked against.
enum MediaFixtures {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static func path(_ name: String) -> String { root.appendingPathComponent("Fixtures/generated/\(name)").path }
    static var available: Bool {
        ["queue1.mp4", "queue2.mp4", "queue3.mp4", "mpeg2.ts", "h264_aac.mp4"].allSatisfy { FileManager.default.fileExists(atPath: path($0)) }
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") && FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")
    }

    /// An item of a fixture with its sound off (the layers are about pictures).
    static func item(_ name: String) -> PlayerItem {
        let item = PlayerItem(url: path(name))
        item.isAudioEnabled = false
        return item
    }

    /// The standard output of `tool` run to its end (posix_spawn: see ChildProcesses).
    static func run(_ tool: String, _ arguments: [String]) -> Data {
        Data((try? ChildProcess.run(tool, arguments))?.standardOutput ?? [])
    }

    /// ffprobe's presentation times of the first video stream's frames, in presentation order,
    /// counted from the first frame.
    static func framePTS(_ name: String) -> [MediaTime] {
        let text = String(decoding: run("/usr/bin/ffprobe", [
            "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base:frame=pts",
            "-of", "default=noprint_wrappers=1", path(name),
        ]), as: UTF8.self)
        var timescale: Int32 = 1
        var values: [Int64] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("time_base=1/") { timescale = Int32(line.dropFirst("time_base=1/".count)) ?? 1 }
            if line.hasPrefix("pts="), let value = Int64(line.dropFirst(4)) { values.append(value) }
        }
        let first = values.min() ?? 0
        return values.sorted().map { MediaTime(value: $0 - first, timescale: timescale) }
    }

    /// The presentation times of `frames`, counted from the first one (comparable with ``framePTS(_:)``
    /// when the first is the clip's first frame).
    static func fromFirst(_ frames: [PresentedFrame]) -> [MediaTime] {
        guard let first = frames.first?.presentationTime else { return [] }
        return frames.map { $0.presentationTime - first }
    }

    /// FFmpeg's picture of frame number `index` (0-based, presentation order) of `name`, scaled
    /// (bilinear, as the compositor samples) to `width`×`height`, then cropped to `crop` when given:
    /// RGB bytes, 3 a pixel, top row first.
    static func frameRGB(_ name: String, index: Int, width: Int, height: Int,
                         crop: (x: Int, y: Int, width: Int, height: Int)? = nil) -> [UInt8] {
        var filter = "select=eq(n\\,\(index)),scale=\(width):\(height):flags=bilinear+accurate_rnd+full_chroma_int+full_chroma_inp"
        if let crop { filter += ",crop=\(crop.width):\(crop.height):\(crop.x):\(crop.y)" }
        return [UInt8](run("/usr/bin/ffmpeg", [
            "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path(name), "-vf", filter,
            "-frames:v", "1", "-pix_fmt", "rgb24", "-f", "rawvideo", "-",
        ]))
    }
}

extension RGBAImage {
    /// The RGB bytes (3 a pixel, top row first) of the `width`×`height` area at (`x`, `y`).
    func rgbBytes(x: Int, y: Int, width: Int, height: Int) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(width * height * 3)
        for row in y..<y + height {
            for column in x..<x + width {
                let p = pixel(x: column, y: row)
                bytes += [p.r, p.g, p.b]
            }
        }
        return bytes
    }
}

/// The first `count` values of `stream` (which buffers what it was given since it was made), or
/// those that came within `seconds`.
func firstValues<Value: Sendable>(_ count: Int, of stream: AsyncStream<Value>, seconds: Double = 10) async -> [Value] {
    let received = Values<Value>()
    await withTaskGroup(of: Void.self) { group in
        group.addTask {
            for await value in stream {
                received.append(value)
                if received.all.count == count { return }
            }
        }
        group.addTask { try? await Task.sleep(for: .seconds(seconds)) }
        await group.next()
        group.cancelAll()
    }
    return received.all
}
