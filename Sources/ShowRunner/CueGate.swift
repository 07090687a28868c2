import Displays
import MediaTime
import Playback
import Synchronization
import MediaSinks
import Threading

/// A scrolling text: one line running right to left through its rectangle, over a fixed background bar.
struct TickerSpec: Sendable {
    let text: String
    /// The text's looks (no background: the bar is ``background``).
    let style: TextStyle
    /// The rectangle in screen pixels.
    let x: Int, y: Int, width: Int, height: Int
    /// The line's width in pixels (an upper estimate, so it never wraps).
    let lineWidth: Int
    /// Pixels per second.
    let speed: Double
    /// The bar behind the text: the overlay's background colour over its rectangle (transparent without one).
    let background: OverlayLayer
    let zIndex: Int
    let opacity: Double

    /// The text overlay, first placed with its left edge at the rectangle's right edge, and only
    /// ever drawn inside the rectangle.
    var line: OverlayLayer {
        OverlayLayer(.text(text, style), frame: frame(at: 0), zIndex: zIndex, opacity: opacity,
                     clip: .pixels(x: x, y: y, width: width, height: height))
    }

    /// Where the line is when its left edge is `offset` pixels from the rectangle's right edge, leftwards.
    func frame(at offset: Int) -> LayerFrame {
        .pixels(x: x + width - offset, y: y, width: lineWidth, height: height)
    }

    /// How far the text has run after `elapsed`: it enters at the right, leaves at the left, and starts again.
    func offset(after elapsed: MediaTime) -> Int {
        let cycle = Double(width + lineWidth)
        let run = max(0, elapsed.seconds) * speed
        return Int(run.truncatingRemainder(dividingBy: cycle))
    }
}

/// An overlay of one queued item, placed in that item's media timeline.
struct CueSpec: Sendable {
    /// Names the overlay in the log ("logo.png at 00:00:02").
    let label: String
    let overlay: OverlayLayer
    /// Set for a scrolling text: the gate moves it at every refresh (``overlay`` is then its bar).
    var ticker: TickerSpec? = nil
    /// The media time from which it shows: the first frame at or after it carries it.
    let start: MediaTime
    /// The media time at which it is removed (and fades out); `nil`: with the item.
    let end: MediaTime?
}

/// What the show needs to know about one queued ``PlayerItem`` while it plays.
struct ItemPlan: Sendable {
    var cues: [CueSpec] = []
    /// A still picture: its media time advances with the display while its one frame stays.
    var isStill = false
    var gravity: VideoGravity
    /// 0...1, applied to the soundtrack when the item becomes current.
    var volume: Float = 1
    /// Where the item sits in the programme (for `item-started`), once registered.
    var entry: String?
    var programmeItem: ProgrammeItem?
}

/// Sits between the engine and the display (a ``VideoSink`` to the engine, a ``VideoFrameSource`` to the
/// display) and puts each overlay on screen with the first presented frame at or after its cue.
///
/// Boundary observers fire after their frame was presented, on another queue: an overlay added from one
/// would appear a refresh or more late. The gate instead sees each frame as the display takes it, before
/// it is drawn, adds the overlay to the display's layers in that same refresh (the display applies layer
/// changes after asking its source), and logs `overlay-shown` with the frame's time once the display
/// reports it presented. Item changes, gravity and volume switch on the first frame of the new item
/// (the volume of an item the show's queue starts with, a cut-over's, at once: ``soundSettingsTakeEffect(for:)``).
///
/// The show's player shows through a gate in the display's root layer; each other zone of a layout
/// through a gate of its own in the zone's ``PlayerLayer`` (overlays go on the display's layers,
/// already placed in the zone).
final class CueGate: VideoSink, VideoFrameSource, PacedFrameSource, Sendable {
    private struct State {
        var inner: (any VideoFrameSource)?
        var player: QueuePlayer?
        var plans: [ObjectIdentifier: ItemPlan] = [:]
        var current: ObjectIdentifier?
        var plan: ItemPlan?
        /// The item whose sound settings took effect ahead of its first refresh (not again then).
        var soundSettled: ObjectIdentifier?
        var shown: [Int: OverlayID] = [:]
        /// A ticker's moving line: its overlay, its offset and when it started running.
        var tickers: [Int: (line: OverlayID, offset: Int, since: MediaTime)] = [:]
        var finished: Set<Int> = []
        /// The current item's first presented frame: its time and when it was presented (for stills).
        var firstPresented: (time: MediaTime, host: MediaTime)?
        /// Frames handed out for the current item, not yet presented.
        var frameOfCurrent: Set<UInt64> = []
        /// Overlay events waiting for their frame to be presented, by frame id.
        var waiting: [UInt64: [(PresentationEvent.Kind, String)]] = [:]
    }

    /// Where the pictures go: the display (its root layer) or a zone's layer.
    private let output: any VideoSink
    private let layers: LayerStack
    private let log: ShowLog
    private let state = LockedValue(State())
    /// Applies an item's sound settings. Called holding `state`'s lock — from the render thread at an
    /// item's first refresh, from the show's queue when it builds a queue — so the two reach the
    /// sound in the order they were decided; it must not call back into the gate.
    private let onItemChange: @Sendable (ItemPlan) -> Void

    init(display: any Display, log: ShowLog, onItemChange: @escaping @Sendable (ItemPlan) -> Void) {
        self.output = display
        self.layers = display.layers
        self.log = log
        self.onItemChange = onItemChange
    }

    /// A gate showing in `layer` of `display`.
    init(layer: PlayerLayer, of display: any Display, log: ShowLog, onItemChange: @escaping @Sendable (ItemPlan) -> Void) {
        self.output = layer
        self.layers = display.layers
        self.log = log
        self.onItemChange = onItemChange
    }

    func attach(_ player: QueuePlayer) { state.withLock { $0.player = player } }

    /// Applies the sound settings (volume, mute) of `item`, just made current, at once rather than
    /// at the display's next refresh: the sound of a queue just built can start before the display
    /// asks for a picture — a display still bringing up its renderer (seconds under emulation)
    /// asks nothing — and would meanwhile play at the last item's volume. The picture's settings
    /// follow at the refresh, as before.
    func soundSettingsTakeEffect(for item: PlayerItem) {
        let id = ObjectIdentifier(item)
        state.withLock { state in
            guard let plan = state.plans[id] else { return }
            state.soundSettled = id
            onItemChange(plan)
        }
    }

    /// Registers what to do while `item` plays (before it is queued).
    func setPlan(_ plan: ItemPlan, for item: PlayerItem) { state.withLock { $0.plans[ObjectIdentifier(item)] = plan } }

    /// Forgets the plans of items no longer queued.
    func retainPlans(for items: [PlayerItem]) {
        let keep = Set(items.map(ObjectIdentifier.init))
        state.withLock { state in state.plans = state.plans.filter { keep.contains($0.key) || $0.key == state.current } }
    }

    // MARK: VideoSink (the engine's side)

    var refreshInterval: MediaTime { output.refreshInterval }
    var outputSize: (width: Int, height: Int) { output.outputSize }

    func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) { output.setFailureHandler(handler) }

    /// The layer the gate shows in: the display's own full-screen layer, or a zone's.
    var videoLayer: PlayerLayer? { output.videoLayer }

    func setSource(_ source: (any VideoFrameSource)?) {
        state.withLock { $0.inner = source }
        output.setSource(source == nil ? nil : self)
    }

    // MARK: VideoFrameSource (the display's side, render thread)

    func content(for tick: RefreshTick) -> VideoSinkContent? {
        let (inner, player) = state.withLock { ($0.inner, $0.player) }
        guard let inner else { return nil }
        let content = inner.content(for: tick)
        let layers = self.layers
        guard let player, let item = player.currentItem, player.timeControlStatus != .waitingToPlayAtSpecifiedRate(.itemFailed) else {
            // Nothing plays, or a failed item is held while the supervisor decides: the last picture
            // stays, but no overlay of it stays frozen on screen.
            clearOverlays(layers: layers)
            return content
        }
        let id = ObjectIdentifier(item)
        var immediate: [(PresentationEvent.Kind, String, MediaTime)] = []
        state.withLock { state in
            if state.current != id {
                // A new item: the previous one's overlays go, its own settings take over.
                Self.removeOverlays(&state, layers: layers)
                state.current = id
                state.plan = state.plans[id]
                if let plan = state.plan {
                    if let video = output.videoLayer, video.videoGravity != plan.gravity { video.videoGravity = plan.gravity }
                    if state.soundSettled != id { onItemChange(plan) }
                }
                state.soundSettled = nil
            }
            guard let plan = state.plan else { return }
            // The item's media time at this refresh.
            let time: MediaTime
            if let frame = content?.frame {
                time = frame.presentationTime
                if let frameID = content?.frameID { state.frameOfCurrent.insert(frameID) }
            } else if plan.isStill, let first = state.firstPresented {
                time = first.time + max(.zero, tick.hostTime - first.host)
            } else {
                return
            }
            let frameID = content?.frame != nil ? content?.frameID : nil
            for (index, cue) in plan.cues.enumerated() where state.shown[index] == nil && !state.finished.contains(index) {
                guard cue.start <= time else { continue }
                if let end = cue.end, time >= end {
                    state.finished.insert(index)  // jumped over (started later in the item)
                    continue
                }
                if let ticker = cue.ticker {
                    state.shown[index] = layers.add(ticker.background)
                    state.tickers[index] = (layers.add(ticker.line), 0, tick.hostTime)
                } else {
                    state.shown[index] = layers.add(cue.overlay)
                }
                if let frameID { state.waiting[frameID, default: []].append((.overlayShown, cue.label)) } else {
                    immediate.append((.overlayShown, cue.label, time))
                }
            }
            for (index, overlay) in state.shown {
                guard let end = plan.cues[index].end, time >= end else { continue }
                layers.remove(overlay)
                if let ticker = state.tickers.removeValue(forKey: index) { layers.remove(ticker.line) }
                state.shown[index] = nil
                state.finished.insert(index)
                if let frameID { state.waiting[frameID, default: []].append((.overlayHidden, plan.cues[index].label)) } else {
                    immediate.append((.overlayHidden, plan.cues[index].label, time))
                }
            }
        }
        moveTickers(at: tick, layers: layers)
        for (kind, label, time) in immediate { log.event(kind, time: time, at: tick.hostTime, detail: label) }
        return content
    }

    /// Takes every overlay of the current item off the screen and forgets the item.
    private func clearOverlays(layers: LayerStack) {
        state.withLock { state in
            guard state.current != nil else { return }
            Self.removeOverlays(&state, layers: layers)
            state.current = nil
            state.plan = nil
        }
    }

    private static func removeOverlays(_ state: inout State, layers: LayerStack) {
        for overlay in state.shown.values { layers.remove(overlay) }
        for ticker in state.tickers.values { layers.remove(ticker.line) }
        state.shown = [:]
        state.tickers = [:]
        state.finished = []
        state.firstPresented = nil
        state.frameOfCurrent = []
    }

    /// Tickers run on the display's clock: every refresh moves them, whether or not a new frame came.
    /// The line is rasterised once; moving it only shifts where its texture is drawn.
    private func moveTickers(at tick: RefreshTick, layers: LayerStack) {
        state.withLock { state in
            guard let plan = state.plan else { return }
            for (index, running) in state.tickers {
                guard let ticker = plan.cues[index].ticker else { continue }
                let offset = ticker.offset(after: tick.hostTime - running.since)
                guard offset != running.offset else { continue }
                layers.move(running.line, to: ticker.frame(at: offset))
                state.tickers[index] = (running.line, offset, running.since)
            }
        }
    }

    func didPresent(frameID: UInt64, at tick: RefreshTick) {
        let inner = state.withLock { $0.inner }
        // The engine logs the frame first; show events about it follow.
        inner?.didPresent(frameID: frameID, at: tick)
        let frame = log.lastPresentedFrame
        var started: ItemPlan?
        let events: [(PresentationEvent.Kind, String)] = state.withLock { state in
            if state.frameOfCurrent.remove(frameID) != nil, state.firstPresented == nil, let frame {
                state.firstPresented = (frame.presentationTime, tick.hostTime)
                started = state.plan
            }
            // Events of frames that were handed out but never presented move to this one.
            var events: [(PresentationEvent.Kind, String)] = []
            for key in state.waiting.keys.sorted() where key <= frameID {
                events += state.waiting.removeValue(forKey: key) ?? []
            }
            return events
        }
        if let started, let item = started.programmeItem {
            // The programme's item is on screen: proof of play starts from this line.
            log.record(.event(PresentationEvent(
                kind: .itemStarted, itemIndex: frame?.itemIndex ?? -1, source: frame?.source ?? item.source, time: frame?.presentationTime,
                at: tick.hostTime, reason: nil, detail: item.description, entry: started.entry, playlist: item.playlist,
                playlistIndex: item.index)))
        }
        for (kind, label) in events {
            log.event(kind, time: frame?.presentationTime, at: tick.hostTime, detail: label)
        }
    }

    func didSkipRefresh(_ tick: RefreshTick) {
        state.withLock { $0.inner }?.didSkipRefresh(tick)
    }

    func isWaitingForData() -> Bool {
        guard let paced = state.withLock({ $0.inner }) as? any PacedFrameSource else { return false }
        return paced.isWaitingForData()
    }
}
