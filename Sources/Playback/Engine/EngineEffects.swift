import MediaTime

/// Something an engine event asks for that must happen after the engine's lock is released:
/// calling out (events, observers, completions, the sinks), starting or stopping an item's
/// threads, waking the audio feeder.
enum EngineAction {
    /// Announces a player event.
    case emit(PlayerEvent)
    /// Calls a time observer (on its queue).
    case invoke(TimeObserver, at: MediaTime)
    /// Calls a seek's completion handler.
    case complete(@Sendable (Bool) -> Void, finished: Bool)
    /// Opens an item and starts its threads (idempotent).
    case prepare(PlayerItem)
    /// Stops an item's threads and releases its input, on the teardown queue.
    case release(PlayerItem)
    /// Pauses or resumes the audio sink.
    case pauseAudio(Bool)
    /// Drops what the audio sink holds (a seek of the current item).
    case flushAudio
    /// The audio feeder must look at the state again.
    case wakeFeeder
    /// Asks the audio sink to shift its sound so that `mediaTime` (the sink's timeline) is heard
    /// at `hostTime` (``AudioSink/align(mediaTime:atHostTime:)``).
    case alignAudio(mediaTime: MediaTime, hostTime: MediaTime)
    /// The clock follower's seek of the current item back onto its pinned timeline.
    case syncSeek(PlayerItem, target: MediaTime)
    /// Resamples the item's sound to play `1 + adjustment` times as fast.
    case compensateAudio(ItemPipeline, Double)
}

/// The outcome of one engine event: presentation-log records and actions, in the order they
/// happened, performed by ``PlayerCore`` once the lock is released (records first).
struct EngineEffects {
    var records: [PresentationRecord] = []
    var actions: [EngineAction] = []
    /// The presentation log's handler at the time of the event.
    var handler: (@Sendable (PresentationRecord) -> Void)?

    mutating func emit(_ event: PlayerEvent) { actions.append(.emit(event)) }

    /// A presentation-log event, when a log is attached.
    mutating func log(
        _ kind: PresentationEvent.Kind, itemIndex: Int, source: String, time: MediaTime?, at host: MediaTime, reason: String? = nil,
        error: MediaTime? = nil, adjustment: Double? = nil, wallClock: MediaTime? = nil
    ) {
        guard handler != nil else { return }
        var event = PresentationEvent(kind: kind, itemIndex: itemIndex, source: source, time: time, at: host, reason: reason)
        event.error = error
        event.adjustment = adjustment
        event.wallClockTime = wallClock
        records.append(.event(event))
    }
}
