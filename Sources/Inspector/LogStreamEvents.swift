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

    /// New lines of `ring` as they are logged, with a heartbeat every `interval`, until the
    /// stream is dropped or its iterating task is cancelled.
    static func events(of ring: LogRing, heartbeat interval: Duration) -> AsyncStream<LogStreamEvent> {
        let lines = ring.subscribe()
        let (events, continuation) = AsyncStream.makeStream(of: LogStreamEvent.self, bufferingPolicy: .bufferingNewest(1000))
        let forward = Task {
            for await line in lines { continuation.yield(.line(line)) }
            continuation.finish()
        }
        let beat = Task {
            while true {
                do { try await Task.sleep(for: interval) } catch { return }
                continuation.yield(.heartbeat)
            }
        }
        continuation.onTermination = { _ in
            forward.cancel()
            beat.cancel()
        }
        return events
    }
}
