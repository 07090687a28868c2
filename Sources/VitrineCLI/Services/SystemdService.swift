import Displays
import MediaTime
import Playback
import ServiceLifecycle
import ShowRunner
import Supervisor

/// Tells the service manager how the player is doing: `READY=1` once the first frame is on screen,
/// `STATUS=` naming what plays, and `WATCHDOG=1` only while the render loop goes round — a render
/// thread stuck in the GPU driver, a flip that never completes or the engine's lock held forever
/// stop the pings, and systemd kills and restarts the process after `WatchdogSec`. Outside
/// systemd (no `NOTIFY_SOCKET`) it only waits for the shutdown. `STOPPING=1` is sent by playback
/// as it starts stopping.
struct SystemdService: Service, CustomStringConvertible {
    let notifier: SystemdNotifier
    let display: any Display
    let log: ShowLog
    /// The schedule entry playing now, for a show.
    var entry: @Sendable () -> String? = { nil }

    var description: String { "service manager notifications" }

    func run() async throws {
        guard notifier.isActive else {
            try? await gracefulShutdown()
            return
        }
        // Checked twice per watchdog interval (at least every second), as sd_watchdog_enabled advises.
        let check = min(notifier.watchdogInterval.map { $0 / 2 } ?? .seconds(1), .seconds(1))
        await cancelWhenGracefulShutdown { [notifier, display, log, entry] in
            var ready = false
            var lastBeat = display.heartbeat
            var lastStatus = ""
            while !Task.isCancelled {
                // Until the first frame is up, look often: READY=1 should follow it closely.
                try? await Task.sleep(for: ready ? check : .milliseconds(20))
                // systemd arms the watchdog once the service is ready: the pings start with READY=1.
                let beat = display.heartbeat
                if ready, notifier.watchdogInterval != nil, beat != lastBeat { notifier.watchdog() }
                lastBeat = beat
                guard let frame = log.lastPresentedFrame else { continue }
                let status = Self.status(frame, entry: entry())
                if !ready {
                    notifier.ready(status: status)
                    ready = true
                } else if status != lastStatus {
                    notifier.status(status)
                }
                lastStatus = status
            }
        }
    }

    /// "morning: playing lobby.mp4 (item 3) at 12 s", or without the entry when files are played:
    /// changes at most once a second.
    static func status(_ frame: PresentedFrame, entry: String?) -> String {
        let name = frame.source.split(separator: "/").last.map(String.init) ?? frame.source
        let playing = "playing \(name) (item \(frame.itemIndex)) at \(Int(frame.presentationTime.seconds.rounded(.down))) s"
        return entry.map { "\($0): \(playing)" } ?? playing
    }
}
