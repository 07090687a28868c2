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
    /// How often to look whether playback is over (shorter on a simulated clock).
    let pollInterval: Duration
    /// Told `STOPPING=1` when playback starts stopping.
    var notifier: SystemdNotifier? = nil

    var description: String { "playback" }

    func run() async throws {
        let started = clock.now()
        switch playback {
        case .show(let show): show.start()  // when its maker has not already
        case .queue(let player): player.play()
        }
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: pollInterval)
                if case .queue(let player) = playback, player.items().isEmpty { return }
                if let limit, clock.now() - started >= limit { return }
            }
        }
        notifier?.stopping(status: "stopping")
        switch playback {
        case .show(let show): show.stop()
        case .queue(let player): player.invalidate()
        }
    }
}
