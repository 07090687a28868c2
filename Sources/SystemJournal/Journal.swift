internal import CSystemd
import SystemPackage
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One open journal: an `sd_journal`, closed when the value ends.
///
/// sd-journal objects are not thread-safe. This value is neither copyable nor `Sendable`: it has
/// one owner, which opens it, reads and closes it on one thread (``JournalReader`` does that on a
/// thread of its own per read). Field data is looked at where sd-journal keeps it (valid until
/// the next call on the journal) and copied only for the fields a record keeps.
public struct Journal: ~Copyable {
    private let handle: OpaquePointer
    public let location: JournalLocation

    /// The largest field value read, in bytes; longer ones are cut (`sd_journal_set_data_threshold`).
    public static let dataThreshold = 64 * 1024

    /// Opens the journal at `location`. Throws when it cannot be opened, and when not one of its
    /// files could be read: `ENOENT` when there are none (not running under systemd, a missing or
    /// empty directory), `EACCES` when there are some this user may not read.
    public init(_ location: JournalLocation) throws(JournalError) {
        var opened: OpaquePointer?
        let result: Int32
        let operation: String
        switch location {
        case .localSystem:
            operation = "sd_journal_open"
            result = sd_journal_open(&opened, Int32(SD_JOURNAL_LOCAL_ONLY | SD_JOURNAL_SYSTEM))
        case .directory(let path):
            operation = "sd_journal_open_directory"
            result = path.withPlatformString { sd_journal_open_directory(&opened, $0, 0) }
        }
        guard result >= 0, let opened else {
            let path: FilePath? = if case .directory(let path) = location { path } else { nil }
            let errno = Errno(rawValue: -result)
            let reason = errno == .noSuchFileOrDirectory ? "\(location) cannot be read: \(path.map { "\($0)" } ?? "it") does not exist" : nil
            throw JournalError(operation: operation, result: result, path: path, reason: reason)
        }
        _ = sd_journal_set_data_threshold(opened, Self.dataThreshold)
        var bytes: UInt64 = 0
        if sd_journal_get_usage(opened, &bytes) >= 0, bytes == 0 {
            sd_journal_close(opened)
            throw Self.whyNoFiles(location)
        }
        handle = opened
        self.location = location
    }

    deinit {
        sd_journal_close(handle)
    }

    /// The size of the journal files opened, in bytes.
    public func usage() throws(JournalError) -> UInt64 {
        var bytes: UInt64 = 0
        try check(sd_journal_get_usage(handle, &bytes), "sd_journal_get_usage")
        return bytes
    }

    /// The entries `query` asks for, oldest first: from the newest backwards until `limit` are
    /// found, an entry is older than `sinceRealtime` or not after `afterSequenceNumber`, or the
    /// time budget is spent. The work is bounded by `limit` entries read (sd-journal finds matching
    /// entries through its indexes, not by reading the others).
    public func read(_ query: JournalQuery) throws(JournalError) -> JournalRecords {
        let started = ContinuousClock.now
        let boot: String?
        switch query.boot {
        case .all: boot = nil
        case .id(let id): boot = id
        case .current: boot = try currentBoot(unit: query.unit)
        }
        sd_journal_flush_matches(handle)
        if let unit = query.unit {
            // As `journalctl -u`: the unit's own lines, or what the service manager (PID 1) said
            // about it (started, killed by the watchdog, restarted), or a core dump of it.
            try addMatch("_SYSTEMD_UNIT", unit)
            try check(sd_journal_add_disjunction(handle), "sd_journal_add_disjunction")
            try addMatch("_PID", "1")
            try addMatch("UNIT", unit)
            try check(sd_journal_add_disjunction(handle), "sd_journal_add_disjunction")
            try addMatch("COREDUMP_UNIT", unit)
            // And then (AND) the priority and the boot.
            try check(sd_journal_add_conjunction(handle), "sd_journal_add_conjunction")
        }
        if let maximum = query.maximumPriority {
            // The same field matched several times: any of the values (OR).
            for priority in 0...min(max(maximum, 0), 7) { try addMatch("PRIORITY", String(priority)) }
        }
        if let boot { try addMatch("_BOOT_ID", boot) }
        try check(sd_journal_seek_tail(handle), "sd_journal_seek_tail")
        var records: [JournalRecord] = []
        var complete = true
        while records.count < max(query.limit, 0) {
            let moved = sd_journal_previous(handle)
            try check(moved, "sd_journal_previous")
            if moved == 0 { break }
            var realtime: UInt64 = 0
            try check(sd_journal_get_realtime_usec(handle, &realtime), "sd_journal_get_realtime_usec")
            if let since = query.sinceRealtime, realtime < since { break }
            let record = try currentRecord(realtime: realtime, prefixes: query.fieldPrefixes)
            if let after = query.afterSequenceNumber, let sequence = record.sequenceNumber, sequence <= after { break }
            records.append(record)
            if records.count % 64 == 0, ContinuousClock.now - started > query.timeBudget {
                complete = false
                break
            }
        }
        return JournalRecords(records: records.reversed(), complete: complete)
    }

    /// The boot ID of `pid`'s newest entry (of `unit`, when given), if it has one.
    public func bootID(ofProcess pid: Int32, unit: String?) throws(JournalError) -> String? {
        sd_journal_flush_matches(handle)
        try addMatch("_PID", String(pid))
        if let unit { try addMatch("_SYSTEMD_UNIT", unit) }
        try check(sd_journal_seek_tail(handle), "sd_journal_seek_tail")
        let moved = sd_journal_previous(handle)
        try check(moved, "sd_journal_previous")
        guard moved > 0 else { return nil }
        var data: UnsafeRawPointer?
        var length = 0
        guard sd_journal_get_data(handle, "_BOOT_ID", &data, &length) >= 0, let data else { return nil }
        return Self.value(UnsafeRawBufferPointer(start: data, count: length), after: "_BOOT_ID".utf8.count + 1)
    }

    /// The running boot's ID (`sd_id128_get_boot`, from `/proc/sys/kernel/random/boot_id`).
    public static func currentBootID() throws(JournalError) -> String {
        var id = sd_id128_t()
        let result = sd_id128_get_boot(&id)
        guard result >= 0 else { throw JournalError(operation: "sd_id128_get_boot", result: result) }
        var text = [CChar](repeating: 0, count: 33)
        _ = sd_id128_to_string(id, &text)
        return String(decoding: text.prefix(32).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The systemd unit `pid` belongs to (`sd_pid_get_unit`, from its cgroup), if any.
    public static func unit(ofProcess pid: Int32) -> String? {
        var unit: UnsafeMutablePointer<CChar>?
        guard sd_pid_get_unit(pid, &unit) >= 0, let unit else { return nil }
        defer { free(unit) }
        return String(cString: unit)
    }

    // MARK: -

    /// The running boot: from the kernel, else (a sandbox with `ProcSubset=pid` hides
    /// `/proc/sys`) the boot of this process's newest entry.
    private func currentBoot(unit: String?) throws(JournalError) -> String {
        let kernel: JournalError
        do {
            return try Self.currentBootID()
        } catch {
            kernel = error
        }
        if let boot = try bootID(ofProcess: getpid(), unit: unit) { return boot }
        throw JournalError(operation: kernel.operation, errno: kernel.errno,
                           reason: "the current boot is unknown: \(kernel.reason), and this process has no entry in \(location)")
    }

    private func addMatch(_ field: String, _ value: String) throws(JournalError) {
        let match = "\(field)=\(value)"
        try check(match.withCString { sd_journal_add_match(handle, $0, 0) }, "sd_journal_add_match \(match)")
    }

    private func check(_ result: Int32, _ operation: String) throws(JournalError) {
        if result < 0 { throw JournalError(operation: operation, result: result) }
    }

    /// The entry the journal is at: one pass over its fields, each seen in place.
    private func currentRecord(realtime: UInt64, prefixes: [String]) throws(JournalError) -> JournalRecord {
        var cursorText: UnsafeMutablePointer<CChar>?
        try check(sd_journal_get_cursor(handle, &cursorText), "sd_journal_get_cursor")
        let cursor = cursorText.map { String(cString: $0) } ?? ""
        free(cursorText)
        var record = JournalRecord(realtimeMicroseconds: realtime, cursor: cursor)
        let prefixBytes = prefixes.map { Array($0.utf8) }
        sd_journal_restart_data(handle)
        var data: UnsafeRawPointer?
        var length = 0
        while true {
            // Fields sd-journal cannot decompress are skipped rather than failing the entry.
            let result = sd_journal_enumerate_available_data(handle, &data, &length)
            try check(result, "sd_journal_enumerate_available_data")
            guard result > 0, let data else { break }
            record.take(UnsafeRawBufferPointer(start: data, count: length), prefixes: prefixBytes)
        }
        return record
    }

    /// The text after `offset` bytes (`FIELD=`), with invalid UTF-8 repaired.
    static func value(_ field: UnsafeRawBufferPointer, after offset: Int) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: field[min(offset, field.count)...]), as: UTF8.self)
    }

    /// Why a journal opened without a single readable file.
    private static func whyNoFiles(_ location: JournalLocation) -> JournalError {
        let directories: [String]
        switch location {
        case .localSystem: directories = ["/run/log/journal", "/var/log/journal"]
        case .directory(let path): directories = [path.string]
        }
        for directory in directories {
            if let unreadable = JournalFiles.firstUnreadable(in: directory, depth: location == .localSystem ? 1 : 0) {
                return JournalError(operation: "open", errno: .permissionDenied, path: FilePath(unreadable),
                                    reason: "\(location) cannot be read: \(unreadable) is not readable by this user (it needs the systemd-journal group)")
            }
        }
        let reason = switch location {
        case .localSystem: "the system journal has no files in /run/log/journal or /var/log/journal: is this machine running systemd-journald?"
        case .directory(let path): "\(path) holds no journal files"
        }
        return JournalError(operation: "sd_journal_get_usage", errno: .noSuchFileOrDirectory, reason: reason)
    }
}

extension JournalRecord {
    /// Keeps `field` (`NAME=value`, borrowed from sd-journal) if it is one a record holds.
    mutating func take(_ field: UnsafeRawBufferPointer, prefixes: [[UInt8]]) {
        guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { return }
        let name = UnsafeRawBufferPointer(rebasing: field[..<equals])
        func named(_ text: StaticString) -> Bool {
            name.elementsEqual(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        let value = { Journal.value(field, after: equals + 1) }
        if named("MESSAGE") {
            message = value()
        } else if named("PRIORITY") {
            priority = Int(value())
        } else if named("_BOOT_ID") {
            bootID = value()
        } else if named("_PID") {
            pid = Int(value())
        } else if named("_SYSTEMD_UNIT") {
            unit = value()
        } else if named("SYSLOG_IDENTIFIER") {
            syslogIdentifier = value()
        } else if prefixes.contains(where: { $0.count <= name.count && name.starts(with: $0) }) {
            fields[String(decoding: name, as: UTF8.self)] = value()
        }
    }
}

/// Looking for journal files this user may not open, to say why none could be read.
enum JournalFiles {
    /// The first `*.journal` file in `directory` (or, with `depth` 1, in its subdirectories, as
    /// journald keeps one per machine ID) that cannot be opened for lack of permission.
    static func firstUnreadable(in directory: String, depth: Int) -> String? {
        guard let stream = opendir(directory) else { return errno == EACCES ? directory : nil }
        defer { closedir(stream) }
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            let path = directory + "/" + name
            if name.hasSuffix(".journal") || name.hasSuffix(".journal~") {
                let descriptor = open(path, O_RDONLY | O_CLOEXEC)
                if descriptor >= 0 { close(descriptor) } else if errno == EACCES || errno == EPERM { return path }
            } else if depth > 0, entry.pointee.d_type == UInt8(DT_DIR) {
                if let found = firstUnreadable(in: path, depth: depth - 1) { return found }
            }
        }
        return nil
    }
}
