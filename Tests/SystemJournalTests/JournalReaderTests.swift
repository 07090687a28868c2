import ChildProcesses
import Foundation
import SystemJournal
import SystemPackage
import Testing

/// The sd-journal reader on real journal files made by systemd-journal-remote (no journald needed).
@Suite("Journal reader", .enabled(if: JournalFiles.canWrite, "needs systemd-journal-remote (package systemd-journal-remote)"))
struct JournalReaderTests {
    /// A directory holding one journal file of the sample entries.
    final class Sample {
        let directory: String
        let now = JournalFiles.now

        init() throws {
            directory = NSTemporaryDirectory() + "vitrine-journal-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try JournalFiles.write(JournalFiles.sample(now: now), into: directory)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func read(_ query: JournalQuery) throws -> JournalRecords {
            let journal = try Journal(.directory(FilePath(directory)))
            return try journal.read(query)
        }
    }

    @Test("the player's unit only, oldest first, with the fields JournalLogHandler writes, boot, PID and cursor")
    func unitAndFields() throws {
        let sample = try Sample()
        let found = try sample.read(JournalQuery())
        #expect(found.complete)
        #expect(found.records.map(\.message) == ["earlier run started", "earlier run failed", "schedule in effect", "decoder detail",
                                                 "frame late", "item failed", "item started",
                                                 "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        // What the service manager said about the unit comes with it, as with journalctl -u.
        let watchdog = try #require(found.records.first { $0.message.contains("Watchdog") })
        #expect(watchdog.pid == 1 && watchdog.syslogIdentifier == "systemd")
        let failed = try #require(found.records.first { $0.message == "item failed" })
        #expect(failed.priority == 3)
        #expect(failed.unit == "vitrine.service")
        #expect(failed.pid == 300)
        #expect(failed.bootID == JournalFiles.currentBoot)
        #expect(failed.syslogIdentifier == "vitrine")
        #expect(failed.fields == ["VITRINE_LOGGER": "vitrine.show", "VITRINE_ITEM": "3", "VITRINE_MEDIA": "/srv/a.mp4"])
        #expect(failed.realtimeMicroseconds == sample.now - 20_000_000)
        #expect(failed.cursor.contains(";i=") && failed.sequenceNumber != nil)
        let effect = try #require(found.records.first { $0.message == "schedule in effect" })
        #expect(effect.fields["CODE_FILE"] == "ShowRunner/ShowRunner.swift" && effect.fields["CODE_LINE"] == "120")
        // Sequence numbers grow along the journal, with a gap where the other unit logged.
        let sequences = found.records.compactMap(\.sequenceNumber)
        #expect(sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        #expect(try sample.read(JournalQuery(unit: "other.service")).records.map(\.message) == ["another unit's error", "other.service: Started."])
        #expect(try sample.read(JournalQuery(unit: nil)).records.count == 11)
        #expect(try sample.read(JournalQuery(unit: "nothing.service")).records.isEmpty)
    }

    @Test("since, priority, boot, limit (the newest) and after a sequence number")
    func filters() throws {
        let sample = try Sample()
        #expect(try sample.read(JournalQuery(sinceRealtime: sample.now - 30_000_000)).records.map(\.message)
                    == ["frame late", "item failed", "item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try sample.read(JournalQuery(maximumPriority: 4)).records.map(\.message)
                    == ["earlier run failed", "frame late", "item failed", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try sample.read(JournalQuery(maximumPriority: 3, boot: .current)).records.map(\.message)
                    == ["item failed", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try sample.read(JournalQuery(boot: .id(JournalFiles.earlierBoot))).records.map(\.message)
                    == ["earlier run started", "earlier run failed"])
        #expect(try sample.read(JournalQuery(limit: 3)).records.map(\.message)
                    == ["item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        #expect(try sample.read(JournalQuery(limit: 0)).records.isEmpty)
        let all = try sample.read(JournalQuery()).records
        let after = try #require(all[5].sequenceNumber)
        #expect(try sample.read(JournalQuery(afterSequenceNumber: after)).records.map(\.message)
                    == ["item started", "vitrine.service: Watchdog timeout (limit 30s)!", "Fatal error: out of frames"])
        // Where /proc/sys is hidden, the current boot is the one of this process's newest entry.
        let journal = try Journal(.directory(FilePath(sample.directory)))
        #expect(try journal.bootID(ofProcess: 100, unit: "vitrine.service") == JournalFiles.earlierBoot)
        #expect(try journal.bootID(ofProcess: 300, unit: "vitrine.service") == JournalFiles.currentBoot)
        #expect(try journal.bootID(ofProcess: 300, unit: "other.service") == nil)
        #expect(try Journal.currentBootID() == JournalFiles.currentBoot)
    }

    @Test("a missing directory is ENOENT, an empty one has no journal files, an unreadable file is EACCES (checked when not root)")
    func errors() throws {
        do {
            _ = try Journal(.directory("/nonexistent/vitrine-journal"))
        } catch {
            #expect(error.errno == .noSuchFileOrDirectory)
            #expect(error.description.contains("/nonexistent/vitrine-journal"), "\(error)")
        }
        let empty = NSTemporaryDirectory() + "vitrine-journal-empty-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: empty) }
        do {
            _ = try Journal(.directory(FilePath(empty)))
            Issue.record("an empty directory opened")
        } catch {
            #expect(error.errno == .noSuchFileOrDirectory)
            #expect(error.reason.contains("no journal files"), "\(error)")
        }
        // A file this user may not open (root reads everything: then there is nothing to check).
        if geteuid() != 0 {
            let sample = try Sample()
            chmod(sample.directory + "/vitrine.journal", 0)
            do {
                _ = try Journal(.directory(FilePath(sample.directory)))
                Issue.record("an unreadable journal opened")
            } catch {
                #expect(error.isPermissionProblem, "\(error)")
                #expect(error.reason.contains("systemd-journal group"))
            }
        }
    }

    @Test("reads run on their own thread, at most two at once; a third is refused with EBUSY instead of waiting")
    func readerThreads() async throws {
        let sample = try Sample()
        let reader = JournalReader(location: .directory(FilePath(sample.directory)))
        let records = try await reader.read(JournalQuery(maximumPriority: 3)).get()
        #expect(records.records.map(\.message) == ["earlier run failed", "item failed", "vitrine.service: Watchdog timeout (limit 30s)!",
                                                   "Fatal error: out of frames"])
        #expect(try await reader.check().get() > 0)
        let missing = JournalReader(location: .directory("/nonexistent/vitrine-journal"))
        switch await missing.read(JournalQuery()) {
        case .success: Issue.record("a missing directory was read")
        case .failure(let error): #expect(error.errno == .noSuchFileOrDirectory)
        }
        // Many at once: each either reads everything or is refused as busy, none waits or fails otherwise.
        let results = await withTaskGroup(of: Result<JournalRecords, JournalError>.self) { group in
            for _ in 0..<16 { group.addTask { await reader.read(JournalQuery()) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for result in results {
            switch result {
            case .success(let found): #expect(found.records.count == 9)
            case .failure(let error): #expect(error.errno == .resourceBusy, "\(error)")
            }
        }
        #expect(results.contains { (try? $0.get()) != nil })
        // With no room at all, a read is refused at once.
        switch await JournalReader(location: .directory(FilePath(sample.directory)), maximumConcurrentReads: 0).read(JournalQuery()) {
        case .success: Issue.record("a read ran beyond the limit")
        case .failure(let error): #expect(error.errno == .resourceBusy, "\(error)")
        }
    }
}
