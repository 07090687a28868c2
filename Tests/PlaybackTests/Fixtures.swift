import ChildProcesses
import Foundation
import MediaTime
import MediaSinks
import Playback
import SinkDoubles

/// Test media from scripts/fixtures.sh and ffprobe's view of it: the reference the engine is
/// checked against.
enum Fixtures {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of a generated fixture, generating the set first when it is missing.
    static func path(_ name: String) -> String {
        let url = root.appendingPathComponent("Fixtures/generated/\(name)")
        if !FileManager.default.fileExists(atPath: url.path) {
            _ = run("/bin/bash", [root.appendingPathComponent("scripts/fixtures.sh").path])
        }
        return url.path
    }

    struct ProbedFrame: Hashable {
        var presentationTime: MediaTime
        var isKeyframe: Bool
    }

    /// ffprobe's list of the first video stream's frames, in presentation order, in item time
    /// (minus the container's start time, which is 0 for the MP4 fixtures).
    static func videoFrames(_ name: String) -> [ProbedFrame] {
        let file = path(name)
        let base = run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base", "-of", "csv=p=0", file])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/")
        let timescale = Int32(base[1])!
        let lines = run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts,key_frame", "-of", "csv=p=0", file])
        return lines.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: ",")
            guard fields.count >= 2, let key = Int(fields[0]), let pts = Int64(fields[1]) else { return nil }
            return ProbedFrame(presentationTime: MediaTime(value: pts, timescale: timescale), isKeyframe: key == 1)
        }.sorted { $0.presentationTime < $1.presentationTime }
    }

    static func run(_ tool: String, _ arguments: [String]) -> String {
        (try? ChildProcess.run(tool, arguments))?.stdout ?? ""
    }

    /// Waits until the test's HTTP server at `url` answers 200 (a slow machine may take seconds to
    /// start Python); throws when it exited or never answered within 60 s.
    static func waitUntilServing(_ url: String, process: ChildProcess) throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if run("/usr/bin/curl", ["-s", "--max-time", "5", "-o", "/dev/null", "-w", "%{http_code}", url]) == "200" { return }
            guard process.isRunning else { throw ServerError(description: "the test's HTTP server exited before serving \(url)") }
            usleep(50_000)
        }
        throw ServerError(description: "the test's HTTP server did not serve \(url) within 60 s")
    }

    struct ServerError: Error, CustomStringConvertible {
        var description: String
    }
}

/// A player on recording sinks and a manual clock: the harness of every engine test.
final class Harness: @unchecked Sendable {
    let clock = ManualClock(start: .nanoseconds(1_000_000_000))
    let video: RecordingVideoSink
    let audio: RecordingAudioSink?

    init(refreshRate: Int32 = 60, audio withAudio: Bool = false) {
        video = RecordingVideoSink(clock: clock, refreshInterval: MediaTime(value: 1, timescale: refreshRate))
        audio = withAudio ? RecordingAudioSink(clock: clock) : nil
    }

    func player(_ item: PlayerItem?) -> Player {
        Player(item: item, videoSink: video, audioSink: audio, clock: clock)
    }

    func queue(_ items: [PlayerItem]) -> QueuePlayer {
        QueuePlayer(items: items, videoSink: video, audioSink: audio, clock: clock)
    }

    /// The presentation times of the frames shown, one per new frame (repeats removed).
    var shownTimes: [MediaTime] { video.presentations.map(\.presentationTime) }
}

/// Collects values from observer callbacks (called on dispatch queues).
final class Collector<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []
    func append(_ value: Value) { lock.lock(); storage.append(value); lock.unlock() }
    var values: [Value] { lock.lock(); defer { lock.unlock() }; return storage }
}

/// Waits (real time, bounded) for callbacks dispatched to observer queues to land.
func settle(_ condition: () -> Bool = { false }, timeout: Double = 2) {
    let end = Date().addingTimeInterval(timeout)
    while !condition() && Date() < end { usleep(2_000) }
}
