import ChildProcesses
import Foundation
import Testing

/// The schedule's `[restart]` policy applied by a real `vitrine play` process: items that cannot
/// be opened are retried after the documented backoffs, skipped, and replaced by the fallback
/// playlist; a source that stops sending is seen as a stall. Everything is asserted from the
/// presentation log and the state file, waiting on events with generous deadlines.
@Suite("Supervisor: restart policy and stalls", .enabled(if: CommandRunner.canRun, "needs the built binary, FFmpeg's tools and the fixtures"))
struct SupervisorFaultTests {
    typealias Record = [String: Any]

    static func events(_ records: [Record], _ kind: String) -> [Record] { records.filter { $0["event"] as? String == kind } }
    static func seconds(_ record: Record) -> Double { Double(record["at_ns"] as? Int ?? 0) / 1e9 }

    /// A 2 s clip, two items that cannot be opened (URLs are not probed when the schedule is
    /// loaded, so the failures come at play time), and a fallback playlist of another clip.
    static func failingSchedule(in folder: String, onFailure: String = "skip", fallbackAfter: Int = 2) -> String {
        """
        version = 1
        fallback = "spare"

        [restart]
        retries = 2
        backoff = "500ms"
        backoff_multiplier = 2
        max_backoff = "30s"
        on_failure = "\(onFailure)"
        fallback_after = \(fallbackAfter)

        [playlists.main]
        [[playlists.main.items]]
        video = "\(CommandRunner.fixture("queue1.mp4"))"
        [[playlists.main.items]]
        url = "file://\(folder)/missing-a.mp4"
        duration = "3s"
        [[playlists.main.items]]
        url = "file://\(folder)/missing-b.mp4"
        duration = "3s"
        [[playlists.main.items]]
        video = "\(CommandRunner.fixture("queue2.mp4"))"

        [playlists.spare]
        [[playlists.spare.items]]
        video = "\(CommandRunner.fixture("queue3.mp4"))"

        [entries.always]
        playlist = "main"
        """
    }

    /// A schedule playing `first` then queue1.mp4 all day, with the `[restart]` lines given.
    static func twoItemSchedule(first: String, restart: String) -> String {
        """
        version = 1
        [restart]
        \(restart)
        [playlists.main]
        [[playlists.main.items]]
        \(first)
        [[playlists.main.items]]
        video = "\(CommandRunner.fixture("queue1.mp4"))"
        [entries.always]
        playlist = "main"
        """
    }

    /// Starts `vitrine play SCHEDULE` headless at the start of the playlist's cycle (midnight).
    static func play(_ schedule: String, folder: String, log: String) throws -> ChildProcess {
        try ChildProcess(
            executable: CommandRunner.vitrine!,
            arguments: ["play", schedule, "--display", "headless", "--mode", "320x240@25", "--no-audio",
                        "--start-at", "2026-11-25T00:00:00Z", "--state-directory", folder + "/state", "--presentation-log", log],
            standardError: folder + "/errors.txt")
    }

    @Test("a failing item: retried after 0.5 s then 1 s, skipped; the second failing item in a row brings the fallback playlist")
    func backoffSkipFallback() throws {
        let folder = try CommandRunner.temporaryDirectory("supervisor")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let schedule = folder + "/show.toml"
        try Self.failingSchedule(in: folder).write(toFile: schedule, atomically: true, encoding: .utf8)
        let log = folder + "/log.jsonl"
        let player = try Self.play(schedule, folder: folder, log: log)
        defer { player.terminate(SIGKILL) }

        // Done when the fallback's clip has presented frames after the `fallback` line.
        let records = MediaFaultTests.wait(for: log, deadline: 120) { records in
            guard let index = records.firstIndex(where: { $0["event"] as? String == "fallback" }) else { return false }
            return records[index...].contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("queue3.mp4") }
        }
        player.terminate(SIGTERM)
        _ = player.wait()
        let failed = Self.events(records, "item-failed")
        let retries = Self.events(records, "retry")
        let skips = Self.events(records, "skip")
        let fallbacks = Self.events(records, "fallback")
        try #require(fallbacks.count == 1, "no fallback: \(records.filter { $0["type"] as? String == "event" })")

        // missing-a: failed, retry 1 after 0.5 s, failed, retry 2 after 1 s, failed, skipped.
        let a = { (record: Record) in (record["detail"] as? String ?? "").contains("missing-a") }
        let b = { (record: Record) in (record["detail"] as? String ?? "").contains("missing-b") }
        #expect(failed.filter(a).count == 3)
        #expect(retries.filter(a).map { $0["attempt"] as? Int } == [1, 2])
        #expect(retries.filter(a).map { $0["delay_s"] as? Double } == [0.5, 1.0])
        #expect(skips.count == 1 && skips.allSatisfy(a))
        // missing-b: the same two retries, then the fallback (two items in a row failed).
        #expect(failed.filter(b).count == 3)
        #expect(retries.filter(b).map { $0["delay_s"] as? Double } == [0.5, 1.0])
        #expect((fallbacks[0]["reason"] as? String ?? "").contains("2 items in a row"))

        // Each retry waited at least its backoff: the next failure of the same item comes after it.
        for (retry, next) in zip(retries.filter(a), failed.filter(a).dropFirst()) {
            #expect(Self.seconds(next) - Self.seconds(retry) >= (retry["delay_s"] as? Double ?? 0) - 0.001)
        }
        for (retry, next) in zip(retries.filter(b), failed.filter(b).dropFirst()) {
            #expect(Self.seconds(next) - Self.seconds(retry) >= (retry["delay_s"] as? Double ?? 0) - 0.001)
        }

        // While an item was held and retried, nothing else was presented: between the first
        // failure and the fallback, no frame of any other item appeared.
        let firstFailure = Self.seconds(failed[0]), fallbackAt = Self.seconds(fallbacks[0])
        let framesBetween = records.filter {
            $0["type"] as? String == "frame" && Double($0["presented_ns"] as? Int ?? 0) / 1e9 > firstFailure
                && Double($0["presented_ns"] as? Int ?? 0) / 1e9 < fallbackAt
        }
        #expect(framesBetween.isEmpty, "frames shown while items were held: \(framesBetween.prefix(3))")

        // The counts survive in the state file.
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/state/state.json"))
        let state = try JSONSerialization.jsonObject(with: data) as? [String: Any] ?? [:]
        #expect(state["itemRetries"] as? Int == 4)
        #expect(state["skippedItems"] as? Int == 1)
        #expect(state["fallbacks"] as? Int == 1)
        #expect(state["scheduleChoice"] as? String == "fallback")
    }

    @Test("on_failure = \"fallback\": the first item whose retries are spent brings the fallback at once")
    func fallbackOnFirstFailure() throws {
        let folder = try CommandRunner.temporaryDirectory("supervisor")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let schedule = folder + "/show.toml"
        try Self.failingSchedule(in: folder, onFailure: "fallback", fallbackAfter: 5).write(toFile: schedule, atomically: true, encoding: .utf8)
        let log = folder + "/log.jsonl"
        let player = try Self.play(schedule, folder: folder, log: log)
        defer { player.terminate(SIGKILL) }
        let records = MediaFaultTests.wait(for: log, deadline: 120) { records in
            records.contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("queue3.mp4") }
        }
        player.terminate(SIGTERM)
        _ = player.wait()
        let fallbacks = Self.events(records, "fallback")
        try #require(fallbacks.count == 1, "no fallback: \(records.filter { $0["type"] as? String == "event" })")
        #expect(Self.events(records, "skip").isEmpty)
        #expect(Self.events(records, "retry").count == 2)
        #expect((fallbacks[0]["reason"] as? String ?? "").contains("main[1] failed 3 times"))
    }

    @Test("an HTTP source that stops sending mid-item: the stall is detected and the policy applied, then the show goes on")
    func stalledSource() throws {
        let folder = try CommandRunner.temporaryDirectory("supervisor")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A web server that sends the first third of an MPEG-TS file, then holds the connection
        // open without sending anything more.
        let server = folder + "/stall.py"
        try """
            import http.server, sys, time
            data = open(sys.argv[1], 'rb').read()
            class Handler(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    self.send_response(200)
                    self.send_header('Content-Type', 'video/mp2t')
                    self.send_header('Content-Length', str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[:len(data) // 3])
                    self.wfile.flush()
                    time.sleep(300)
                def log_message(self, *args):
                    pass
            http.server.ThreadingHTTPServer(('127.0.0.1', int(sys.argv[2])), Handler).serve_forever()
            """.write(toFile: server, atomically: true, encoding: .utf8)
        let port = try FreePort.find()
        let web = try ChildProcess(executable: "python3", arguments: [server, CommandRunner.fixture("mpeg2.ts"), String(port)])
        defer { web.terminate(SIGKILL) }
        FreePort.waitUntilListening(port)
        let schedule = folder + "/show.toml"
        try Self.twoItemSchedule(first: "url = \"http://127.0.0.1:\(port)/live.ts\"\nduration = \"60s\"", restart: "retries = 0")
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let log = folder + "/log.jsonl"
        let player = try Self.play(schedule, folder: folder, log: log)
        defer { player.terminate(SIGKILL) }
        let records = MediaFaultTests.wait(for: log, deadline: 120) { records in
            guard let index = records.firstIndex(where: { $0["event"] as? String == "skip" }) else { return false }
            return records[index...].contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("queue1.mp4") }
        }
        player.terminate(SIGTERM)
        _ = player.wait()
        let stalls = Self.events(records, "stall")
        try #require(stalls.count == 1, "no stall: \(records.filter { $0["type"] as? String == "event" })")
        // Frames of the stream were shown before it stalled; the stall waited at least the
        // documented 5 s without a new frame.
        #expect(records.contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("live.ts") })
        #expect((stalls[0]["delay_s"] as? Double ?? 0) >= 5)
        #expect((stalls[0]["detail"] as? String ?? "").contains("main[0]"))
        #expect(Self.events(records, "skip").count == 1)
    }

    enum Damage: String, CaseIterable, Sendable {
        /// The file is deleted while it plays: this play ends normally (the open file stays
        /// readable), the next play of it cannot open it.
        case deleted
        /// Cut to a fifth of its length while it plays.
        case truncated
        /// Everything after the first fifth overwritten with random bytes while it plays.
        case garbled
    }

    @Test("a schedule's file deleted, truncated or garbled while it plays: item-failed, the policy applied, the show goes on",
          arguments: Damage.allCases)
    func damagedWhilePlaying(damage: Damage) throws {
        let folder = try CommandRunner.temporaryDirectory("supervisor")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let media = folder + "/damaged.mp4"
        try FileManager.default.copyItem(atPath: CommandRunner.fixture(damage == .deleted ? "queue2.mp4" : "h264_aac.mp4"), toPath: media)
        let schedule = folder + "/show.toml"
        try Self.twoItemSchedule(first: "video = \"\(media)\"", restart: "retries = 1\nbackoff = \"500ms\"")
            .write(toFile: schedule, atomically: true, encoding: .utf8)
        let log = folder + "/log.jsonl"
        let player = try Self.play(schedule, folder: folder, log: log)
        defer { player.terminate(SIGKILL) }
        let playing = MediaFaultTests.wait(for: log) { records in
            records.contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("damaged.mp4") }
        }
        try #require(playing.contains { $0["type"] as? String == "frame" }, "nothing played")
        switch damage {
        case .deleted: try FileManager.default.removeItem(atPath: media)
        case .truncated: try MediaFaultTests.damage(media, .truncated)
        case .garbled: try MediaFaultTests.damage(media, .garbled)
        }
        // Done when the damaged item was reported and the next item played after that.
        let records = MediaFaultTests.wait(for: log, deadline: 120) { records in
            guard let failed = records.firstIndex(where: { $0["event"] as? String == "item-failed" }) else { return false }
            return records[failed...].contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("queue1.mp4") }
        }
        let failed = Self.events(records, "item-failed")
        try #require(!failed.isEmpty, "no item-failed: \(records.filter { $0["type"] as? String == "event" })")
        #expect((failed[0]["detail"] as? String ?? "").contains("main[0]"))
        let after = records[(records.firstIndex { $0["event"] as? String == "item-failed" })!...]
        #expect(after.contains { $0["type"] as? String == "frame" && ($0["source"] as? String ?? "").hasSuffix("queue1.mp4") })
        // The policy was applied: a retry (and, when that failed too, a skip) follows the failure.
        #expect(!Self.events(records, "retry").isEmpty)
        #expect(player.isRunning, "the player ended")
    }
}
