import ChildProcesses
import Foundation
import Testing

/// `/api/logs?source=journal` of a playing `vitrine play --config`, asked with curl, reading real
/// journal files (made by systemd-journal-remote) through `VITRINE_JOURNAL_DIRECTORY`.
@Suite("Inspector: logs from the journal",
       .enabled(if: CommandRunner.canRun && CommandRunner.hasTool("curl") && JournalFiles.canWrite,
                "needs curl, systemd-journal-remote, FFmpeg's tools and the fixtures"))
struct InspectorJournalTests {
    typealias Player = InspectorTests.Player

    static func lines(_ player: Player, _ query: String) throws -> [[String: Any]] {
        let answer = try player.get("/api/logs?\(query)")
        #expect(answer.status == 200, "\(query): \(answer.status) \(String(decoding: answer.body, as: UTF8.self))")
        let object = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        return object?["lines"] as? [[String: Any]] ?? []
    }

    static func messages(_ player: Player, _ query: String) throws -> [String] {
        try lines(player, query).map { $0["message"] as? String ?? "?" }
    }

    @Test("the player's unit only, oldest first, filtered by since_time, priority, boot, since and limit; the ring stays the default")
    func journalLines() throws {
        let directory = try CommandRunner.temporaryDirectory("journal")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let now = JournalFiles.now
        try JournalFiles.write(JournalFiles.sample(now: now), into: directory)
        let player = try Player(environment: ["VITRINE_JOURNAL_DIRECTORY": directory])

        let all = try Self.lines(player, "source=journal")
        #expect(all.map { $0["message"] as? String ?? "?" } == ["earlier run started", "earlier run failed", "schedule in effect", "decoder detail",
                                                                 "frame late", "item failed", "item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        // What systemd said about the unit comes with it, labelled with its syslog identifier.
        let watchdog = try #require(all.first { ($0["message"] as? String)?.contains("Watchdog") == true })
        #expect(watchdog["label"] as? String == "systemd" && watchdog["pid"] as? Int == 1)
        // The ring's line shape, plus where the entry is in the journal.
        let failed = try #require(all.first { $0["message"] as? String == "item failed" })
        #expect(failed["level"] as? String == "error")
        #expect(failed["label"] as? String == "vitrine.show")
        #expect(failed["metadata"] as? [String: String] == ["item": "3", "media": "/srv/a.mp4"])
        #expect(failed["timeNanoseconds"] as? Int == Int(now - 20_000_000) * 1000)
        #expect(failed["pid"] as? Int == 300)
        #expect(failed["boot"] as? String == JournalFiles.currentBoot)
        #expect((failed["cursor"] as? String)?.contains(";i=") == true)
        let sequences = all.compactMap { $0["sequence"] as? Int }
        #expect(sequences.count == all.count && sequences == sequences.sorted() && sequences.first ?? 0 > 0, "\(sequences)")
        // A line from standard error has the syslog identifier as its label.
        #expect(all.last?["label"] as? String == "vitrine" && all.last?["level"] as? String == "error")

        #expect(try Self.messages(player, "source=journal&priority=warning")
                    == ["earlier run failed", "frame late", "item failed", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try Self.messages(player, "source=journal&priority=error&boot=current") == ["item failed", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try Self.messages(player, "source=journal&limit=2") == ["vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        let since = Double(now - 30_000_000) / 1e6
        #expect(try Self.messages(player, "source=journal&since_time=\(String(format: "%.6f", since))")
                    == ["frame late", "item failed", "item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let sinceText = iso.string(from: Date(timeIntervalSince1970: Double(now - 25_000_000) / 1e6))
        #expect(try Self.messages(player, "source=journal&since_time=\(sinceText)") == ["item failed", "item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try Self.messages(player, "source=journal&since_time=1970-01-01T01:00:00%2B01:00&limit=1") == ["Fatal error: out of frames"])
        // since= is the journal's sequence number, as it is the ring's for ring lines.
        #expect(try Self.messages(player, "source=journal&since=\(sequences[5])") == ["item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])

        #expect(try player.get("/api/logs?source=journal&boot=yesterday").status == 400)
        #expect(try player.get("/api/logs?source=journal&since_time=soon").status == 400)
        #expect(try player.get("/api/logs?source=disk").status == 400)
        #expect(try player.get("/api/logs?source=journal", token: nil).status == 401)

        // The default is still the in-process ring: this run's lines, without journal fields.
        let ring = try Self.lines(player, "limit=50")
        #expect(ring.contains { ($0["message"] as? String ?? "").contains("in effect") })
        #expect(ring.allSatisfy { $0["cursor"] == nil && $0["boot"] == nil })
        #expect(try Self.lines(player, "source=ring&since_time=\(Int(Date().timeIntervalSince1970) + 3600)").isEmpty)
        #expect(try Self.lines(player, "source=ring&since_time=2000-01-01T00:00:00Z&limit=50").count == ring.count)

        // The status says the journal could be read (after the first check has run).
        var status: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            status = try player.json("/api/status")
            if status["journalReadable"] is Bool { break }
            usleep(100_000)
        }
        #expect(status["journalReadable"] as? Bool == true, "\(status)")
        #expect(status["journalProblem"] is NSNull, "\(status)")
    }

    @Test("a journal directory that does not exist: 503 with a problem document naming it, the ring and the status still answer")
    func missingJournal() throws {
        let missing = "/nonexistent/vitrine-journal-\(UUID().uuidString)"
        let player = try Player(environment: ["VITRINE_JOURNAL_DIRECTORY": missing])
        let answer = try player.get("/api/logs?source=journal")
        #expect(answer.status == 503)
        #expect(answer.headers.lowercased().contains("content-type: application/problem+json"), "\(answer.headers)")
        let problem = try #require(try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])
        #expect(problem["status"] as? Int == 503)
        #expect(problem["errno"] as? Int == Int(ENOENT))
        #expect((problem["detail"] as? String)?.contains(missing) == true, "\(problem)")
        #expect(problem["title"] as? String == "the journal cannot be read")
        #expect(!(try Self.lines(player, "limit=10")).isEmpty)

        var status: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            status = try player.json("/api/status")
            if status["journalReadable"] is Bool { break }
            usleep(100_000)
        }
        #expect(status["journalReadable"] as? Bool == false, "\(status)")
        #expect((status["journalProblem"] as? String)?.contains(missing) == true, "\(status)")
    }
}
