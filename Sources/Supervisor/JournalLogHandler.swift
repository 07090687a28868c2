public import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A swift-log handler for the systemd journal: under systemd (`JOURNAL_STREAM` set, or the
/// journal's socket present while standard error is not a terminal) each message is one native
/// journal entry — `MESSAGE`, `PRIORITY`,
/// `SYSLOG_IDENTIFIER`, `CODE_FILE`/`CODE_LINE`/`CODE_FUNC`, the logger's label and every metadata
/// value as an upper-case field (`entry` → `VITRINE_ENTRY`, `item` → `VITRINE_ITEM`,
/// `media` → `VITRINE_MEDIA`) — so `journalctl -o verbose VITRINE_MEDIA=/srv/a.mp4` finds it.
/// Elsewhere (a terminal, a test) it writes plain lines to standard error: a UTC timestamp, the
/// level, the label, the message and the metadata.
public struct JournalLogHandler: LogHandler {
    /// Where native entries go; `nil` writes plain lines.
    public let socketPath: String?
    public let label: String
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    /// The journal's socket.
    public static let defaultSocketPath = "/run/systemd/journal/socket"

    /// The handler for this process: native entries when the journal is there, plain lines otherwise.
    public static func standard(label: String) -> JournalLogHandler {
        let underJournal = getenv("JOURNAL_STREAM") != nil || (isatty(2) == 0 && access(defaultSocketPath, W_OK) == 0)
        return JournalLogHandler(label: label, socketPath: underJournal ? defaultSocketPath : nil)
    }

    public init(label: String, socketPath: String?) {
        self.label = label
        self.socketPath = socketPath
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { $1 } }
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        if let socketPath {
            let entry = Self.entry(event: event, label: label, metadata: merged)
            if SystemdNotifier.sendDatagram(entry, to: socketPath) { return }
        }
        // Plain text: one line, the metadata after the message.
        var line = "\(Self.timestamp()) \(event.level) \(label): \(event.message)"
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += "\n"
        _ = line.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
    }

    /// Now in UTC, to the second: `2026-11-24T21:45:05Z`.
    static func timestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The syslog priority of a level (0 emergency … 7 debug).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A journal field name for a metadata key: `VITRINE_` and the key in upper case, every
    /// character that is not A–Z, 0–9 or `_` replaced by `_` (the journal's rule).
    static func fieldName(_ key: String) -> String {
        let cleaned = key.uppercased().unicodeScalars.map { scalar -> Character in
            (("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_") ? Character(scalar) : "_"
        }
        return "VITRINE_" + String(cleaned)
    }

    /// The native protocol's datagram: `KEY=value\n` for single-line values; for a value with a
    /// newline, `KEY\n`, its length as 64-bit little endian, the value and `\n`.
    static func entry(event: LogEvent, label: String, metadata: Logger.Metadata) -> [UInt8] {
        var fields: [(String, String)] = [
            ("MESSAGE", "\(event.message)"),
            ("PRIORITY", String(priority(event.level))),
            ("SYSLOG_IDENTIFIER", "vitrine"),
            ("VITRINE_LOGGER", label),
            ("CODE_FILE", event.file),
            ("CODE_LINE", String(event.line)),
            ("CODE_FUNC", event.function),
        ]
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) { fields.append((fieldName(key), "\(value)")) }
        var bytes: [UInt8] = []
        for (name, value) in fields {
            bytes += Array(name.utf8)
            let valueBytes = Array(value.utf8)
            if valueBytes.contains(UInt8(ascii: "\n")) {
                bytes.append(UInt8(ascii: "\n"))
                var length = UInt64(valueBytes.count).littleEndian
                withUnsafeBytes(of: &length) { bytes += $0 }
                bytes += valueBytes
            } else {
                bytes.append(UInt8(ascii: "="))
                bytes += valueBytes
            }
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }
}
