import ChildProcesses
import Foundation
import Testing

/// `vitrine play` end to end: the built executable, real decoding, the null display on a
/// simulated clock, and the presentation log read back as JSON.
@Suite("vitrine play")
struct PlayCommandTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func fixture(_ name: String) -> String {
        let path = root.appendingPathComponent("Fixtures/generated/\(name)").path
        if !FileManager.default.fileExists(atPath: path) {
            _ = run("/bin/bash", [root.appendingPathComponent("scripts/fixtures.sh").path])
        }
        return path
    }

    static var executable: String {
        let candidates = [".build/debug/vitrine", ".build/x86_64-unknown-linux-gnu/debug/vitrine", ".build/aarch64-unknown-linux-gnu/debug/vitrine"]
        return candidates.map { root.appendingPathComponent($0).path }.first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? candidates[0]
    }

    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) -> (status: Int32, output: String) {
        do {
            // Both streams, as one text (their order between the two is not kept).
            let result = try ChildProcess.run(tool, arguments)
            return (result.status, result.stdout + result.stderr)
        } catch {
            return (-1, "\(error)")
        }
    }

    static func play(_ arguments: [String]) throws -> [[String: Any]] {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-play-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        let result = run(executable, ["play", "--simulated-clock", "--presentation-log", log.path] + arguments)
        #expect(result.status == 0, "\(result.output)")
        let text = try String(contentsOf: log, encoding: .utf8)
        return try text.split(separator: "\n").map { line in
            try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
        }
    }

    @Test("three clips: every frame once, in order, no gap at the seams")
    func threeClipsGapless() throws {
        let records = try Self.play(["queue1.mp4", "queue2.mp4", "queue3.mp4"].map(Self.fixture))
        let frames = records.filter { $0["type"] as? String == "frame" }
        #expect(frames.count == 150)
        let items: [Int] = frames.map { $0["item"] as! Int }
        let expectedItems: [Int] = (0..<150).map { $0 / 50 }
        #expect(items == expectedItems)
        // Exact times: [value, timescale] with the clips' 1/12800 time base, 512 ticks per frame.
        let pts: [Int] = frames.map { (($0["pts"] as! [Int])[0]) }
        let expectedPTS: [Int] = (0..<150).map { ($0 % 50) * 512 }
        #expect(pts == expectedPTS)
        // At 60 Hz a 25 fps frame stays 2 or 3 refreshes, across the seams too: no gap.
        let refreshes = frames.map { $0["refresh"] as! Int }
        #expect(zip(refreshes, refreshes.dropFirst()).allSatisfy { [2, 3].contains($1 - $0) })
        #expect(frames.last?["dropped"] as? Int == 0)
        let events = records.filter { $0["type"] as? String == "event" }.map { $0["event"] as! String }
        #expect(events == ["item_ready", "item_ended", "item_ready", "item_ended", "item_ready", "item_ended"])
    }

    @Test("a clip with audio keeps |A−V| within 20 ms over its length")
    func audioVideoSync() throws {
        let records = try Self.play([Self.fixture("h264_aac.mp4")])
        let frames = records.filter { $0["type"] as? String == "frame" }
        #expect(frames.count == 250)
        let offsets = frames.compactMap { frame -> Double? in
            guard let audio = frame["audio_clock_s"] as? Double else { return nil }
            return abs(audio - (frame["pts_s"] as! Double))
        }
        #expect(offsets.count >= 245)
        #expect(offsets.allSatisfy { $0 <= 0.020 })
    }

    @Test("the null display refreshes at --mode's rate (50 Hz: a 25 fps frame stays two refreshes, 40 ms)")
    func nullDisplayFollowsMode() throws {
        let records = try Self.play(["--mode", "320x240@50", Self.fixture("queue1.mp4")])
        let frames = records.filter { $0["type"] as? String == "frame" }
        #expect(frames.count == 50)
        let refreshes = frames.map { $0["refresh"] as! Int }
        #expect(zip(refreshes, refreshes.dropFirst()).allSatisfy { $1 - $0 == 2 }, "\(refreshes)")
        let presented = frames.map { ($0["presented_ns"] as! NSNumber).int64Value }
        #expect(zip(presented, presented.dropFirst()).allSatisfy { $1 - $0 == 40_000_000 }, "\(presented)")
    }

    @Test("the null display refuses a mode it cannot read, naming it")
    func nullDisplayBadMode() {
        let result = Self.run(Self.executable, ["play", "--display", "null", "--mode", "320by240", Self.fixture("queue1.mp4")])
        #expect(result.status != 0)
        #expect(result.output.contains("320by240"), "\(result.output)")
    }

    @Test("a missing file is reported with its name and the queue goes on")
    func missingFileInQueue() throws {
        let records = try Self.play([Self.fixture("queue1.mp4"), "/nonexistent/gone.mp4", Self.fixture("queue2.mp4")])
        let failed = records.filter { $0["event"] as? String == "item_failed" }
        #expect(failed.count == 1)
        #expect((failed.first?["reason"] as? String)?.contains("/nonexistent/gone.mp4") == true)
        #expect(records.filter { $0["type"] as? String == "frame" }.count == 100)
    }
}
