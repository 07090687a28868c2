public import Logging
public import SystemJournal
import Threading

/// The player's lines in the systemd journal, for `/api/logs?source=journal`: earlier runs and
/// boots too, not only what the in-process ring still holds. Each read happens on a
/// `vitrine-journal` thread of its own (``JournalReader``), never on the inspector's event loop.
public final class JournalLogs: Sendable {
    public let reader: JournalReader
    /// The unit whose entries are read (`_SYSTEMD_UNIT`).
    public let unit: String

    /// What the last read or check found, for `/api/status`.
    private struct Known {
        var problem: String?
        var when: ContinuousClock.Instant
    }

    /// The last read's or check's outcome and whether a check is running: written by the requests
    /// that read the journal (after their thread answers), read by `/api/status`.
    private let known = LockedValue<(last: Known?, checking: Bool)>((nil, false))

    /// How long a check's answer stands before `/api/status` asks for a new one.
    static let checkInterval: Duration = .seconds(60)

    public init(location: JournalLocation, unit: String) {
        reader = JournalReader(location: location)
        self.unit = unit
    }

    /// The lines a request asks for, oldest first, and whether the read finished within its time budget.
    public func lines(minimumLevel: Logger.Level, sinceNanoseconds: Int64?, afterSequence: Int, boot: JournalQuery.Boot,
                      limit: Int) async -> Result<(lines: [LogRing.Line], complete: Bool), JournalError> {
        let query = JournalQuery(unit: unit, maximumPriority: Self.maximumPriority(minimumLevel),
                                 sinceRealtime: sinceNanoseconds.map { UInt64(max(0, $0)) / 1000 },
                                 afterSequenceNumber: afterSequence > 0 ? UInt64(afterSequence) : nil,
                                 boot: boot, limit: limit, fieldPrefixes: ["VITRINE_"])
        let result = await reader.read(query)
        remember(result.map { _ in () })
        return result.map { found in (found.records.map(Self.line), found.complete) }
    }

    /// Whether the journal could be read when last tried (`nil` before the first try ends), and
    /// why not. Cheap: it never opens the journal itself, but starts a check in the background
    /// when the last answer is older than a minute.
    public func readability() -> (readable: Bool, problem: String?)? {
        let (last, startCheck) = known.withLock { known -> (Known?, Bool) in
            let stale = known.last.map { ContinuousClock.now - $0.when > Self.checkInterval } ?? true
            let start = stale && !known.checking
            if start { known.checking = true }
            return (known.last, start)
        }
        if startCheck {
            Task {
                let result = await reader.check()
                remember(result.map { _ in () })
                known.withLock { $0.checking = false }
            }
        }
        return last.map { ($0.problem == nil, $0.problem) }
    }

    private func remember(_ outcome: Result<Void, JournalError>) {
        // Too many reads at once says nothing about whether the journal is readable.
        if case .failure(let error) = outcome, error.errno == .resourceBusy { return }
        let problem: String? = switch outcome {
        case .success: nil
        case .failure(let error): error.description
        }
        known.withLock { $0.last = Known(problem: problem, when: .now) }
    }

    /// The most urgent syslog priority a level's lines have, as a filter: `warning` → 4 (warning
    /// and above); `trace` and `debug` filter nothing.
    static func maximumPriority(_ level: Logger.Level) -> Int? {
        switch level {
        case .trace, .debug: nil
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A syslog priority as a swift-log level: 7 debug, 6 info, 5 notice, 4 warning, 3 error, 0–2
    /// critical; an entry without one is `info` (journald's default).
    static func level(priority: Int?) -> Logger.Level {
        switch priority {
        case 7: .debug
        case 5: .notice
        case 4: .warning
        case 3: .error
        case .some(0...2): .critical
        default: .info
        }
    }

    /// A journal entry as a log line: the label from `VITRINE_LOGGER` (else the syslog identifier,
    /// else the unit), the metadata from the other `VITRINE_*` fields with their keys in lower case
    /// (`VITRINE_ITEM` → `item`), `sequence` the journal's sequence number.
    static func line(_ record: JournalRecord) -> LogRing.Line {
        var metadata: [String: String] = [:]
        for (name, value) in record.fields where name.hasPrefix("VITRINE_") && name != "VITRINE_LOGGER" {
            metadata[String(name.dropFirst("VITRINE_".count)).lowercased()] = value
        }
        return LogRing.Line(
            sequence: Int(clamping: record.sequenceNumber ?? 0),
            timeNanoseconds: Int64(min(record.realtimeMicroseconds, UInt64(Int64.max / 1000))) * 1000,
            level: level(priority: record.priority).rawValue,
            label: record.fields["VITRINE_LOGGER"] ?? record.syslogIdentifier ?? record.unit ?? "",
            message: record.message, metadata: metadata,
            cursor: record.cursor, boot: record.bootID, pid: record.pid)
    }
}
