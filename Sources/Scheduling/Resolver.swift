public import MediaTime

/// One window of an entry: the local date it starts on and its span in absolute time.
public struct Occurrence: Sendable, Hashable {
    public var entryName: String
    /// The local date the window starts on (what `days`, `from`/`until` and the rrule select).
    public var date: LocalDate
    public var start: UTCInstant
    public var end: UTCInstant
}

/// What should be on screen at one instant, and until when.
///
/// A playlist entry (or the fallback) fills ``playlistName`` and the item fields; a layout entry
/// fills ``layoutName`` and ``zones`` instead, one state per zone, and leaves the item fields empty.
public struct ProgrammeState: Sendable {
    /// The instant this state describes.
    public var instant: UTCInstant
    /// The winning entry; `nil` when the fallback playlist (or nothing) plays.
    public var entry: Entry?
    public var occurrence: Occurrence?
    /// The playlist playing; `nil` when a layout plays, or when nothing is scheduled and there is no fallback.
    public var playlistName: String?
    /// The item's index in the playlist.
    public var itemIndex: Int?
    /// Which play of a repeated item (0-based).
    public var repetition: Int
    /// How far into the current play of the item (0 = its in point).
    public var position: MediaTime
    /// Where to seek the media: ``position`` plus the item's in point.
    public var mediaTime: MediaTime
    /// When the current play of the item began (`instant` minus `position`).
    public var itemStart: UTCInstant?
    /// When the current play of the item ends, whether or not its window lasts that long; `nil`
    /// when it does not end (a stream, a length not known, the held end of an interrupt's pass).
    public var itemEnd: UTCInstant?
    /// The next instant at which any of the above (for a layout: any zone's item) changes other
    /// than by time passing; `nil` when nothing changes within the resolver's horizon
    /// (``ScheduleResolver/horizonDays``).
    public var nextChange: UTCInstant?
    /// The layout playing; `nil` when a playlist (or nothing) plays.
    public var layoutName: String?
    /// A layout's zones in the order they were written, each with its playlist's state; empty
    /// when no layout plays.
    public var zones: [ZoneState] = []
    /// Whether the playlist runs because no entry covers this instant.
    public var isFallback: Bool { entry == nil && playlistName != nil }
}

/// One zone of a playing layout: where it is and what its playlist plays.
public struct ZoneState: Sendable {
    /// The zone: its name, rectangle, gravity, z and `audio` as written.
    public var zone: LayoutZone
    /// Whether this zone's sound plays (``Layout/soundZoneIndex``): the others play muted.
    public var playsSound: Bool
    /// The zone's playlist, placed exactly as an entry naming that playlist for the same window
    /// would place it: ``ProgrammeState/playlistName``, item, repetition, position, media time,
    /// item start and end. Its ``ProgrammeState/nextChange`` is when this zone's item changes or the
    /// window ends, whichever comes first; its entry and window are the layout entry's, and it has
    /// no zones of its own.
    public var state: ProgrammeState
}

/// The pure function from a schedule and an instant to what plays: the heart of the programme.
///
/// Positions are wall-clock aligned: an entry's playlist starts at the start of its window and
/// loops; the fallback playlist loops as if it had started at 1970-01-01T00:00Z. So after an
/// interrupt (or a higher-priority entry) ends, the programme resumes exactly where it would have
/// been, and two screens with the same schedule show the same thing.
///
/// Item lengths come from ``MediaItem/playDuration``; an item whose length is unknown or
/// indefinite (a live stream) plays until its entry's window ends.
public struct ScheduleResolver: Sendable {
    public let schedule: Schedule
    /// How far ahead ``ProgrammeState/nextChange`` is searched when the current item does not end:
    /// a century, so a window however rare (a rule firing every few years) is found. The search
    /// widens geometrically, so a near change costs a few days of occurrences and "nothing for a
    /// century" a bounded scan of it. ``timeline(from:to:entriesOnly:maximumChanges:)`` searches to
    /// its end if that is farther.
    public var horizonDays: Int = 36_525

    /// The longest interrupt searched back for: one whose playlist runs longer is absurd.
    static let interruptLookbackDays = 400

    public init(schedule: Schedule) {
        self.schedule = schedule
    }

    private var zone: ZoneInfo { schedule.timeZone }

    // MARK: Occurrences

    /// The window of `entry` that starts on `date`, if it has one (and it is not empty).
    public func occurrence(of entry: Entry, on date: LocalDate) -> Occurrence? {
        guard entry.startsWindow(on: date) else { return nil }
        let startTime = entry.start ?? .midnight
        let start = zone.instant(for: LocalDateTime(date: date, time: startTime))
        var end: UTCInstant
        if let endTime = entry.end {
            if endTime == .endOfDay {
                end = zone.instant(for: LocalDateTime(date: date.adding(days: 1), time: .midnight))
            } else {
                let endDate = endTime <= startTime ? date.adding(days: 1) : date
                end = zone.instant(for: LocalDateTime(date: endDate, time: endTime))
            }
        } else if entry.isInterrupt, let pass = entry.content.playlistName.flatMap(passNanoseconds) {
            end = UTCInstant(nanosecondsSinceEpoch: saturatingSum(start.nanosecondsSinceEpoch, pass))
        } else {
            end = zone.instant(for: LocalDateTime(date: date.adding(days: 1), time: .midnight))
        }
        // An interrupt plays its playlist once, even inside a longer window.
        if entry.isInterrupt, entry.end != nil, let pass = entry.content.playlistName.flatMap(passNanoseconds) {
            end = min(end, UTCInstant(nanosecondsSinceEpoch: saturatingSum(start.nanosecondsSinceEpoch, pass)))
        }
        guard end > start else { return nil }
        return Occurrence(entryName: entry.name, date: date, start: start, end: end)
    }

    /// How many days before an instant's local date a window containing it may have started.
    func lookbackDays(_ entry: Entry) -> Int {
        if entry.isInterrupt, entry.end == nil, let pass = entry.content.playlistName.flatMap(passNanoseconds) {
            // An interrupt longer than that is absurd; do not search further back for it.
            return min(Int(pass / 86_400_000_000_000), ScheduleResolver.interruptLookbackDays) + 2
        }
        return 2
    }

    /// The windows of `entry` that overlap `from ..< to`, in order.
    public func occurrences(of entry: Entry, from: UTCInstant, to: UTCInstant) -> [Occurrence] {
        let first = zone.localDateTime(at: from).date.adding(days: -lookbackDays(entry))
        let last = zone.localDateTime(at: to).date.adding(days: 1)
        var result: [Occurrence] = []
        var date = first
        while date <= last {
            if let occurrence = occurrence(of: entry, on: date), occurrence.end > from, occurrence.start < to {
                result.append(occurrence)
            }
            date = date.adding(days: 1)
        }
        return result
    }

    /// The windows of every entry active at `instant`.
    public func activeOccurrences(at instant: UTCInstant) -> [(entry: Entry, occurrence: Occurrence)] {
        let next = UTCInstant(nanosecondsSinceEpoch: saturatingSum(instant.nanosecondsSinceEpoch, 1))
        var result: [(Entry, Occurrence)] = []
        for entry in schedule.entries {
            for occurrence in occurrences(of: entry, from: instant, to: next) where occurrence.start <= instant && instant < occurrence.end {
                result.append((entry, occurrence))
            }
        }
        return result
    }

    /// The entry and window that win at `instant`: interrupts first, then higher priority, then
    /// the later start, then the name.
    public func winner(at instant: UTCInstant) -> (entry: Entry, occurrence: Occurrence)? {
        activeOccurrences(at: instant).min { a, b in
            if a.entry.isInterrupt != b.entry.isInterrupt { return a.entry.isInterrupt }
            if a.entry.priority != b.entry.priority { return a.entry.priority > b.entry.priority }
            if a.occurrence.start != b.occurrence.start { return a.occurrence.start > b.occurrence.start }
            return a.entry.name < b.entry.name
        }
    }

    // MARK: Resolving

    /// What plays at `instant`, where in it, and when that next changes.
    public func resolve(at instant: UTCInstant) -> ProgrammeState {
        let win = winner(at: instant)
        var state = place(at: instant, winner: win)
        let ends = itemEnds(state)
        let firstEnd = ends.compactMap { $0 }.min()
        state.nextChange = nextWinnerChange(after: instant, current: win, limit: firstEnd)
        if !state.zones.isEmpty {
            // Each zone changes at its own item's end or the window's change: when the search up to
            // the first item's end found no window change, search on to the last one's.
            var windowChange = state.nextChange
            if let firstEnd, windowChange.map({ $0 >= firstEnd }) ?? true {
                let lastEnd = ends.contains { $0 == nil } ? nil : ends.compactMap { $0 }.max()
                windowChange = nextWinnerChange(after: instant, current: win, limit: lastEnd)
            }
            setZoneChanges(&state, windowChange: windowChange)
        }
        return state
    }

    /// The state at `instant` under `win`, without the next changes.
    func place(at instant: UTCInstant, winner win: (entry: Entry, occurrence: Occurrence)?) -> ProgrammeState {
        guard let win else {
            // The fallback loops as if it had started at the epoch.
            return place(playlist: schedule.fallbackPlaylist, from: UTCInstant(nanosecondsSinceEpoch: 0), loops: true, at: instant, winner: nil)
        }
        switch win.entry.content {
        case .playlist(let name):
            return place(playlist: name, from: win.occurrence.start, loops: !win.entry.isInterrupt, at: instant, winner: win)
        case .layout(let name):
            var state = place(playlist: nil, from: win.occurrence.start, loops: true, at: instant, winner: win)
            state.layoutName = name
            if let layout = schedule.layouts[name] {
                let sound = layout.soundZoneIndex
                state.zones = layout.zones.enumerated().map { index, zone in
                    // Each zone's playlist runs from the window's start, as a playlist entry's would.
                    ZoneState(zone: zone, playsSound: index == sound,
                              state: place(playlist: zone.playlist, from: win.occurrence.start, loops: !win.entry.isInterrupt, at: instant, winner: win))
                }
            }
            return state
        }
    }

    /// Where `playlistName`, started at `anchor` and looping (or, for an interrupt, played once),
    /// is at `instant`: the one placement every playlist goes through — an entry's, the fallback's
    /// and each zone's of a layout.
    func place(playlist playlistName: String?, from anchor: UTCInstant, loops: Bool, at instant: UTCInstant,
               winner win: (entry: Entry, occurrence: Occurrence)?) -> ProgrammeState {
        var state = ProgrammeState(instant: instant, entry: win?.entry, occurrence: win?.occurrence, playlistName: playlistName,
                                   itemIndex: nil, repetition: 0, position: .zero, mediaTime: .zero, itemStart: nil, itemEnd: nil,
                                   nextChange: nil)
        if let playlistName, let playlist = schedule.playlists[playlistName] {
            let elapsed = saturatingDifference(instant.nanosecondsSinceEpoch, anchor.nanosecondsSinceEpoch)
            if let place = locate(elapsed: elapsed, in: playlist, loops: loops) {
                let item = playlist.items[place.index]
                state.itemIndex = place.index
                state.repetition = place.repetition
                state.position = MediaTime(value: place.position, timescale: 1_000_000_000)
                state.mediaTime = (item.inPoint ?? .zero) + state.position
                state.itemStart = UTCInstant(nanosecondsSinceEpoch: saturatingDifference(instant.nanosecondsSinceEpoch, place.position))
                if let remaining = place.remaining {
                    state.itemEnd = UTCInstant(nanosecondsSinceEpoch: saturatingSum(instant.nanosecondsSinceEpoch, remaining))
                }
            }
        }
        return state
    }

    /// When the state's items end: the playlist's item's, or each zone's (`nil`: does not end).
    func itemEnds(_ state: ProgrammeState) -> [UTCInstant?] {
        state.layoutName == nil ? [state.itemEnd] : state.zones.map(\.state.itemEnd)
    }

    /// Each zone's next change: its item's end or `windowChange`, whichever comes first.
    func setZoneChanges(_ state: inout ProgrammeState, windowChange: UTCInstant?) {
        for index in state.zones.indices {
            state.zones[index].state.nextChange = earlier(state.zones[index].state.itemEnd, windowChange)
        }
    }

    /// Every change from `from` (whose state comes first) up to but excluding `to`: each window
    /// change and each item change (for a layout, each change of any zone's item). Each state is
    /// the one ``resolve(at:)`` gives for its instant. With `entriesOnly`, only changes of the
    /// winning window are listed (and each state's ``ProgrammeState/nextChange`` is the next window change).
    public func timeline(from: UTCInstant, to: UTCInstant, entriesOnly: Bool = false, maximumChanges: Int = 100_000) -> [ProgrammeState] {
        var states: [ProgrammeState] = []
        var instant = from
        while instant < to && states.count < maximumChanges {
            let win = winner(at: instant)
            // One search per window, as far as the timeline goes (--to a decade ahead searches a
            // decade); the items inside it only need arithmetic.
            let windowChange = nextWinnerChange(after: instant, current: win, limit: nil, searchingAtLeastTo: to)
            var t = instant
            while true {
                var state = place(at: t, winner: win)
                let next = entriesOnly ? windowChange : earlier(itemEnds(state).compactMap { $0 }.min(), windowChange)
                state.nextChange = next
                setZoneChanges(&state, windowChange: windowChange)
                states.append(state)
                guard let n = next, n > t, n < to, states.count < maximumChanges else { return states }
                t = n
                if n == windowChange { break }
            }
            instant = t
        }
        return states
    }

    /// The first instant in `(instant, limit]` where the winning window differs, or `limit`;
    /// the search goes ``horizonDays`` ahead or to `searchingAtLeastTo`, whichever is farther, a
    /// few days at first, then four times as many each round.
    func nextWinnerChange(after instant: UTCInstant, current: (entry: Entry, occurrence: Occurrence)?, limit: UTCInstant?,
                          searchingAtLeastTo extent: UTCInstant? = nil) -> UTCInstant? {
        var farthest = UTCInstant(nanosecondsSinceEpoch: saturatingSum(instant.nanosecondsSinceEpoch, saturatingProduct(Int64(horizonDays), 86_400_000_000_000)))
        if let extent { farthest = max(farthest, extent) }
        let horizon = min(limit ?? farthest, farthest)
        var chunkStart = instant
        var chunkDays: Int64 = 2
        while chunkStart < horizon {
            let chunkEnd = min(horizon, UTCInstant(nanosecondsSinceEpoch: saturatingSum(chunkStart.nanosecondsSinceEpoch, saturatingProduct(chunkDays, 86_400_000_000_000))))
            var boundaries = Set<UTCInstant>()
            for entry in schedule.entries {
                for occurrence in occurrences(of: entry, from: chunkStart, to: UTCInstant(nanosecondsSinceEpoch: saturatingSum(chunkEnd.nanosecondsSinceEpoch, 1))) {
                    for boundary in [occurrence.start, occurrence.end] where boundary > chunkStart && boundary <= chunkEnd {
                        boundaries.insert(boundary)
                    }
                }
            }
            for boundary in boundaries.sorted() {
                let next = winner(at: boundary)
                if next?.entry.name != current?.entry.name || next?.occurrence.start != current?.occurrence.start {
                    return boundary
                }
            }
            chunkStart = chunkEnd
            chunkDays *= 4
        }
        // Nothing within the horizon: the item's end if it comes first, else "no change in sight".
        guard let limit, limit <= farthest else { return nil }
        return limit
    }

    // MARK: Playlist arithmetic (nanoseconds)

    /// One pass of a playlist in nanoseconds; `nil` when an item's length is unknown or indefinite.
    func passNanoseconds(_ playlistName: String) -> Int64? {
        guard let playlist = schedule.playlists[playlistName] else { return nil }
        var total: Int64 = 0
        for item in playlist.items {
            guard let play = ScheduleResolver.nanoseconds(item.playDuration) else { return nil }
            total = saturatingSum(total, saturatingProduct(play, Int64(item.repeatCount)))
        }
        return total
    }

    static func nanoseconds(_ time: MediaTime?) -> Int64? {
        guard let time, time.isNumeric else { return nil }
        let ns = time.convertScale(1_000_000_000, method: .roundTowardNegativeInfinity)
        return ns.isNumeric ? max(0, ns.value) : nil
    }

    struct Place {
        var index: Int
        var repetition: Int
        /// Into the current play, ns.
        var position: Int64
        /// Until the current play ends, ns; `nil` when it does not end.
        var remaining: Int64?
    }

    /// Where `elapsed` nanoseconds after the playlist started falls.
    func locate(elapsed: Int64, in playlist: Playlist, loops: Bool) -> Place? {
        guard !playlist.items.isEmpty else { return nil }
        var offset = max(0, elapsed)
        let plays = playlist.items.map { ScheduleResolver.nanoseconds($0.playDuration) }
        let known = plays.allSatisfy { $0 != nil }
        if known {
            let pass = zip(plays, playlist.items).reduce(Int64(0)) { saturatingSum($0, saturatingProduct($1.0!, Int64($1.1.repeatCount))) }
            guard pass > 0 else { return Place(index: 0, repetition: 0, position: 0, remaining: nil) }
            if loops { offset %= pass } else if offset >= pass {
                // A non-looping pass has ended: hold the end of the last item.
                let last = playlist.items.count - 1
                return Place(index: last, repetition: playlist.items[last].repeatCount - 1, position: plays[last]!, remaining: nil)
            }
        }
        for (index, item) in playlist.items.enumerated() {
            guard let play = plays[index] else {
                return Place(index: index, repetition: 0, position: offset, remaining: nil)
            }
            let total = saturatingProduct(play, Int64(item.repeatCount))
            if offset < total {
                let repetition = Int(offset / play)
                let position = offset - Int64(repetition) * play
                return Place(index: index, repetition: repetition, position: position, remaining: play - position)
            }
            offset -= total
        }
        return nil
    }
}

/// The earlier of two instants, `nil` standing for "never".
func earlier(_ a: UTCInstant?, _ b: UTCInstant?) -> UTCInstant? {
    guard let a else { return b }
    guard let b else { return a }
    return min(a, b)
}
