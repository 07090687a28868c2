public import Displays
import Dispatch
import MediaTime
public import Playback
import Synchronization
import Threading

/// Where a show's presentation records go: the engine's frames and events, and the show's own events
/// (`overlay-shown`, `schedule-loaded`, ...), in one ordered stream. It also takes the screenshots asked
/// for by presentation time, and remembers the last presented frame so show events can name its item.
///
/// ``record(_:)`` runs on the display's render thread: it only appends and hands work away.
public final class ShowLog: Sendable {
    private let writer: PresentationLogWriter?
    private let observer: (@Sendable (PresentationRecord) -> Void)?
    private let zoneObserver: (@Sendable (PresentationRecord) -> Void)?
    private let lastFrame = LockedValue<PresentedFrame?>(nil)
    let screenshots: ScreenshotTaker?

    /// - Parameters:
    ///   - writer: the presentation log file, if any.
    ///   - screenshots: screenshots to take of presented frames, if any.
    ///   - observer: also receives every record of the show's player and the show (metrics, proof
    ///     of play, tests).
    ///   - zoneObserver: receives the records of a layout's other zones' players (tests).
    public init(writer: PresentationLogWriter?, screenshots: ScreenshotTaker? = nil,
                observer: (@Sendable (PresentationRecord) -> Void)? = nil,
                zoneObserver: (@Sendable (PresentationRecord) -> Void)? = nil) {
        self.writer = writer
        self.screenshots = screenshots
        self.observer = observer
        self.zoneObserver = zoneObserver
    }

    /// Takes one record (from the engine or the show).
    public func record(_ record: PresentationRecord) {
        if case .frame(let frame) = record {
            lastFrame.withLock { $0 = frame }
            screenshots?.framePresented(frame)
        }
        writer?.write(record)
        observer?(record)
    }

    /// The log of a layout zone's player (``ZonePlayers``): into the same presentation log (its
    /// frame lines name the zone's layer), with its own last frame for its events, but not into
    /// what follows the show's own player — screenshots by item time, metrics and proof of play.
    func zoneLog() -> ShowLog {
        ShowLog(writer: writer, observer: zoneObserver)
    }

    /// The last presented frame.
    public var lastPresentedFrame: PresentedFrame? { lastFrame.withLock { $0 } }

    /// Records a show event about the item of the last presented frame.
    func event(_ kind: PresentationEvent.Kind, time: MediaTime?, at: MediaTime, detail: String? = nil, reason: String? = nil,
               attempt: Int? = nil, delay: MediaTime? = nil, programme: (entry: String, item: ProgrammeItem)? = nil) {
        let frame = lastPresentedFrame
        record(.event(PresentationEvent(
            kind: kind, itemIndex: frame?.itemIndex ?? -1, source: frame?.source ?? "", time: time, at: at,
            reason: reason, detail: detail, attempt: attempt, delay: delay, entry: programme?.entry, playlist: programme?.item.playlist,
            playlistIndex: programme?.item.index)))
    }

    /// Flushes and closes the log file.
    public func close() { writer?.close() }
}

/// `--screenshot-at TIME=PATH`: captures the first presented frame whose presentation time is at or
/// after TIME (in its item's timeline) and writes it as PNG.
///
/// The capture happens on the render thread right after that frame was presented (the framebuffer holds
/// exactly it, overlays included); encoding and writing happen on a background queue.
public final class ScreenshotTaker: Sendable {
    private struct State {
        var pending: [ScreenshotRequest]
        var failures: [String] = []
    }

    private let display: any Display
    private let state: LockedValue<State>
    private let writes = DispatchGroup()
    private let queue = DispatchQueue(label: "vitrine.screenshots")

    public init(display: any Display, requests: [ScreenshotRequest]) {
        self.display = display
        state = LockedValue(State(pending: requests.sorted { $0.time < $1.time }))
    }

    func framePresented(_ frame: PresentedFrame) {
        let due: [ScreenshotRequest] = state.withLock { state in
            let due = state.pending.filter { $0.time <= frame.presentationTime }
            state.pending.removeAll { $0.time <= frame.presentationTime }
            return due
        }
        guard !due.isEmpty else { return }
        let shot: Screenshot
        do { shot = try display.screenshot() } catch {
            state.withLock { $0.failures += due.map { "\($0.path): \(error)" } }
            return
        }
        writes.enter()
        queue.async { [self] in
            for request in due {
                do { try shot.writePNG(to: request.path) } catch {
                    state.withLock { $0.failures.append("\(request.path): \(error)") }
                }
            }
            writes.leave()
        }
    }

    /// Waits for every write; returns what went wrong, including requests no frame reached.
    public func finish() -> [String] {
        writes.wait()
        return state.withLock { state in
            state.failures + state.pending.map {
                "\($0.path): no frame was presented at or after \(MediaTime.format(seconds: $0.time.seconds, decimals: 3)) s"
            }
        }
    }
}
