import Foundation
import MediaTime
import Playback
import Scheduling
import Threading

/// The accelerated soak's checks, made on each presentation record as it arrives: a day of records
/// kept in memory would be the very growth the soak looks for, so the ledger keeps only the last
/// frame, the current item's facts and counts.
///
/// What it checks:
/// - frames: each presented at a later refresh than the one before; within an item, each later in
///   the media than the one before (no frame twice, none out of order); item indices only grow;
/// - seams (the item before ended, `item_ended`): the next item's first frame is presented at the
///   first refresh at or after the previous item's end on its timeline (as its last frames place it);
/// - cuts (the item before was replaced before its end): counted here; the show's driver checks them
///   (at once, the last picture on screen until the new first frame);
/// - overlays: `overlay-shown` comes with the first presented frame at or after its cue (a still:
///   at the first refresh its time reached the cue), once per overlay and item; an item played
///   whole shows every overlay it has;
/// - programme: `item-started` once per item, with the entry the wall clock says (an interrupt at
///   its minute, day parts inside their windows); nothing stalls, fails or is dropped.
final class SoakLedger: Sendable {
    /// What the checks know about the show.
    struct Setup: Sendable {
        /// The display's refresh interval and the host time of one refresh (the grid's origin).
        var refreshInterval: MediaTime
        var gridOrigin: MediaTime
        /// The show's wall clock: `start` at host time `hostStart`.
        var start: UTCInstant
        var hostStart: MediaTime
        /// How long after its start an interrupt may come on screen (the show notices at its next tick).
        var interruptLatency: MediaTime
    }

    /// Counts for one simulated hour (the hourly table).
    struct Hour: Sendable {
        var transitions = 0
        var seams = 0
        var cuts = 0
        var overlays = 0
        var frames = 0
    }

    private struct CurrentItem {
        var first: PresentedFrame
        var entry: String?
        var started = false
        var ended: MediaTime?
        var shown: Set<String> = []
    }

    private struct State {
        var setup: Setup
        var cues: [String: MediaTime] = [:]
        var last: PresentedFrame?
        /// The presentation time of the frame before ``last`` in the same item.
        var previousInItem: MediaTime?
        /// That frame's host time less its media time.
        var previousOffset: MediaTime?
        var item: CurrentItem?
        var frames = 0
        var transitions = 0
        var seams = 0
        var cuts = 0
        var overlaysChecked = 0
        var wholePlays = 0
        var soundOnScreen = MediaTime.zero
        var interruptsStarted = 0
        var entriesStarted: [String: Int] = [:]
        var events: [String: Int] = [:]
        var rejectedReasons: [String] = []
        var hours: [Int: Hour] = [:]
        var failures: [String] = []
        var failureCount = 0
    }

    private let state: LockedValue<State>

    init(setup: Setup) {
        state = LockedValue(State(setup: setup))
    }

    /// Adds the overlays of a schedule revision (what each shows → its cue in the item).
    func learn(cues: [String: MediaTime]) {
        state.withLock { $0.cues.merge(cues) { _, new in new } }
    }

    /// Takes one record (on the render thread, or the show's queue for schedule events).
    func record(_ record: PresentationRecord) {
        state.withLock { state in
            switch record {
            case .frame(let frame): Self.frame(frame, &state)
            case .event(let event): Self.event(event, &state)
            }
        }
    }

    /// A failure found outside the records (by the driver).
    func fail(_ message: String) {
        state.withLock { state in Self.fail(message, &state) }
    }

    // MARK: Reading

    var lastFrame: PresentedFrame? { state.withLock { $0.last } }
    var failures: [String] { state.withLock { $0.failures } }
    var failureCount: Int { state.withLock { $0.failureCount } }
    var transitions: Int { state.withLock { $0.transitions } }
    var seams: Int { state.withLock { $0.seams } }
    var cuts: Int { state.withLock { $0.cuts } }
    var frames: Int { state.withLock { $0.frames } }
    var overlaysChecked: Int { state.withLock { $0.overlaysChecked } }
    var wholePlays: Int { state.withLock { $0.wholePlays } }
    /// How long items with a sound track were on screen (from their first frame to the next item's).
    var soundOnScreen: MediaTime { state.withLock { $0.soundOnScreen } }
    var rejectedReasons: [String] { state.withLock { $0.rejectedReasons } }
    func count(_ kind: PresentationEvent.Kind) -> Int { state.withLock { $0.events[kind.rawValue] ?? 0 } }
    func started(entry: String) -> Int { state.withLock { $0.entriesStarted[entry] ?? 0 } }
    var interruptsStarted: Int { state.withLock { $0.interruptsStarted } }
    func hour(_ index: Int) -> Hour { state.withLock { $0.hours[index] ?? Hour() } }

    // MARK: Checks (under the lock)

    private static let failureLimit = 40

    private static func fail(_ message: String, _ state: inout State) {
        state.failureCount += 1
        if state.failures.count < failureLimit { state.failures.append(message) }
    }

    /// The simulated hour (0-based) of host time `host`.
    private static func hourIndex(_ host: MediaTime, _ setup: Setup) -> Int {
        Int((host - setup.hostStart).seconds / 3600)
    }

    /// The wall-clock instant of host time `host`.
    static func wall(_ host: MediaTime, _ setup: Setup) -> UTCInstant {
        setup.start.advanced(by: host - setup.hostStart)!
    }

    /// The first refresh at or after `time`.
    private static func refresh(atOrAfter time: MediaTime, _ setup: Setup) -> MediaTime {
        let interval = setup.refreshInterval.nanoseconds
        let offset = (time - setup.gridOrigin).nanoseconds
        let periods = offset <= 0 ? 0 : (offset + interval - 1) / interval
        return setup.gridOrigin + .nanoseconds(periods * interval)
    }

    private static func describe(_ frame: PresentedFrame) -> String {
        let name = frame.source.split(separator: "/").last.map(String.init) ?? frame.source
        return "item \(frame.itemIndex) (\(name)) pts \(frame.presentationTime.seconds) s at \(frame.presentedAt.seconds) s"
    }

    private static func frame(_ frame: PresentedFrame, _ state: inout State) {
        state.frames += 1
        let hour = hourIndex(frame.presentedAt, state.setup)
        state.hours[hour, default: Hour()].frames += 1
        if frame.droppedFrames > (state.last?.droppedFrames ?? 0) {
            fail("frames were dropped: \(frame.droppedFrames) in all by \(describe(frame))", &state)
        }
        guard let last = state.last else {
            state.item = CurrentItem(first: frame)
            state.last = frame
            return
        }
        if frame.presentedAt <= last.presentedAt {
            fail("\(describe(frame)) presented no later than \(describe(last))", &state)
        }
        if frame.itemIndex == last.itemIndex {
            if frame.presentationTime <= last.presentationTime {
                fail("within an item a frame came twice or out of order: \(describe(last)), then \(describe(frame))", &state)
            }
            state.previousInItem = last.presentationTime
            state.previousOffset = last.presentedAt - last.presentationTime
        } else if frame.itemIndex < last.itemIndex {
            fail("an earlier item came back: \(describe(last)), then \(describe(frame))", &state)
        } else {
            finishItem(&state)
            if let item = state.item, SoakProgramme.medium(item.first.source)?.hasSound == true {
                state.soundOnScreen = state.soundOnScreen + (frame.presentedAt - item.first.presentedAt)
            }
            state.transitions += 1
            state.hours[hour, default: Hour()].transitions += 1
            if let ended = state.item?.ended {
                // A seam: every item is pinned where its programme puts it (a late start is caught up
                // by the follower), so the next item's first frame comes at the first refresh at or
                // after the item's end on its timeline as its last frames place it. A frame shows at
                // the refresh at or after its time, so each frame's host time less its media time is
                // the timeline's offset or up to a refresh more: the smaller of the last two frames'
                // (2 fps on 5 Hz: they fall at different phases), and one refresh earlier is on time too.
                var offset = last.presentedAt - last.presentationTime
                if let previous = state.previousOffset, previous < offset { offset = previous }
                let due = refresh(atOrAfter: offset + ended, state.setup)
                if frame.presentedAt != due && frame.presentedAt != due - state.setup.refreshInterval {
                    fail("seam not gapless: \(describe(last)) ended at \(ended.seconds) s, so the next frame was due at "
                         + "\(due.seconds) s; \(describe(frame))", &state)
                }
                state.seams += 1
                state.hours[hour, default: Hour()].seams += 1
            } else {
                state.cuts += 1
                state.hours[hour, default: Hour()].cuts += 1
            }
            state.item = CurrentItem(first: frame)
            state.previousInItem = nil
            state.previousOffset = nil
        }
        state.last = frame
    }

    /// The current item is over: played whole, it showed every overlay it has.
    private static func finishItem(_ state: inout State) {
        guard let item = state.item else { return }
        if !item.started { fail("no item-started for \(describe(item.first))", &state) }
        guard let ended = item.ended, let medium = SoakProgramme.medium(item.first.source) else { return }
        let whole = item.first.presentationTime == .zero && ended == medium.length
        guard whole else { return }
        state.wholePlays += 1
        if item.shown.count != medium.overlays {
            fail("\(describe(item.first)) played whole but showed \(item.shown.sorted()) of its \(medium.overlays) overlays", &state)
        }
    }

    private static func event(_ event: PresentationEvent, _ state: inout State) {
        state.events[event.kind.rawValue, default: 0] += 1
        switch event.kind {
        case .itemEnded:
            guard let last = state.last, event.itemIndex == last.itemIndex, let time = event.time else {
                fail("item_ended for item \(event.itemIndex), not the one on screen (\(state.last.map(describe) ?? "none"))", &state)
                return
            }
            if event.reason != nil { fail("item \(event.itemIndex) ended on an error: \(event.reason!)", &state) }
            state.item?.ended = time
        case .itemStarted:
            guard let last = state.last, event.itemIndex == last.itemIndex, state.item?.first == last else {
                fail("item-started for item \(event.itemIndex) not right after its first frame", &state)
                return
            }
            if state.item?.started == true { fail("item-started twice for item \(event.itemIndex)", &state) }
            state.item?.started = true
            let entry = event.entry ?? "?"
            state.item?.entry = entry
            state.entriesStarted[entry, default: 0] += 1
            checkEntry(entry, startedAt: last.presentedAt, &state)
        case .overlayShown:
            overlayShown(event, &state)
        case .scheduleRejected:
            state.rejectedReasons.append(event.reason ?? "")
        case .stalled, .itemFailed, .showItemFailed, .stall, .audioUnavailable, .skip, .retry, .fallback, .pipelineRebuilt, .clockStepped:
            fail("\(event.kind.rawValue) for item \(event.itemIndex) (\(event.source)): \(event.reason ?? event.detail ?? "")", &state)
        default:
            break
        }
    }

    /// An item's entry must be the one the wall clock gives: an interrupt from its start (at once: by
    /// the refresh after the show's next tick), a day part inside its window.
    private static func checkEntry(_ entry: String, startedAt host: MediaTime, _ state: inout State) {
        let wall = wall(host, state.setup)
        let dayStart = wall.nanosecondsSinceEpoch / 86_400_000_000_000 * 86_400_000_000_000
        let sinceMidnight = wall.nanosecondsSinceEpoch - dayStart
        func within(_ from: Int64, _ to: Int64) -> Bool { sinceMidnight >= from * 1_000_000_000 && sinceMidnight < to * 1_000_000_000 }
        func soonAfter(_ second: Int64) -> Bool {
            sinceMidnight >= second * 1_000_000_000 && sinceMidnight <= second * 1_000_000_000 + state.setup.interruptLatency.nanoseconds
        }
        let ok: Bool
        if entry.hasPrefix("alert-") {
            state.interruptsStarted += 1
            let second = SoakProgramme.interruptSeconds.first { SoakProgramme.interruptName($0) == entry }.map(Int64.init) ?? -10
            ok = soonAfter(second)
        } else if entry == "bulletin" {
            ok = soonAfter(10 * 3600 + 30 * 60)
        } else if entry == "breakfast" {
            ok = within(6 * 3600, 9 * 3600 + 30 * 60)
        } else if entry == "evening" {
            ok = within(18 * 3600, 21 * 3600)
        } else {
            ok = entry == "fallback"
        }
        if !ok { fail("an item of entry \(entry) started at \(wall)", &state) }
    }

    private static func overlayShown(_ event: PresentationEvent, _ state: inout State) {
        let label = event.detail ?? ""
        let what = label.range(of: " at ", options: .backwards).map { String(label[..<$0.lowerBound]) } ?? label
        guard let cue = state.cues[what] else {
            fail("overlay-shown for an overlay the schedule does not have: \(label)", &state)
            return
        }
        guard let last = state.last, let item = state.item, event.itemIndex == last.itemIndex, let time = event.time else {
            fail("overlay-shown (\(label)) not about the item on screen", &state)
            return
        }
        let hour = hourIndex(event.at, state.setup)
        if SoakProgramme.medium(last.source)?.isStill == true {
            // A still's time runs with the display: shown at the first refresh it reached the cue.
            let elapsed = event.at - item.first.presentedAt
            if time < cue || time >= cue + state.setup.refreshInterval || time != item.first.presentationTime + elapsed {
                fail("\(label) on a still shown at its time \(time.seconds) s (\(elapsed.seconds) s after its picture), cue \(cue.seconds) s", &state)
            }
        } else {
            // The first presented frame at or after the cue: this frame is at or after it, the one
            // before it in the item (if any) before it.
            let firstAtOrAfter = last.presentationTime >= cue && (state.previousInItem.map { $0 < cue } ?? true)
            if time != last.presentationTime || !firstAtOrAfter {
                fail("\(label) shown with \(time.seconds) s; on screen \(describe(last)), the frame before at "
                     + "\(state.previousInItem?.seconds ?? -1) s; cue \(cue.seconds) s", &state)
            }
        }
        if state.item?.shown.insert(what).inserted != true {
            fail("\(label) shown twice in item \(event.itemIndex)", &state)
        }
        state.overlaysChecked += 1
        state.hours[hour, default: Hour()].overlays += 1
    }
}
