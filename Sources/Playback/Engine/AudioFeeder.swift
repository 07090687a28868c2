import MediaSinks
import MediaTime
import Synchronization
import Threading

/// Which items' audio went to the sink since its last flush, and where in the sink's continuous
/// timeline: items follow each other without a flush, so the sink's media time is item time plus
/// the item's `offset`. Part of the engine's state: the clock reads it at every refresh.
struct AudioFeedLedger {
    struct Feed {
        var item: PlayerItem
        var offset: MediaTime
        /// The first sample enqueued, in item time (valid once ``started``).
        var start: MediaTime = .zero
        /// The end of what was enqueued, in item time.
        var end: MediaTime
        var started: Bool
    }

    /// The time of the first sample fed since the last flush, in the sink's timeline.
    var firstSample: MediaTime? {
        feeds.first(where: \.started).map { $0.start + $0.offset }
    }

    /// Bumped whenever the audio stream must restart (a seek, the rate entering or leaving 1, an
    /// item change that is not a natural advance): the feeder then flushes the sink.
    private(set) var generation = 0
    /// The items fed since the last flush, in order (the last eight).
    private(set) var feeds: [Feed] = []

    mutating func restart() { generation += 1 }

    /// The feed of `item` in the current generation, if its audio reached the sink.
    func feed(for item: PlayerItem) -> Feed? { feeds.last { $0.item === item && $0.started } }

    /// `item`'s audio now goes to the sink at `offset`, if `generation` is still current.
    mutating func register(_ item: PlayerItem, offset: MediaTime, generation: Int) {
        guard generation == self.generation else { return }
        feeds.append(Feed(item: item, offset: offset, end: .zero, started: false))
        if feeds.count > 8 { feeds.removeFirst(feeds.count - 8) }
    }

    /// What of `item` was enqueued now ends at `end`.
    mutating func enqueued(_ item: PlayerItem, from start: MediaTime, until end: MediaTime, generation: Int) {
        guard generation == self.generation, let index = feeds.lastIndex(where: { $0.item === item }) else { return }
        if !feeds[index].started { feeds[index].start = start }
        feeds[index].end = end
        feeds[index].started = true
    }

    /// After a flush: forgets every feed; returns the items whose beginning went out ahead of
    /// their turn (they must play it again when it comes).
    mutating func flushed(current: PlayerItem?) -> [PlayerItem] {
        defer { feeds.removeAll() }
        return feeds.filter { $0.started && $0.item !== current }.map(\.item)
    }
}

/// Who waits on the engine's lock.
enum EngineWaiter: Int, LockCondition {
    /// The audio feeder, for a change it must act on.
    case feeder
}

/// The engine's audio feeder: a thread that moves decoded audio into the audio sink, in order —
/// the current item's, then, as soon as it is all out, the next item's — so audio runs on across a
/// seam with no flush. Off rate 1 the audio is not played (muted; the display clock paces video).
///
/// It sleeps until there is audio to move or the engine signals a change (``wake()``): no polling.
final class AudioFeeder: Sendable {
    private let engine: ConditionLock<EngineState, EngineWaiter>
    private let sink: any AudioSink
    private let clock: any HostClock
    /// Counts the engine's signals; the feeder acts on the state it read after the count it saw.
    private let signals = Atomic<UInt64>(0)
    /// The pipeline whose decoded audio the feeder is waiting for, if any.
    private let waitingOn = LockedValue<ItemPipeline?>(nil)
    private let thread = LockedValue<NamedThread?>(nil)

    init(engine: ConditionLock<EngineState, EngineWaiter>, sink: any AudioSink, clock: any HostClock) {
        self.engine = engine
        self.sink = sink
        self.clock = clock
    }

    /// Starts the thread.
    func start() throws(ThreadStartError) {
        let started = try NamedThread.start(name: "vitrine-feeder") { [self] in run() }
        thread.withLock { $0 = started }
    }

    /// The engine's state changed in a way the feeder must see. Call after releasing its lock.
    func wake() {
        signals.add(1, ordering: .sequentiallyConsistent)
        // An empty critical section: a feeder between checking the count and sleeping is asleep
        // (waiting) once we hold the lock, so the broadcast reaches it.
        engine.withLock { _ in }
        engine.broadcast(.feeder)
        waitingOn.withLock { $0 }?.wakeConsumer()
    }

    /// Waits for the thread to end (the engine was invalidated and woke it).
    func join() { thread.withLock { $0.take() }?.join() }

    private struct Snapshot {
        var items: [PlayerItem]
        var generation: Int
        var rate: Double
        /// Failed items are held (``ActionAtItemFailure/hold``): audio never runs on past one.
        var holdsFailures: Bool
    }

    private func run() {
        var fedGeneration = -1
        var feeding: PlayerItem?
        var offset = MediaTime.zero
        var end = MediaTime.zero
        while true {
            let seen = signals.load(ordering: .sequentiallyConsistent)
            let snapshot: Snapshot? = engine.withLock { state in
                guard !state.invalidated else { return nil }
                return Snapshot(items: state.items, generation: state.audio.generation, rate: state.isEnded ? 0 : state.rate,
                                holdsFailures: state.actionAtItemFailure == .hold)
            }
            guard let snapshot else { return }
            /// Sleeps until the engine signals a change.
            func idle() {
                engine.withLock(waitingFor: .feeder, until: { _ in signals.load(ordering: .sequentiallyConsistent) != seen }) { _ in }
            }
            if snapshot.generation != fedGeneration {
                sink.flush()
                fedGeneration = snapshot.generation
                // Items whose beginning already went out must play it again when their turn comes.
                let fedAhead = engine.withLock { $0.audio.flushed(current: $0.items.first) }
                for item in fedAhead where snapshot.items.contains(where: { $0 === item }) { item.rewind() }
                feeding = nil
            }
            if feeding == nil || !snapshot.items.contains(where: { $0 === feeding }) {
                // Start after a flush, or go on without a gap when the item being fed has ended.
                guard let first = snapshot.items.first else {
                    feeding = nil
                    idle()
                    continue
                }
                offset = feeding == nil ? .zero : offset + end
                feeding = first
                end = .zero
                engine.withLock { $0.audio.register(first, offset: offset, generation: fedGeneration) }
            }
            // An item's sound starts when its first picture is decoded too (it is ready), not
            // before: a device that starts at once would otherwise put the picture's clock past
            // the first frames by the time they are decoded. The item's readiness wakes the feeder.
            guard let item = feeding, let pipeline = item.pipeline, snapshot.rate > 0, pipeline.audioEnabled,
                  item.status != .unknown
            else {
                idle()
                continue
            }
            waitingOn.withLock { $0 = pipeline }
            let taken = pipeline.takeAudio { signals.load(ordering: .sequentiallyConsistent) != seen }
            waitingOn.withLock { $0 = nil }
            guard let next = taken else {
                guard pipeline.audioFinished else { continue }
                // All of this item's audio is out: move on to the next item once it is ready.
                let held = snapshot.holdsFailures && pipeline.playbackFailure != nil
                if snapshot.rate == 1, !held, let index = snapshot.items.firstIndex(where: { $0 === item }),
                   let following = snapshot.items[(index + 1)...].first(where: { $0.status != .failed || snapshot.holdsFailures }),
                   following.status == .readyToPlay,
                   following.pipeline?.audioEnabled == true {
                    offset = offset + end
                    end = .zero
                    feeding = following
                    engine.withLock { $0.audio.register(following, offset: offset, generation: fedGeneration) }
                } else {
                    idle()
                }
                continue
            }
            if snapshot.rate != 1 {
                // Muted off 1.0: drop what the video clock has passed, without outrunning it (the
                // clock is what this waits for: a timed wait, cut short by any signal).
                let now = engine.withLock { $0.currentTime(at: clock.now()) }
                if next.presentationTime > now + MediaTime(value: 1, timescale: 2) {
                    engine.withLock(waitingFor: .feeder, until: { _ in signals.load(ordering: .sequentiallyConsistent) != seen },
                                    timeout: .milliseconds(20)) { _ in }
                }
                continue
            }
            let stillCurrent = engine.withLock { $0.audio.generation == fedGeneration && !$0.invalidated }
            guard stillCurrent else { continue }
            var shifted = next
            shifted.presentationTime = next.presentationTime + offset
            if sink.enqueue(shifted) {
                end = next.presentationTime + next.duration
                let fedEnd = end
                engine.withLock { $0.audio.enqueued(item, from: next.presentationTime, until: fedEnd, generation: fedGeneration) }
            }
        }
    }
}
