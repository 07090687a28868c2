#if canImport(Glibc)
import Glibc
#endif

/// Real journal files without a running journald: entries written in the journal's export format
/// and converted by `systemd-journal-remote` (package systemd-journal-remote) into a `.journal` file.
public enum JournalFiles {
    /// systemd-journal-remote, where Debian installs it.
    public static let remote = "/lib/systemd/systemd-journal-remote"

    public static var canWrite: Bool { access(remote, X_OK) == 0 }

    /// One entry: `__REALTIME_TIMESTAMP` (µs since 1970), `__MONOTONIC_TIMESTAMP`, `_BOOT_ID` and
    /// the other fields (single-line values).
    public struct Entry: Sendable {
        public var realtime: UInt64
        public var boot: String
        public var fields: [(String, String)]

        public init(realtime: UInt64, boot: String, _ fields: [(String, String)]) {
            self.realtime = realtime
            self.boot = boot
            self.fields = fields
        }
    }

    /// Writes `entries` into `directory/name` (a `.journal` file) through systemd-journal-remote:
    /// `systemd-journal-remote --output=FILE --split-mode=none EXPORT_FILE`.
    public static func write(_ entries: [Entry], into directory: String, name: String = "vitrine.journal") throws(ChildProcessError) {
        var export = ""
        for (index, entry) in entries.enumerated() {
            export += "__REALTIME_TIMESTAMP=\(entry.realtime)\n__MONOTONIC_TIMESTAMP=\(1_000_000 + index)\n_BOOT_ID=\(entry.boot)\n"
            for (name, value) in entry.fields {
                precondition(!value.contains("\n"), "single-line values only")
                export += "\(name)=\(value)\n"
            }
            export += "\n"
        }
        let exportPath = "\(directory)/\(name).export"
        guard let file = fopen(exportPath, "w") else {
            throw ChildProcessError(executable: remote, reason: "cannot write \(exportPath): \(String(cString: strerror(errno)))")
        }
        fputs(export, file)
        fclose(file)
        defer { unlink(exportPath) }
        let result = try ChildProcess.run(remote, ["--output=\(directory)/\(name)", "--split-mode=none", exportPath])
        guard result.status == 0 else { throw ChildProcessError(executable: remote, reason: "exit status \(result.status): \(result.stderr)") }
    }

    /// A boot that is not this one.
    public static let earlierBoot = "00112233445566778899aabbccddeeff"

    /// The entries the journal tests read, oldest first: two of an earlier boot two days ago, then
    /// in this boot, 60 s to 5 s before `now`, the player's lines (as `JournalLogHandler` writes
    /// them: `VITRINE_LOGGER` and metadata fields) and one of another unit.
    public static func sample(now: UInt64) -> [Entry] {
        let boot = currentBoot, day: UInt64 = 86_400_000_000, second: UInt64 = 1_000_000
        let player: [(String, String)] = [("_SYSTEMD_UNIT", "vitrine.service"), ("SYSLOG_IDENTIFIER", "vitrine")]
        return [
            Entry(realtime: now - 2 * day, boot: earlierBoot, player + [("_PID", "100"), ("PRIORITY", "6"), ("MESSAGE", "earlier run started"),
                                                                       ("VITRINE_LOGGER", "vitrine.play")]),
            Entry(realtime: now - 2 * day + second, boot: earlierBoot, player + [("_PID", "100"), ("PRIORITY", "3"), ("MESSAGE", "earlier run failed"),
                                                                                ("VITRINE_LOGGER", "vitrine.show"), ("VITRINE_ITEM", "2")]),
            Entry(realtime: now - 60 * second, boot: boot, [("_SYSTEMD_UNIT", "other.service"), ("_PID", "200"), ("PRIORITY", "3"),
                                                           ("MESSAGE", "another unit's error")]),
            Entry(realtime: now - 50 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "6"), ("MESSAGE", "schedule in effect"),
                                                                    ("VITRINE_LOGGER", "vitrine.show"), ("VITRINE_ENTRY", "fallback"),
                                                                    ("CODE_FILE", "ShowRunner/ShowRunner.swift"), ("CODE_LINE", "120")]),
            Entry(realtime: now - 40 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "7"), ("MESSAGE", "decoder detail"),
                                                                    ("VITRINE_LOGGER", "vitrine.decode")]),
            Entry(realtime: now - 30 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "4"), ("MESSAGE", "frame late"),
                                                                    ("VITRINE_LOGGER", "vitrine.render")]),
            Entry(realtime: now - 20 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "3"), ("MESSAGE", "item failed"),
                                                                    ("VITRINE_LOGGER", "vitrine.show"), ("VITRINE_ITEM", "3"),
                                                                    ("VITRINE_MEDIA", "/srv/a.mp4")]),
            Entry(realtime: now - 10 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "6"), ("MESSAGE", "item started"),
                                                                    ("VITRINE_LOGGER", "vitrine.show"), ("VITRINE_ITEM", "4")]),
            // The service manager about the unit (as journalctl -u shows it), and about another one.
            Entry(realtime: now - 8 * second, boot: boot, [("_SYSTEMD_UNIT", "init.scope"), ("_PID", "1"), ("UNIT", "other.service"),
                                                          ("SYSLOG_IDENTIFIER", "systemd"), ("PRIORITY", "6"), ("MESSAGE", "other.service: Started.")]),
            Entry(realtime: now - 7 * second, boot: boot, [("_SYSTEMD_UNIT", "init.scope"), ("_PID", "1"), ("UNIT", "vitrine.service"),
                                                          ("SYSLOG_IDENTIFIER", "systemd"), ("PRIORITY", "3"),
                                                          ("MESSAGE", "vitrine.service: Watchdog timeout (limit 30s)!")]),
            // Standard error under systemd (a crash's last words): no logger, no metadata.
            Entry(realtime: now - 5 * second, boot: boot, player + [("_PID", "300"), ("PRIORITY", "3"), ("MESSAGE", "Fatal error: out of frames")]),
        ]
    }

    /// This machine's boot ID.
    public static var currentBoot: String {
        guard let file = fopen("/proc/sys/kernel/random/boot_id", "r") else { return "" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 && $0 != 10 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            .replacingDashes()
    }

    /// Now, microseconds since 1970.
    public static var now: UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return UInt64(spec.tv_sec) * 1_000_000 + UInt64(spec.tv_nsec) / 1000
    }
}

extension String {
    fileprivate func replacingDashes() -> String { String(filter { $0 != "-" }) }
}
