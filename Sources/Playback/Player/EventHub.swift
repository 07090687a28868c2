import Synchronization
import Threading

/// Fans events out to any number of `AsyncStream`s: the Swift analogue of key-value observing.
///
/// Each call to ``stream()`` is one subscriber; it sees the events emitted after it subscribed,
/// buffered without limit so a slow reader never blocks the engine.
final class EventHub<Event: Sendable>: Sendable {
    private let subscribers = LockedValue<[Int: AsyncStream<Event>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func stream() -> AsyncStream<Event> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        let (stream, continuation) = AsyncStream<Event>.makeStream()
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
        }
        subscribers.withLock { $0[id] = continuation }
        return stream
    }

    func emit(_ event: Event) {
        let all = subscribers.withLock { Array($0.values) }
        for continuation in all { continuation.yield(event) }
    }

    /// Ends every subscriber's stream.
    func finish() {
        let all = subscribers.withLock { state in
            defer { state.removeAll() }
            return Array(state.values)
        }
        for continuation in all { continuation.finish() }
    }
}
