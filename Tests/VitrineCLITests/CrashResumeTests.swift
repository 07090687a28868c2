import ChildProcesses
import Foundation
import Testing

/// After `kill -9`, a restarted player shows what the programme says for now — mid-item, at the
/// position the wall clock gives — and its state records the run that ended without an orderly stop.
@Suite("Restart after a crash")
struct CrashResumeTests {
    struct Frame {
        var source: String
        var seconds: Double
    }

    /// The first frame line of a presentation log, waiting for it (generous deadline: slow machines).
    static func firstFrame(in path: String, deadline seconds: Double = 90) -> (Frame, Date)? {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
               let line = text.split(separator: "\n").first(where: { $0.contains("\"type\":\"frame\"") }),
               let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
               let source = object["source"] as? String, let pts = object["pts_s"] as? Double {
                return (Frame(source: source, seconds: pts), Date())
            }
            usleep(10_000)
        }
        return nil
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    @Test("kill -9, then start again: the first frame is the programme's item at the programme's position; the state counts the crash")
    func resumesAtTheProgrammePosition() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-crash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let long = ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/h264_aac.mp4").path
        let short = ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/queue1.mp4").path
        let schedule = folder.appendingPathComponent("show.toml").path
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            video = "\(long)"
            [[playlists.main.items]]
            video = "\(short)"
            """.write(toFile: schedule, atomically: true, encoding: .utf8)
        let state = folder.appendingPathComponent("state").path
        func start(log: String, errors: String) throws -> ChildProcess {
            try ChildProcess(
                executable: ScheduleCommandsTests.executable.path,
                arguments: ["play", schedule, "--display", "headless", "--mode", "320x240@25", "--no-audio",
                            "--state-directory", state, "--presentation-log", log],
                standardError: errors)
        }

        let firstLog = folder.appendingPathComponent("first.jsonl").path
        let first = try start(log: firstLog, errors: folder.appendingPathComponent("first.err").path)
        #expect(Self.firstFrame(in: firstLog) != nil, "the first run never presented a frame")
        first.terminate(SIGKILL)

        let secondLog = folder.appendingPathComponent("second.jsonl").path
        let secondErrors = folder.appendingPathComponent("second.err").path
        let started = Date()
        let second = try start(log: secondLog, errors: secondErrors)
        defer { second.terminate() }
        let (frame, seen) = try #require(Self.firstFrame(in: secondLog), "the restarted player never presented a frame")
        print("restart: first frame \(String(format: "%.2f", seen.timeIntervalSince(started))) s after the process started")

        // What the programme says from just before the start to just after the frame was seen.
        let window = try ScheduleCommandsTests.vitrine([
            "programme", schedule, "--from", Self.iso(started.addingTimeInterval(-1)), "--to", Self.iso(seen.addingTimeInterval(2)), "--json",
        ])
        let programme = try #require(try JSONSerialization.jsonObject(with: Data(window.output.utf8)) as? [String: Any])
        let changes = try #require(programme["changes"] as? [[String: Any]])
        // Each span of the window: its media, and the media time at its start and end.
        var spans: [(media: String, from: Double, to: Double)] = []
        let formatter = ISO8601DateFormatter()
        for (index, change) in changes.enumerated() {
            guard let media = change["media"] as? String, let position = change["media_time_seconds"] as? Double,
                  let utc = (change["utc"] as? String).flatMap(formatter.date(from:)) else { continue }
            let end = index + 1 < changes.count ? ((changes[index + 1]["utc"] as? String).flatMap(formatter.date(from:)) ?? seen) : seen.addingTimeInterval(2)
            spans.append((media, position, position + end.timeIntervalSince(utc)))
        }
        #expect(spans.contains { $0.media == frame.source && frame.seconds >= $0.from - 0.5 && frame.seconds <= $0.to + 0.5 },
                "first frame \(frame.source) at \(frame.seconds) s is not where the programme is: \(spans)")

        // The state counted both starts and the crash, and the log says so.
        let saved = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state + "/state.json"))) as? [String: Any])
        #expect(saved["starts"] as? Int == 2)
        #expect(saved["uncleanEnds"] as? Int == 1)
        #expect(saved["running"] as? Bool == true)
        let errors = try String(contentsOfFile: secondErrors, encoding: .utf8)
        #expect(errors.contains("the previous run ended without an orderly stop"), "\(errors)")
    }

    enum StateFault: String, CaseIterable, Sendable {
        /// Every write into the state directory hits a full disk (the temporary file is /dev/full).
        case full
        /// The state directory cannot be created (its parent is a regular file).
        case unwritable
    }

    @Test("a state directory that is full or cannot be written: the error is logged, the picture plays, the command ends normally",
          arguments: StateFault.allCases)
    func stateNotWritable(fault: StateFault) throws {
        let folder = try CommandRunner.temporaryDirectory("state-fault")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let state: String
        switch fault {
        case .full:
            state = folder + "/state"
            try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: state + "/state.json.new", withDestinationPath: "/dev/full")
        case .unwritable:
            try Data("a file".utf8).write(to: URL(fileURLWithPath: folder + "/file"))
            state = folder + "/file/state"
        }
        let schedule = folder + "/show.toml"
        try "version = 1\nfallback = \"loop\"\n[[playlists.loop.items]]\nvideo = \"\(CommandRunner.fixture("queue1.mp4"))\"\n"
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let log = folder + "/log.jsonl"
        let result = try CommandRunner.vitrine([
            "play", schedule, "--display", "headless", "--mode", "320x240@25", "--no-audio", "--duration", "3",
            "--state-directory", state, "--presentation-log", log,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("the player's state is not kept"), "\(result.stderr)")
        #expect(result.stderr.contains(fault == .full ? "No space left on device" : "Not a directory"), "\(result.stderr)")
        let frames = MediaFaultTests.records(log).filter { $0["type"] as? String == "frame" }
        #expect(frames.count > 25, "only \(frames.count) frames played")
    }
}
