import SystemPackage
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a journal for async callers without blocking them: each read opens the journal, reads
/// and closes it on a thread of its own (`vitrine-journal`, in SCHED_IDLE like the inspector), so one
/// `sd_journal` only ever sees one thread. At most `maximumConcurrentReads` run at once; a read
/// asked for beyond that fails at once with `EBUSY` instead of queueing.
public final class JournalReader: Sendable {
    public let location: JournalLocation
    public let maximumConcurrentReads: Int
    /// Reads running now: taken by the caller, given back by the reading thread.
    private let running = LockedValue(0)

    public init(location: JournalLocation, maximumConcurrentReads: Int = 2) {
        self.location = location
        self.maximumConcurrentReads = maximumConcurrentReads
    }

    /// The entries `query` asks for (``Journal/read(_:)``).
    public func read(_ query: JournalQuery) async -> Result<JournalRecords, JournalError> {
        let location = location
        return await onThread { () throws(JournalError) in
            let journal = try Journal(location)
            return try journal.read(query)
        }
    }

    /// Whether the journal can be opened and read: the size of its files, or why not.
    public func check() async -> Result<UInt64, JournalError> {
        let location = location
        return await onThread { () throws(JournalError) in
            let journal = try Journal(location)
            return try journal.usage()
        }
    }

    private func onThread<Value: Sendable>(_ work: @escaping @Sendable () throws(JournalError) -> Value) async -> Result<Value, JournalError> {
        let limit = maximumConcurrentReads
        let admitted = running.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
        guard admitted else {
            return .failure(JournalError(operation: "read", errno: .resourceBusy,
                                         reason: "\(limit) journal reads are running already; ask again in a moment"))
        }
        let running = running
        return await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, JournalError>, Never>) in
            do throws(ThreadStartError) {
                _ = try NamedThread.start(name: "vitrine-journal") {
                    ThreadPriority.makeCurrentIdle()
                    let result = Result(catching: work)
                    running.withLock { $0 -= 1 }
                    continuation.resume(returning: result)
                }
            } catch {
                running.withLock { $0 -= 1 }
                continuation.resume(returning: .failure(JournalError(operation: "pthread_create", errno: Errno(rawValue: error.code),
                                                                     reason: error.description)))
            }
        }
    }
}
