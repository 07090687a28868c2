public import Logging
public import MediaTime
public import ShowRunner
public import Scheduling

/// Keeps a show on screen: it takes the show's reports (an item failed or stalled, an item
/// plays, the entry changed, the engine's output failed), lets ``SupervisorStateMachine`` apply
/// the schedule's `[restart]` policy, and carries out the answer — retry after the backoff, skip,
/// the fallback playlist, the pipeline rebuilt inside the process, or, when that is not enough,
/// the process ended for systemd to restart. Its counts go to the state file after each
/// decision, so a restart loop is visible and survives a power cut.
///
/// The actor is the one owner of the state machine; decisions are taken one report at a time,
/// in the order the show sent them.
public actor Supervisor {
    private var machine: SupervisorStateMachine
    private let show: ShowRunner
    private let store: StateStore?
    private let clock: any HostClock
    private let logger: Logger
    private let exitForRestart: @Sendable (String) -> Void
    private var storeFailed = false

    /// - Parameters:
    ///   - show: the show to supervise (its ``ShowRunner/supervisionReports()`` are taken here).
    ///   - policy: the schedule's `[restart]` table.
    ///   - store: where the counts are kept, if anywhere.
    ///   - exitForRestart: ends the process with a non-zero status (the service manager restarts it).
    public init(show: ShowRunner, policy: RestartPolicy, store: StateStore?, clock: any HostClock = MonotonicClock(),
                logger: Logger = Logger(label: "vitrine.supervisor"), exitForRestart: @escaping @Sendable (String) -> Void) {
        machine = SupervisorStateMachine(policy: policy)
        self.show = show
        self.store = store
        self.clock = clock
        self.logger = logger
        self.exitForRestart = exitForRestart
    }

    /// Follows `reports` until the show stops.
    public func run(_ reports: AsyncStream<ShowReport>) async {
        for await report in reports { handle(report) }
    }

    /// Takes one report and carries out the decision.
    public func handle(_ report: ShowReport) {
        switch report {
        case .itemPlaying(let item):
            let hadFailures = machine.state != .following(consecutiveFailures: 0) || machine.attempts[key(item)] != nil
            machine.itemPlayed(key(item))
            if hadFailures { persist { $0.consecutiveFailedItems = self.consecutiveFailures } }
        case .entryChanged(let entry):
            machine.entryChanged()
            persist {
                $0.scheduleChoice = entry
                $0.consecutiveFailedItems = 0
            }
        case .itemFailed(let item, let reason):
            act(on: machine.handle(.itemFailed(key(item), reason: reason), at: clock.now()), fault: "\(item) failed: \(reason)")
        case .itemStalled(let item, let waited):
            act(on: machine.handle(.stalled(key(item)), at: clock.now()),
                fault: "\(item) stalled for \(MediaTime.format(seconds: waited.seconds, decimals: 1)) s")
        case .outputFailed(let reason):
            act(on: machine.handle(.displayFailed(reason: reason), at: clock.now()), fault: reason)
        }
    }

    private func act(on action: SupervisorStateMachine.Action, fault: String) {
        switch action {
        case .retry(_, let attempt, let delay):
            show.retry(attempt: attempt, after: delay)
            persist {
                $0.itemRetries += 1
                $0.lastFault = fault
            }
        case .skip:
            show.skip()
            persist {
                $0.skippedItems += 1
                $0.consecutiveFailedItems = self.consecutiveFailures
                $0.lastFault = fault
            }
        case .playFallback(let reason):
            show.playFallback(reason: reason)
            persist {
                $0.fallbacks += 1
                $0.consecutiveFailedItems = self.consecutiveFailures
                $0.scheduleChoice = "fallback"
                $0.lastFault = fault
            }
        case .rebuildPipeline(let reason):
            show.rebuildPipeline(reason: reason)
            persist {
                $0.pipelineRebuilds += 1
                $0.lastFault = fault
            }
        case .exitForRestart(let reason):
            logger.critical("the player cannot go on inside this process: \(reason)")
            persist { $0.lastFault = reason }
            exitForRestart(reason)
        }
    }

    /// Items in a row that failed for good, as the state machine counts them.
    private var consecutiveFailures: Int {
        switch machine.state {
        case .following(let failures): failures
        case .onFallback: machine.policy.fallbackAfter
        }
    }

    private func key(_ item: ProgrammeItem) -> SupervisorStateMachine.ItemKey {
        SupervisorStateMachine.ItemKey(playlist: item.playlist, index: item.index)
    }

    /// Changes the state file; a state that cannot be written is logged once, and playback goes on.
    private func persist(_ change: (inout PersistedState) -> Void) {
        guard let store else { return }
        do {
            var state = try store.load()
            change(&state)
            try store.save(state)
            storeFailed = false
        } catch {
            if !storeFailed { logger.error("the supervisor's counts are not kept: \(error)") }
            storeFailed = true
        }
    }
}
