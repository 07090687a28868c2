import FoundationEssentials
public import Logging
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The player's recent log lines, kept in memory for the inspector (`/api/logs`, `/api/logs/stream`):
/// the newest lines up to a byte budget, each with a sequence number so a client can ask for what
/// came after the last line it saw. New lines are also handed to live subscribers.
public final class LogRing: Sendable {
    /// One log line. A stable interface (`/api/logs`): fields are only added.
    public struct Line: Codable, Sendable, Hashable {
        /// Counts lines since the player started, from 1.
        public var sequence: Int
        /// When, nanoseconds since 1970 (UTC).
        public var timeNanoseconds: Int64
        /// `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`.
        public var level: String
        /// The logger's label (`vitrine.show`).
        public var label: String
        public var message: String
        public var metadata: [String: String]
        /// Journal lines only (`source=journal`): the entry's cursor, its boot's ID and the
        /// process that wrote it.
        public var cursor: String? = nil
        public var boot: String? = nil
        public var pid: Int? = nil

        public init(sequence: Int, timeNanoseconds: Int64, level: String, label: String, message: String, metadata: [String: String],
                    cursor: String? = nil, boot: String? = nil, pid: Int? = nil) {
            self.sequence = sequence
            self.timeNanoseconds = timeNanoseconds
            self.level = level
            self.label = label
            self.message = message
            self.metadata = metadata
            self.cursor = cursor
            self.boot = boot
            self.pid = pid
        }
    }

    private struct State {
        var lines: [Line] = []
        var first = 0
        var bytes = 0
        var next = 1
        var subscribers: [Int: AsyncStream<Line>.Continuation] = [:]
        var nextSubscriber = 0
    }

    /// The kept lines, their byte count and the live subscribers: appended to by every logging
    /// thread, read by the inspector's event loop.
    private let state = LockedValue(State())
    /// The byte budget (message and metadata text).
    public let capacity: Int

    public init(capacity: Int = 4 << 20) {
        self.capacity = capacity
    }

    func append(level: Logger.Level, label: String, message: String, metadata: [String: String]) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let time = Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
        let subscribers: [AsyncStream<Line>.Continuation] = state.withLock { state in
            let line = Line(sequence: state.next, timeNanoseconds: time, level: level.rawValue, label: label, message: message, metadata: metadata)
            state.next += 1
            state.lines.append(line)
            state.bytes += Self.size(line)
            while state.bytes > capacity, state.first < state.lines.count - 1 {
                state.bytes -= Self.size(state.lines[state.first])
                state.first += 1
            }
            if state.first > 4096 {
                state.lines.removeFirst(state.first)
                state.first = 0
            }
            return state.subscribers.values.map { continuation in
                continuation.yield(line)
                return continuation
            }
        }
        _ = subscribers
    }

    /// The lines after `sequence` at `minimumLevel` or above, logged at or after `notBefore`
    /// (nanoseconds since 1970) when given, the newest `limit` of them.
    public func lines(after sequence: Int = 0, minimumLevel: Logger.Level = .trace, limit: Int = 1000, notBefore: Int64? = nil) -> [Line] {
        state.withLock { state in
            let kept = state.lines[state.first...].filter {
                $0.sequence > sequence && (Logger.Level(rawValue: $0.level) ?? .trace) >= minimumLevel && $0.timeNanoseconds >= notBefore ?? .min
            }
            return Array(kept.suffix(max(0, limit)))
        }
    }

    /// New lines as they are logged, until the stream is dropped.
    public func subscribe() -> AsyncStream<Line> {
        let (stream, continuation) = AsyncStream.makeStream(of: Line.self, bufferingPolicy: .bufferingNewest(1000))
        let id = state.withLock { state in
            defer { state.nextSubscriber += 1 }
            state.subscribers[state.nextSubscriber] = continuation
            return state.nextSubscriber
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    private static func size(_ line: Line) -> Int {
        line.message.utf8.count + line.label.utf8.count + line.metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count } + 64
    }
}

/// A swift-log handler that writes into a ``LogRing`` (combine it with the journal's handler
/// through `MultiplexLogHandler`).
public struct LogRingHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    private let ring: LogRing
    private let label: String

    public init(label: String, ring: LogRing) {
        self.label = label
        self.ring = ring
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let extra = event.metadata { merged.merge(extra) { $1 } }
        ring.append(level: event.level, label: label, message: event.message.description,
                    metadata: merged.mapValues { "\($0)" })
    }
}
