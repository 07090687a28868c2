import ChildProcesses
import Foundation
import Testing

/// `vitrine play`'s threads by priority: the picture's deadline first, decoding behind it.
@Suite("play thread priorities", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct PlayThreadPriorityTests {
    /// Each thread of process `pid`: its name and nice value, from /proc.
    static func threads(of pid: pid_t) -> [(name: String, nice: Int)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { tid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/stat", encoding: .utf8),
                  let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
            // After the name: state (field 3) … nice (field 19).
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 16, let nice = Int(fields[16]) else { return nil }
            return (String(stat[stat.index(after: open)..<close]), nice)
        }
    }

    @Test("the demux and decode threads of the playing item and of the next one prepared behind it (FFmpeg's own threads, which carry the demux thread's name, included) run 5 nice steps below the render thread")
    func decodingRunsBelowTheRenderThread() throws {
        let folder = try CommandRunner.temporaryDirectory("play-priority")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/log.jsonl"
        let player = try ChildProcess(
            executable: CommandRunner.vitrine!,
            arguments: ["play", CommandRunner.fixture("h264_aac.mp4"), CommandRunner.fixture("queue1.mp4"),
                        "--display", "headless", "--mode", "320x240@25", "--no-audio", "--presentation-log", log])
        defer { player.terminate(SIGKILL) }
        // Playing, with the second item opened and decoding into its queue behind the first.
        let playing = MediaFaultTests.wait(for: log) { records in
            records.contains { $0["type"] as? String == "frame" && ($0["pts_s"] as? Double ?? 0) >= 1 }
        }
        try #require(playing.contains { $0["type"] as? String == "frame" }, "no frame presented")
        var threads = Self.threads(of: player.pid)
        let deadline = Date().addingTimeInterval(30)
        // One video decode thread per opened item: wait for the second item's (FFmpeg's frame
        // threads carry the demux thread's name, so counting those would not show it).
        while threads.filter({ $0.name == "vitrine-video" }).count < 2 && Date() < deadline {
            usleep(100_000)
            threads = Self.threads(of: player.pid)
        }
        let render = try #require(threads.first { $0.name == "vitrine-render" }, "\(threads.map(\.name))")
        let main = try #require(threads.first { $0.name == "vitrine" }, "\(threads.map(\.name))")
        #expect(render.nice == main.nice, "the render thread keeps the process's priority")
        let demux = threads.filter { $0.name == "vitrine-demux" }
        let video = threads.filter { $0.name == "vitrine-video" }
        // Two items' demux threads, and FFmpeg's frame threads under them.
        #expect(demux.count >= 2, "\(threads.map(\.name))")
        #expect(video.count == 2, "\(threads.map(\.name))")
        for thread in demux + video {
            #expect(thread.nice == render.nice + 5, "\(thread.name) at nice \(thread.nice), the render thread at \(render.nice)")
        }
    }
}
