import MediaTime
import Playback
import ServiceLifecycle
import ShowRunner
import Supervisor

/// Playback as a service: a schedule's show or a queue of files, played until the queue runs out,
/// `--duration` passes, or the group shuts down (SIGTERM, SIGINT). It is the first to stop, and
/// when it ends by itself it shuts the group down.
struct PlaybackService: Service, CustomStringConvertible {
    enum Playback: Sendable {
        case show(ShowRunner)
        case queue(QueuePlayer)
    }

    let playback: Playback
    /// How long to play, measured on `clock`.
    let limit: MediaTime?
    let clock: any HostClock
    /// How often to look whether playback is over, for a `clock` that does not run in real time
    /// (a simulated clock). `nil`: the service sleeps until the queue's end or the limit instead
    /// (looking every 20 ms cost a playing process about 5 % of its CPU time: 50 wake-ups a
    /// second of two threads).
    let pollInterval: Duration?
    /// Told `STOPPING=1` when playback starts stopping.
    var notifier: SystemdNotifier? = nil

    var description: String { "playback" }

    func run() async throws {
        let started = clock.now()
        // Subscribed before playing starts, so the queue's end cannot come before it (and only
        // when it is read: a stream nobody reads keeps every event).
        let events: AsyncStream<PlayerEvent>? = if pollInterval == nil, case .queue(let player) = playback { player.events } else { nil }
        switch playback {
        case .show(let show): show.start()
        case .queue(let player): player.play()
        }
        await cancelWhenGracefulShutdown {
            if let pollInterval {
                while !Task.isCancelled {
                    try? await Task.sleep(for: pollInterval)
                    if case .queue(let player) = playback, player.items().isEmpty { return }
                    if let limit, clock.now() - started >= limit { return }
                }
                return
            }
            await withTaskGroup(of: Void.self) { group in
                if let limit {
                    group.addTask {
                        let left = limit - (clock.now() - started)
                        if left > .zero { try? await Task.sleep(for: .nanoseconds(left.nanoseconds)) }
                    }
                }
                if case .queue(let player) = playback, let events {
                    group.addTask {
                        if player.items().isEmpty { return }
                        for await event in events {
                            if case .currentItemChanged = event, player.items().isEmpty { return }
                        }
                    }
                }
                // Until the group shuts down (the task is cancelled): all a show without a limit ends on.
                group.addTask {
                    while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
                }
                await group.next()
                group.cancelAll()
            }
        }
        notifier?.stopping(status: "stopping")
        switch playback {
        case .show(let show): show.stop()
        case .queue(let player): player.invalidate()
        }
    }
}
