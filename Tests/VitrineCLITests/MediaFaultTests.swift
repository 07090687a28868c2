import ChildProcesses
import Foundation
import Testing

/// Faults injected into the media of a playing `vitrine play`, a real process: the damaged item
/// ends where its data ends, and the next item plays, without a crash or a hang.
@Suite("Media damaged while it plays")
struct MediaFaultTests {
    enum Fault: String, CaseIterable, Sendable {
        /// The file is cut to a fifth of its length.
        case truncated
        /// Everything after the first fifth is overwritten with random bytes.
        case garbled
    }

    /// The presentation log's lines as objects.
    static func records(_ path: String) -> [[String: Any]] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    /// Damages the file at `path` in place: cut to a fifth of its length, or random bytes after it.
    static func damage(_ path: String, _ fault: Fault) throws {
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        switch fault {
        case .truncated:
            try handle.truncate(atOffset: UInt64(size / 5))
        case .garbled:
            try handle.seek(toOffset: UInt64(size / 5))
            var generator = SystemRandomNumberGenerator()
            try handle.write(contentsOf: Data((0..<(size - size / 5)).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        }
    }

    /// Waits (generous deadline) until `condition` holds for the log's records.
    static func wait(for path: String, deadline seconds: Double = 90, _ condition: ([[String: Any]]) -> Bool) -> [[String: Any]] {
        let end = Date().addingTimeInterval(seconds)
        var records = Self.records(path)
        while !condition(records) && Date() < end {
            usleep(20_000)
            records = Self.records(path)
        }
        return records
    }

    @Test("a file damaged part-way through playback ends there, and the next item plays", arguments: Fault.allCases)
    func damagedWhilePlaying(fault: Fault) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-fault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let damaged = folder.appendingPathComponent("long.mp4").path
        try FileManager.default.copyItem(atPath: ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/h264_aac.mp4").path,
                                         toPath: damaged)
        let next = ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/queue1.mp4").path
        let log = folder.appendingPathComponent("log.jsonl").path
        let player = try ChildProcess(
            executable: ScheduleCommandsTests.executable.path,
            arguments: ["play", damaged, next, "--display", "headless", "--mode", "320x240@25", "--no-audio", "--presentation-log", log],
            standardError: folder.appendingPathComponent("errors.txt").path)
        defer { player.terminate(SIGKILL) }

        // Playing: a second into the first item.
        let playing = Self.wait(for: log) { records in
            records.contains { $0["type"] as? String == "frame" && $0["item"] as? Int == 0 && ($0["pts_s"] as? Double ?? 0) >= 1 }
        }
        try #require(playing.contains { $0["type"] as? String == "frame" && $0["item"] as? Int == 0 }, "the first item never played")

        // The fault: the 10 s file keeps only its first fifth, or has garbage after it.
        try Self.damage(damaged, fault)

        // The next item plays (in full), and the player ends by itself, in order.
        let after = Self.wait(for: log) { records in
            records.contains { $0["type"] as? String == "event" && $0["event"] as? String == "item_ended" && $0["item"] as? Int == 1 }
        }
        let firstItemFrames = after.filter { $0["type"] as? String == "frame" && $0["item"] as? Int == 0 }.compactMap { $0["pts_s"] as? Double }
        let secondItemFrames = after.filter { $0["type"] as? String == "frame" && $0["item"] as? Int == 1 }
        #expect((firstItemFrames.max() ?? 10) < 9.9, "the damaged item played to its end: \(firstItemFrames.max() ?? -1)")
        #expect(after.contains { $0["event"] as? String == "item_ended" && $0["item"] as? Int == 0 })
        #expect(secondItemFrames.count == 50, "the next item showed \(secondItemFrames.count) of its 50 frames")
        #expect(player.wait() == 0)
    }
}
