import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the player remembers across restarts, crashes and power cuts.
public struct PersistedState: Codable, Sendable, Hashable {
    /// Times the player started.
    public var starts = 0
    /// Times a run ended without an orderly stop (a crash, `kill -9`, a watchdog kill, power lost):
    /// a restart loop shows here.
    public var uncleanEnds = 0
    /// Whether a run is going on (set at start, cleared by the orderly stop).
    public var running = false
    /// Items in a row that failed for good (the supervisor's count).
    public var consecutiveFailedItems = 0
    /// The programme choice last played (the winning entry's name, or "fallback"), if known.
    public var scheduleChoice: String?
    /// Retries of failed or stalled items, in total.
    public var itemRetries = 0
    /// Items given up on (their retries spent), in total.
    public var skippedItems = 0
    /// Times the fallback playlist took over, in total.
    public var fallbacks = 0
    /// Times the playback pipeline was rebuilt inside the process, in total.
    public var pipelineRebuilds = 0
    /// The last fault the supervisor handled, in words.
    public var lastFault: String?

    public init() {}

    /// Reads a state written by this or an earlier version: a field it lacks takes its default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        starts = try container.decodeIfPresent(Int.self, forKey: .starts) ?? 0
        uncleanEnds = try container.decodeIfPresent(Int.self, forKey: .uncleanEnds) ?? 0
        running = try container.decodeIfPresent(Bool.self, forKey: .running) ?? false
        consecutiveFailedItems = try container.decodeIfPresent(Int.self, forKey: .consecutiveFailedItems) ?? 0
        scheduleChoice = try container.decodeIfPresent(String.self, forKey: .scheduleChoice)
        itemRetries = try container.decodeIfPresent(Int.self, forKey: .itemRetries) ?? 0
        skippedItems = try container.decodeIfPresent(Int.self, forKey: .skippedItems) ?? 0
        fallbacks = try container.decodeIfPresent(Int.self, forKey: .fallbacks) ?? 0
        pipelineRebuilds = try container.decodeIfPresent(Int.self, forKey: .pipelineRebuilds) ?? 0
        lastFault = try container.decodeIfPresent(String.self, forKey: .lastFault)
    }
}

/// Why the state could not be read or written.
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var operation: String
    public var code: Int32

    public var description: String { "\(path): cannot \(operation): \(String(cString: strerror(code)))" }
}

/// The state file in the state directory, written atomically: the new contents go to a temporary
/// file, which is flushed to the disk (`fsync`) and renamed over the old one, and the directory is
/// flushed too, so after a power cut the file is the old state or the new one, never half of each.
public struct StateStore: Sendable {
    public let directory: String
    public var path: String { directory + "/state.json" }

    public init(directory: String) {
        self.directory = directory
    }

    /// The state saved last; a fresh state when there is none (first start) or it cannot be parsed.
    public func load() throws(StateStoreError) -> PersistedState {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor < 0 {
            if errno == ENOENT { return PersistedState() }
            throw StateStoreError(path: path, operation: "read the state", code: errno)
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 { throw StateStoreError(path: path, operation: "read the state", code: errno) }
            if count == 0 { break }
            bytes += chunk.prefix(count)
        }
        return (try? JSONDecoder().decode(PersistedState.self, from: Data(bytes))) ?? PersistedState()
    }

    /// Replaces the saved state with `state`, atomically and durably.
    public func save(_ state: PersistedState) throws(StateStoreError) {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw StateStoreError(path: directory, operation: "create the state directory", code: errno)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(state) else { return }
        let temporary = path + ".new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StateStoreError(path: temporary, operation: "write the state", code: errno) }
        var failure: Int32 = 0
        let bytes = [UInt8](data) + [UInt8(ascii: "\n")]
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += written
        }
        if failure == 0 && fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw StateStoreError(path: path, operation: "write the state", code: failure)
        }
        // The rename itself must reach the disk.
        let folder = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }
}
