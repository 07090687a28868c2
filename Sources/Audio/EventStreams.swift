import Threading

/// The subscribers of one kind of event (route changes, interruptions, a recorder's events): each
/// call of ``makeStream()`` hands out an `AsyncStream` that gets every event yielded from then on,
/// until it is dropped or ``finish()`` ends them all.
///
/// Its lock guards the subscribers alone and takes no other lock, so it may be used from inside
/// another lock (the output's state yields route changes under its own): no ordering to keep.
final class EventStreams<Element: Sendable>: Sendable {
    private struct Subscribers {
        var continuations: [Int: AsyncStream<Element>.Continuation] = [:]
        var next = 0
        var isFinished = false
    }

    /// Guards the continuations, the next id and whether ``finish()`` was called.
    private let subscribers = LockedValue(Subscribers())
    private let buffering: Int

    /// Streams that keep the newest `buffering` events for a slow reader.
    init(buffering: Int) {
        self.buffering = buffering
    }

    /// A stream of the events from now on; already finished when ``finish()`` was called.
    func makeStream() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .bufferingNewest(buffering))
        let id = subscribers.withLock { state -> Int? in
            guard !state.isFinished else { return nil }
            state.next += 1
            state.continuations[state.next] = continuation
            return state.next
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [subscribers] _ in subscribers.withLock { _ = $0.continuations.removeValue(forKey: id) } }
        return stream
    }

    /// Hands `event` to every stream.
    func yield(_ event: Element) {
        for continuation in subscribers.withLock({ Array($0.continuations.values) }) { continuation.yield(event) }
    }

    /// Ends every stream; later ones are finished at once.
    func finish() {
        let continuations = subscribers.withLock { state in
            state.isFinished = true
            defer { state.continuations.removeAll() }
            return Array(state.continuations.values)
        }
        // Outside the lock: finishing runs each stream's termination handler, which takes it.
        for continuation in continuations { continuation.finish() }
    }
}
