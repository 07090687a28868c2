import ServiceLifecycle

/// What `/api/logs/stream` sends after the recent tail: each new line, and a heartbeat at a fixed
/// interval.
///
/// The heartbeat (an SSE comment) makes the server write to a quiet stream: a client that went
/// away is noticed at that write, so its handler and its ``LogRing`` subscription end within one
/// interval instead of at the next logged line, and proxies that close idle connections keep
/// the stream open.
enum LogStreamEvent: Sendable, Equatable {
    case line(LogRing.Line)
    case heartbeat

    /// Calls `body` with each line of `lines` (a ``LogRing/subscribe()``, taken before the tail was
    /// read so that no line falls between) and with a heartbeat every `interval`, until `body`
    /// throws, the task is cancelled or a graceful shutdown begins.
    ///
    /// The line forwarding and the heartbeat are child tasks of the caller's, so they run where
    /// the request handler runs (the inspector's `vitrine-inspect` thread, docs/architecture.md),
    /// never on the cooperative pool the player shares, and end with the call.
    static func forEach(_ lines: AsyncStream<LogRing.Line>, heartbeat interval: Duration,
                        _ body: (LogStreamEvent) async throws -> Void) async throws {
        let (events, continuation) = AsyncStream.makeStream(of: LogStreamEvent.self, bufferingPolicy: .bufferingNewest(1000))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await line in lines { continuation.yield(.line(line)) }
                continuation.finish()
            }
            group.addTask {
                while (try? await Task.sleep(for: interval)) != nil { continuation.yield(.heartbeat) }
            }
            defer { group.cancelAll() }
            for await event in events.cancelOnGracefulShutdown() { try await body(event) }
        }
    }
}
