import Bundles
import Displays
import Logging
import MediaSinks
import MediaTime
import ServiceLifecycle
import ShowRunner

/// Follows the bundle import directory while a show plays (docs/bundles.md): when an import
/// switches `current`, the show switches to the new bundle's schedule at its next item boundary;
/// the importer's progress and outcome are shown on screen (the player owns it).
struct ImportFollowService: Service, CustomStringConvertible {
    let store: BundleStore
    let show: ShowRunner
    let display: any Display
    let logger: Logger

    var description: String { "bundle import follower \(store.directory)" }

    private enum Change { case current, status }

    func run() async throws {
        let (changes, continuation) = AsyncStream.makeStream(of: Change.self)
        // inotify watches the folder: it must exist before the first import creates it.
        store.createFolder()
        let link = FileWatcher(path: store.currentLink) { continuation.yield(.current) }
        let status = FileWatcher(path: store.statusPath) { continuation.yield(.status) }
        if link == nil || status == nil {
            logger.warning("cannot watch \(store.directory) for imported bundles (inotify): a new bundle plays after a restart")
        }
        let notice = ImportNotice(display: display)
        await cancelWhenGracefulShutdown { [store, show, logger] in
            for await change in changes {
                switch change {
                case .current:
                    guard let schedule = store.currentSchedule else { continue }
                    logger.info("a new bundle is current: switching to \(schedule) at the next item boundary")
                    await show.switchSchedule(to: schedule)
                case .status:
                    if let report = ImportStatus.read(store.statusPath) { await notice.show(report) }
                }
            }
        }
        continuation.finish()
        link?.stop()
        status?.stop()
        await notice.clear()
    }
}

/// The import's progress or outcome in one line at the bottom of the screen: the progress while
/// it runs, a notice for 5 s after an import, the reason for 30 s after a refusal.
actor ImportNotice {
    private let display: any Display
    private var shown: OverlayID?
    private var generation = 0

    init(display: any Display) { self.display = display }

    func show(_ status: ImportStatus) {
        let text: String
        var lasts: Duration?
        switch status.state {
        case .checking: text = "USB stick: checking the bundle…"
        case .copying:
            text = "USB stick: importing \(status.filesDone) of \(status.filesTotal) files, \(status.bytesDone >> 20) of \(status.bytesTotal >> 20) MB"
        case .validating: text = "USB stick: checking the new schedule…"
        case .imported:
            text = "New schedule imported: it starts at the next item. You can remove the stick."
            lasts = .seconds(5)
        case .refused:
            text = "USB stick refused: \(status.message ?? "see the log")"
            lasts = .seconds(30)
        }
        replace(with: text)
        generation += 1
        if let lasts {
            let mine = generation
            Task {
                try? await Task.sleep(for: lasts)
                self.expire(mine)
            }
        }
    }

    func clear() {
        if let shown { display.layers.remove(shown) }
        shown = nil
    }

    private func expire(_ shownGeneration: Int) {
        if shownGeneration == generation { clear() }
    }

    private func replace(with text: String) {
        let height = display.outputSize.height
        let pixels = max(12, height / 30)
        let layer = OverlayLayer(
            .text(text, TextStyle(pixelSize: pixels, color: .white, background: RGBAColor(red: 0, green: 0, blue: 0, alpha: 200),
                                  alignment: .center, padding: pixels / 3)),
            frame: display.screenFrame(.relative(x: 0.02, y: 0.88, width: 0.96, height: 0.1)), zIndex: 1_000_000)
        let added = display.layers.add(layer)
        if let shown { display.layers.remove(shown) }
        shown = added
    }
}
