public import SystemPackage

/// Where the journal's files are.
public enum JournalLocation: Sendable, Hashable, CustomStringConvertible {
    /// This machine's system journal (`/run/log/journal`, `/var/log/journal`): `sd_journal_open`
    /// with `SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM`.
    case localSystem
    /// The journal files in one directory (`sd_journal_open_directory`): a copy of another
    /// machine's journal, `systemd-journal-remote`'s output, tests.
    case directory(FilePath)

    public var description: String {
        switch self {
        case .localSystem: "the system journal"
        case .directory(let path): "the journal in \(path)"
        }
    }
}

/// Which entries to read: those of one unit, optionally of one boot, at a priority or more urgent,
/// at or after a time, the newest `limit` of them.
public struct JournalQuery: Sendable, Hashable {
    /// Which boot's entries.
    public enum Boot: Sendable, Hashable {
        case all
        /// The running boot (`/proc/sys/kernel/random/boot_id`; where a sandbox hides it, the boot
        /// of this process's newest entry).
        case current
        /// A boot ID, 32 lower-case hexadecimal digits.
        case id(String)
    }

    /// `_SYSTEMD_UNIT`; `nil` reads every unit's entries.
    public var unit: String?
    /// Syslog priority, 0 (emergency) … 7 (debug): entries at this priority or more urgent. Entries
    /// without a `PRIORITY` field are left out when it is set (as `journalctl -p` does).
    public var maximumPriority: Int?
    /// Entries whose realtime timestamp is at or after this, microseconds since 1970 (UTC).
    public var sinceRealtime: UInt64?
    /// Entries whose journal sequence number (the cursor's `i=`) is above this.
    public var afterSequenceNumber: UInt64?
    public var boot: Boot
    /// The newest entries to return, at most.
    public var limit: Int
    /// A read stops after this long with what it has (``JournalRecords/complete`` is then false).
    public var timeBudget: Duration
    /// Fields returned in ``JournalRecord/fields`` besides the named ones: those whose names start
    /// with one of these (the player's `VITRINE_*` fields, the `CODE_*` location).
    public var fieldPrefixes: [String]

    public init(unit: String? = "vitrine.service", maximumPriority: Int? = nil, sinceRealtime: UInt64? = nil,
                afterSequenceNumber: UInt64? = nil, boot: Boot = .all, limit: Int = 500, timeBudget: Duration = .seconds(2),
                fieldPrefixes: [String] = ["VITRINE_", "CODE_"]) {
        self.unit = unit
        self.maximumPriority = maximumPriority
        self.sinceRealtime = sinceRealtime
        self.afterSequenceNumber = afterSequenceNumber
        self.boot = boot
        self.limit = limit
        self.timeBudget = timeBudget
        self.fieldPrefixes = fieldPrefixes
    }
}

/// One journal entry.
public struct JournalRecord: Sendable, Hashable {
    /// `__REALTIME_TIMESTAMP`: microseconds since 1970 (UTC).
    public var realtimeMicroseconds: UInt64
    /// The entry's cursor: where it is, exactly (`journalctl --cursor=`).
    public var cursor: String
    /// `PRIORITY` (0 emergency … 7 debug), when the entry has one.
    public var priority: Int?
    /// `MESSAGE` (invalid UTF-8 repaired; at most the data threshold, 64 KiB).
    public var message: String
    /// `_BOOT_ID`, `_PID`, `_SYSTEMD_UNIT`, `SYSLOG_IDENTIFIER`.
    public var bootID: String?
    public var pid: Int?
    public var unit: String?
    public var syslogIdentifier: String?
    /// The other fields asked for (``JournalQuery/fieldPrefixes``), by name: `VITRINE_LOGGER`,
    /// `VITRINE_ITEM`, `CODE_FILE`, …
    public var fields: [String: String]

    public init(realtimeMicroseconds: UInt64, cursor: String, priority: Int? = nil, message: String = "", bootID: String? = nil,
                pid: Int? = nil, unit: String? = nil, syslogIdentifier: String? = nil, fields: [String: String] = [:]) {
        self.realtimeMicroseconds = realtimeMicroseconds
        self.cursor = cursor
        self.priority = priority
        self.message = message
        self.bootID = bootID
        self.pid = pid
        self.unit = unit
        self.syslogIdentifier = syslogIdentifier
        self.fields = fields
    }

    /// The journal's sequence number of the entry (the cursor's `i=`, hexadecimal there): it grows
    /// along one journal (the cursor's `s=`) across runs and boots, with gaps where other units logged.
    public var sequenceNumber: UInt64? {
        for part in cursor.split(separator: ";") where part.hasPrefix("i=") {
            return UInt64(part.dropFirst(2), radix: 16)
        }
        return nil
    }
}

/// What a read found: the entries, oldest first.
public struct JournalRecords: Sendable, Hashable {
    public var records: [JournalRecord]
    /// False when the read stopped at its time budget: older matching entries may exist.
    public var complete: Bool

    public init(records: [JournalRecord], complete: Bool) {
        self.records = records
        self.complete = complete
    }
}
