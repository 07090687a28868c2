import Displays
import Logging
import MediaSinks
import MediaTime
import Playback
import Scheduling

/// The zones of a playing layout other than the sound zone: each a muted ``QueuePlayer`` of its own
/// in a ``PlayerLayer`` at the zone's rectangle, behind a ``CueGate`` of its own (its items'
/// overlays, in zone coordinates), playing the zone's playlist where the wall clock puts it
/// (pinned as the show's own items are), with its own gapless seams.
///
/// The show's player plays the sound zone in the display's root layer, which is moved to that
/// zone's rectangle while the layout plays and back to the whole screen after. Confined to the
/// show's queue, as everything the ``ShowRunner`` decides.
final class ZonePlayers {
    /// One zone on screen.
    private struct Zone {
        let name: String
        let player: QueuePlayer
        let layer: PlayerLayer
        /// Puts the zone's items' overlays on screen at their cues.
        let gate: CueGate
        /// When the last queued item ends: the next one is resolved for then.
        var tailEnd: UTCInstant?
    }

    private let display: any Display
    private let hostClock: any HostClock
    private let log: ShowLog
    private let logger: Logger
    /// The layout entry's occurrence playing (``ShowRunner/key(_:)``), or `nil`.
    private(set) var key: String?
    private var zones: [Zone] = []

    init(display: any Display, hostClock: any HostClock, log: ShowLog, logger: Logger) {
        self.display = display
        self.hostClock = hostClock
        self.log = log
        self.logger = logger
    }

    /// Follows the programme at `now`: `key` names the winning entry's occurrence, `state` what it
    /// plays (resolved only when the layout starts). Starts the layout's zones when a layout's
    /// window begins, ends them when it ends, and keeps each zone's queue three items deep.
    func update(key: String, isLayout: Bool, now: UTCInstant, offset: MediaTime, resolve: (UTCInstant) -> ProgrammeState,
                makeItem: (ProgrammeState, LayoutZone) -> (item: PlayerItem, end: UTCInstant?, plan: ItemPlan)?) {
        if key != self.key {
            stop()
            guard isLayout else { return }
            start(resolve(now), key: key, offset: offset, makeItem: makeItem)
        }
        for index in zones.indices {
            if zones[index].player.rate == 0, !zones[index].player.items().isEmpty { zones[index].player.play() }
            topUp(&zones[index], resolve: resolve, makeItem: makeItem)
        }
    }

    /// The wall clock the zones follow moved (`--clock-step`, a start time chosen by hand).
    func follow(offset: MediaTime) {
        for zone in zones { zone.player.sourceClock = .wallClock(offset: offset) }
    }

    /// Ends the layout: the zones' players and layers go, the root layer covers the screen again.
    func stop() {
        guard key != nil || !zones.isEmpty else { return }
        for zone in zones {
            zone.player.invalidate()
            display.layers.remove(zone.layer)
        }
        zones = []
        key = nil
        display.layers.rootLayer.frame = .fullScreen
    }

    private func start(_ state: ProgrammeState, key: String, offset: MediaTime,
                       makeItem: (ProgrammeState, LayoutZone) -> (item: PlayerItem, end: UTCInstant?, plan: ItemPlan)?) {
        self.key = key
        guard !state.zones.isEmpty else { return }
        let sound = state.zones.firstIndex(where: \.playsSound) ?? 0
        display.layers.rootLayer.frame = Self.frame(state.zones[sound].zone.rect)
        for (index, zoneState) in state.zones.enumerated() where index != sound {
            let zone = zoneState.zone
            let layer = PlayerLayer(name: zone.name)
            layer.frame = Self.frame(zone.rect)
            layer.zPosition = Double(zone.zIndex)
            if let gravity = zone.gravity { layer.videoGravity = gravity }
            display.layers.add(layer)
            let zoneLog = log.zoneLog()
            let gate = CueGate(layer: layer, of: display, log: zoneLog) { _ in }
            let player = QueuePlayer(items: [], videoSink: gate, audioSink: nil, clock: hostClock)
            player.isMuted = true
            player.sourceClock = .wallClock(offset: offset)
            player.setPresentationHandler { record in zoneLog.record(record) }
            gate.attach(player)
            var entry = Zone(name: zone.name, player: player, layer: layer, gate: gate, tailEnd: nil)
            if let made = makeItem(zoneState.state, zone) {
                gate.setPlan(made.plan, for: made.item)
                player.insert(made.item, after: nil)
                entry.tailEnd = made.end
            } else {
                entry.tailEnd = zoneState.state.nextChange
            }
            zones.append(entry)
            player.play()
        }
        logger.info("layout \(state.layoutName ?? "?"): \(state.zones.count) zones on screen",
                    metadata: ["sound": "\(state.zones[sound].zone.name)"])
    }

    /// Queues what the zone's playlist plays after its last queued item, up to three items.
    private func topUp(_ zone: inout Zone, resolve: (UTCInstant) -> ProgrammeState,
                       makeItem: (ProgrammeState, LayoutZone) -> (item: PlayerItem, end: UTCInstant?, plan: ItemPlan)?) {
        zone.gate.retainPlans(for: zone.player.items())
        var guardCount = 0
        while zone.player.items().count < 3, let tail = zone.tailEnd, guardCount < 8 {
            guardCount += 1
            let state = resolve(tail)
            guard let zoneState = state.zones.first(where: { $0.zone.name == zone.name }), let made = makeItem(zoneState.state, zoneState.zone) else {
                // The layout's window ends here (the show rebuilds then) or the zone has nothing now.
                zone.tailEnd = nil
                break
            }
            zone.gate.setPlan(made.plan, for: made.item)
            zone.player.insert(made.item, after: nil)
            guard let end = made.end, end > tail else {
                zone.tailEnd = nil
                break
            }
            zone.tailEnd = end
        }
    }

    static func frame(_ rect: OverlayRect) -> LayerFrame {
        .relative(x: rect.x, y: rect.y, width: rect.width, height: rect.height)
    }
}
