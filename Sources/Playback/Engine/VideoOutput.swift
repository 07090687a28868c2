import MediaSinks
import MediaTime

/// Where the engine's pictures go: its video sink, which can change while the player lives (a
/// ``PlayerLayer`` given the player, the player moved to another layer), the display layer that
/// sink shows in, and what the layer was last told. Part of ``EngineState``, under the engine lock.
struct VideoOutput {
    /// The sink pulling frames; nil: the player has no video output (nothing pulls its frames).
    var sink: (any VideoSink)?
    /// The display layer ``sink`` shows in (``VideoSink/videoLayer``), told readiness and named
    /// in the presentation log.
    var layer: PlayerLayer?
    /// The last content with a picture handed out, and its item: a new sink shows it at its first
    /// refresh, so a player moved to another layer (or paused when given one) is seen at once.
    var lastPicture: (content: VideoSinkContent, item: PlayerItem, itemIndex: Int)?
    /// The sink changed and has not been handed a picture yet.
    var owesPicture = false
    /// The presentation-log index of the item whose picture the sink last presented (nil: none
    /// since it was attached).
    var presentedItemIndex: Int?
    /// What ``layer`` was last told about ``EngineState/isReadyForDisplay``, and that change's number.
    var announcedReady = false
    var readinessVersion: UInt64 = 0
}

/// A change of ``PlayerLayer/isReadyForDisplay`` to tell a layer, outside the engine lock.
struct ReadinessChange {
    var layer: PlayerLayer
    var isReady: Bool
    var version: UInt64
}

extension EngineState {
    /// The video output becomes `sink` (showing in `layer`); returns the one it replaces. Content
    /// handed to the old sink and not reported presented is forgotten (not counted as dropped:
    /// it was never late), and the new sink is owed the current picture.
    mutating func attachVideoOutput(_ sink: (any VideoSink)?, layer: PlayerLayer?) -> (any VideoSink)? {
        let old = output.sink
        output.sink = sink
        output.layer = layer
        output.presentedItemIndex = nil
        output.owesPicture = sink != nil
        // A new layer starts not ready (``PlayerLayer/setSource(_:)``).
        output.announcedReady = false
        pending.removeAll()
        return old
    }

    /// Passes a refresh's content to the sink: remembers its picture, or, when the sink is new and
    /// nothing new is due, hands it the last picture (with the current subtitle).
    mutating func outputContent(_ content: VideoSinkContent?) -> VideoSinkContent? {
        if let content, content.frame != nil {
            output.owesPicture = false
            if let handed = pending[content.frameID] { output.lastPicture = (content, handed.item, handed.itemIndex) }
            return content
        }
        guard output.owesPicture, let last = output.lastPicture else { return content }
        output.owesPicture = false
        let id: UInt64
        if let content {
            id = content.frameID
        } else {
            id = nextFrameID
            nextFrameID += 1
            pending[id] = Pending(
                item: last.item, itemIndex: last.itemIndex, presentationTime: last.content.frame?.presentationTime ?? .zero,
                serial: 0, isJump: false, clock: clock.heldTime, audioClock: nil, isFrame: false)
        }
        return VideoSinkContent(frameID: id, frame: last.content.frame, subtitle: content == nil ? last.content.subtitle : content?.subtitle)
    }

    /// The sink presented the content with `frameID`: the item it belongs to is on screen there.
    mutating func outputPresented(frameID: UInt64) {
        if let handed = pending[frameID] { output.presentedItemIndex = handed.itemIndex }
    }

    /// Whether the output's layer shows a picture of the current item.
    var isReadyForDisplay: Bool {
        output.sink != nil && items.first != nil && output.presentedItemIndex == itemIndex
    }

    /// The readiness change the layer has not been told yet, numbered; nil when there is none.
    mutating func readinessChange() -> ReadinessChange? {
        guard let layer = output.layer else { return nil }
        let ready = isReadyForDisplay
        guard ready != output.announcedReady else { return nil }
        output.announcedReady = ready
        output.readinessVersion += 1
        return ReadinessChange(layer: layer, isReady: ready, version: output.readinessVersion)
    }

    /// ``timeControlStatus`` when it changed since it was last announced.
    mutating func timeControlStatusChange() -> TimeControlStatus? {
        let status = timeControlStatus
        guard status != announcedTimeControlStatus else { return nil }
        announcedTimeControlStatus = status
        return status
    }
}
