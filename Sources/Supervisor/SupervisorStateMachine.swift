public import MediaTime
public import Scheduling

/// The supervisor's decisions, as a state machine with no side effects: faults and progress come
/// in as events, what to do comes out as an ``Action`` for the owner to carry out. It applies a
/// schedule's `[restart]` policy exactly as Schedules/README.md describes it:
///
/// - a failing item is retried `retries` times, waiting `backoff`, then `backoff` ×
///   `backoff_multiplier` each time, never longer than `max_backoff`;
/// - once its retries are spent, `on_failure` applies: `skip` goes on with the next item,
///   `fallback` switches to the fallback playlist at once;
/// - after `fallback_after` consecutive items failed for good, the fallback playlist plays until
///   the next entry change, whatever `on_failure` says;
/// - an item that plays resets its retries and the run of consecutive failures.
///
/// Faults of the machinery rather than of an item (the display or the audio output gone, a
/// pipeline that stopped presenting) rebuild the pipeline inside the process; when rebuilding
/// fails, or keeps being needed (``maximumRebuilds`` within ``rebuildWindow``), the process exits
/// non-zero for systemd to restart it.
public struct SupervisorStateMachine: Sendable {
    /// Which item of which playlist: what a retry must play again.
    public struct ItemKey: Sendable, Hashable, CustomStringConvertible {
        public var playlist: String
        public var index: Int

        public init(playlist: String, index: Int) {
            self.playlist = playlist
            self.index = index
        }

        public var description: String { "\(playlist)[\(index)]" }
    }

    /// Something that went wrong.
    public enum Fault: Sendable, Hashable {
        /// The item could not be opened or decoded, or stopped playing before its end.
        case itemFailed(ItemKey, reason: String)
        /// No new frame for longer than the item needs while it plays.
        case stalled(ItemKey)
        /// The display can no longer present (flip time-out that re-initialising did not cure,
        /// the context lost for good).
        case displayFailed(reason: String)
        /// The audio output can no longer play.
        case audioFailed(reason: String)
    }

    /// What the owner must do.
    public enum Action: Sendable, Hashable {
        /// Play `item` again after `delay` (the screen keeps the last good picture meanwhile).
        case retry(ItemKey, attempt: Int, after: MediaTime)
        /// Give up on `item` and go on with the next one.
        case skip(ItemKey)
        /// Play the fallback playlist until the next entry change.
        case playFallback(reason: String)
        /// Build the player, display and audio output again, inside the process.
        case rebuildPipeline(reason: String)
        /// Nothing more can be done inside the process: exit non-zero, systemd restarts it.
        case exitForRestart(reason: String)
    }

    /// Where the show stands.
    public enum State: Sendable, Hashable {
        /// Playing the programme; `consecutiveFailures` items in a row failed for good.
        case following(consecutiveFailures: Int)
        /// Playing the fallback playlist until the next entry change.
        case onFallback
    }

    public let policy: RestartPolicy
    /// Rebuilds allowed within ``rebuildWindow`` before the process gives up.
    public let maximumRebuilds: Int
    public let rebuildWindow: MediaTime
    public private(set) var state: State = .following(consecutiveFailures: 0)
    /// Retries spent per item since it last played.
    public private(set) var attempts: [ItemKey: Int] = [:]
    /// When the pipeline was rebuilt recently (host times).
    public private(set) var rebuilds: [MediaTime] = []

    public init(policy: RestartPolicy, maximumRebuilds: Int = 3, rebuildWindow: MediaTime = MediaTime(value: 300, timescale: 1)) {
        self.policy = policy
        self.maximumRebuilds = maximumRebuilds
        self.rebuildWindow = rebuildWindow
    }

    /// A fault happened at host time `now`.
    public mutating func handle(_ fault: Fault, at now: MediaTime) -> Action {
        switch fault {
        case .itemFailed(let item, _), .stalled(let item):
            return itemFault(item)
        case .displayFailed(let reason), .audioFailed(let reason):
            rebuilds = rebuilds.filter { now - $0 < rebuildWindow }
            guard rebuilds.count < maximumRebuilds else {
                return .exitForRestart(reason: "\(reason); the pipeline was rebuilt \(rebuilds.count) times in \(Int(rebuildWindow.seconds)) s")
            }
            rebuilds.append(now)
            return .rebuildPipeline(reason: reason)
        }
    }

    private mutating func itemFault(_ item: ItemKey) -> Action {
        let spent = attempts[item, default: 0]
        if spent < policy.retries {
            attempts[item] = spent + 1
            return .retry(item, attempt: spent + 1, after: policy.delay(beforeRetry: spent + 1))
        }
        // Retries spent: the item failed for good.
        attempts[item] = nil
        switch state {
        case .onFallback:
            // The fallback itself fails: go on through it.
            return .skip(item)
        case .following(let failures):
            let run = failures + 1
            if run >= policy.fallbackAfter {
                state = .onFallback
                return .playFallback(reason: "\(run) items in a row failed")
            }
            state = .following(consecutiveFailures: run)
            switch policy.onFailure {
            case .skip: return .skip(item)
            case .fallback:
                state = .onFallback
                return .playFallback(reason: "\(item) failed \(policy.retries + 1) times")
            }
        }
    }

    /// `item` played (its first frame was presented and it went on): its retries and the run of
    /// failures start again.
    public mutating func itemPlayed(_ item: ItemKey) {
        attempts[item] = nil
        if case .following = state { state = .following(consecutiveFailures: 0) }
    }

    /// The programme changed entry (a window opened or closed, an interrupt began or ended):
    /// the fallback gives way to the programme again and every count starts over.
    public mutating func entryChanged() {
        state = .following(consecutiveFailures: 0)
        attempts = [:]
    }

    /// A rebuild failed: the process cannot go on.
    public func rebuildFailed(reason: String) -> Action { .exitForRestart(reason: "rebuilding the pipeline failed: \(reason)") }
}
