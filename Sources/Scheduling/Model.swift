public import MediaSinks
public import MediaTime

/// A schedule: what plays when on one screen. Read with ``ScheduleReader``; see Schedules/README.md
/// for the file format.
public struct Schedule: Sendable {
    /// The format version the file declares (``ScheduleReader/supportedVersions``).
    public var version: Int
    /// The file the schedule was read from, as given (for messages).
    public var sourcePath: String
    /// The absolute folder of that file, against which relative media paths were resolved.
    public var baseDirectory: String
    /// The zone in which days, windows and recurrences are read.
    public var timeZone: ZoneInfo
    public var display: DisplaySettings
    public var restartPolicy: RestartPolicy
    /// Playlists by name.
    public var playlists: [String: Playlist]
    /// Layouts (screens divided into zones, each playing a playlist) by name.
    public var layouts: [String: Layout]
    /// Entries, sorted by name.
    public var entries: [Entry]
    /// The playlist for times no entry covers.
    public var fallbackPlaylist: String?

    public init(version: Int = 1, sourcePath: String = "", baseDirectory: String = ".", timeZone: ZoneInfo = .utc,
                display: DisplaySettings = DisplaySettings(), restartPolicy: RestartPolicy = RestartPolicy(),
                playlists: [String: Playlist] = [:], layouts: [String: Layout] = [:], entries: [Entry] = [], fallbackPlaylist: String? = nil) {
        self.version = version
        self.sourcePath = sourcePath
        self.baseDirectory = baseDirectory
        self.timeZone = timeZone
        self.display = display
        self.restartPolicy = restartPolicy
        self.playlists = playlists
        self.layouts = layouts
        self.entries = entries.sorted { $0.name < $1.name }
        self.fallbackPlaylist = fallbackPlaylist
    }

    /// Fills in each item's ``MediaItem/mediaDuration`` from `durations` (keyed by resolved path or URL);
    /// the resolver needs durations to know where in a playlist it is.
    public func withMediaDurations(_ durations: [String: MediaTime]) -> Schedule {
        var copy = self
        for (name, var playlist) in copy.playlists {
            for index in playlist.items.indices {
                if let d = durations[playlist.items[index].source.location] { playlist.items[index].mediaDuration = d }
            }
            copy.playlists[name] = playlist
        }
        return copy
    }
}

/// How the screen is driven.
public struct DisplaySettings: Sendable, Hashable {
    /// "auto" (the connector's preferred mode) or an explicit mode.
    public enum Mode: Sendable, Hashable, CustomStringConvertible {
        case automatic
        case explicit(width: Int, height: Int, refreshHz: Int?)

        public var description: String {
            switch self {
            case .automatic: return "auto"
            case .explicit(let w, let h, let hz): return "\(w)x\(h)" + (hz.map { "@\($0)" } ?? "")
            }
        }
    }

    public var mode: Mode
    /// Clockwise rotation of the picture, for screens mounted on their side: 0, 90, 180 or 270.
    public var rotationDegrees: Int
    /// How video fills the screen unless an item says otherwise.
    public var gravity: VideoGravity
    /// The DRM connector name ("HDMI-A-1"); `nil` picks the first connected one.
    public var connector: String?
    /// This screen's part of a video wall (`wall` or `crop`); `nil`: the whole picture.
    public var wall: WallTile?

    public init(mode: Mode = .automatic, rotationDegrees: Int = 0, gravity: VideoGravity = .resizeAspect, connector: String? = nil,
                wall: WallTile? = nil) {
        self.mode = mode
        self.rotationDegrees = rotationDegrees
        self.gravity = gravity
        self.connector = connector
        self.wall = wall
    }
}

/// What the watchdog does when an item fails.
public struct RestartPolicy: Sendable, Hashable {
    /// What to do once an item's retries are spent.
    public enum OnFailure: String, Sendable, Hashable, CaseIterable {
        /// Go on with the next item.
        case skip
        /// Switch to the fallback playlist at once.
        case fallback
    }

    /// How many times a failing item is retried before ``onFailure`` applies.
    public var retries: Int
    /// The wait before the first retry; each later retry waits ``backoffMultiplier`` times longer.
    public var backoff: MediaTime
    public var backoffMultiplier: Double
    /// The longest wait between retries.
    public var maximumBackoff: MediaTime
    public var onFailure: OnFailure
    /// After this many consecutive failed items the fallback playlist plays until the next entry change.
    public var fallbackAfter: Int

    public init(retries: Int = 2, backoff: MediaTime = MediaTime(value: 1, timescale: 1), backoffMultiplier: Double = 2,
                maximumBackoff: MediaTime = MediaTime(value: 30, timescale: 1), onFailure: OnFailure = .skip, fallbackAfter: Int = 3) {
        self.retries = retries
        self.backoff = backoff
        self.backoffMultiplier = backoffMultiplier
        self.maximumBackoff = maximumBackoff
        self.onFailure = onFailure
        self.fallbackAfter = fallbackAfter
    }

    /// The wait before retry number `attempt` (1-based).
    public func delay(beforeRetry attempt: Int) -> MediaTime {
        var delay = backoff
        for _ in 1..<max(1, attempt) {
            delay = delay.multiplied(by: backoffMultiplier)
            if delay >= maximumBackoff { return maximumBackoff }
        }
        return MediaTime.minimum(delay, maximumBackoff)
    }
}

/// A named, ordered list of items.
public struct Playlist: Sendable {
    public var name: String
    public var items: [MediaItem]
    public var location: SourceLocation

    public init(name: String, items: [MediaItem], location: SourceLocation) {
        self.name = name
        self.items = items
        self.location = location
    }

    /// The length of one pass through the playlist; `nil` when an item's length is unknown or indefinite.
    public var passDuration: MediaTime? {
        var total = MediaTime.zero
        for item in items {
            guard let d = item.totalDuration, d.isNumeric else { return nil }
            total = total + d
        }
        return total
    }
}

/// Where an item's picture comes from.
public enum MediaSource: Sendable, Hashable {
    /// A video (or audio) file; `path` is resolved against the schedule's folder.
    case videoFile(path: String)
    /// A network stream or file URL (http, https, rtsp, rtmp, udp, srt, file…).
    case url(String)
    /// A still picture shown for the item's duration.
    case image(path: String)

    /// The resolved path or the URL: the key for media durations.
    public var location: String {
        switch self {
        case .videoFile(let path), .image(let path): return path
        case .url(let url): return url
        }
    }

    public var isStill: Bool { if case .image = self { return true } else { return false } }

    /// A URL other than `file:`: a stream that arrives as it is sent, which cannot be sought to
    /// where the wall clock is.
    public var isNetworkStream: Bool {
        guard case .url(let url) = self else { return false }
        return !url.lowercased().hasPrefix("file:")
    }
}

/// One thing in a playlist.
public struct MediaItem: Sendable {
    public var source: MediaSource
    /// The path or URL as written in the file.
    public var writtenLocation: String
    /// For images, how long they show; for videos, an optional cap on the played length.
    public var duration: MediaTime?
    /// The media's own length, when known (filled by ``Schedule/withMediaDurations(_:)``).
    public var mediaDuration: MediaTime?
    /// 0 ... 1.
    public var volume: Double
    public var isMuted: Bool
    /// Overrides the display's gravity for this item.
    public var gravity: VideoGravity?
    /// Trim points in the media's time line.
    public var inPoint: MediaTime?
    public var outPoint: MediaTime?
    /// How many times the item plays in a row (>= 1).
    public var repeatCount: Int
    public var overlays: [Overlay]
    public var location: SourceLocation

    public init(source: MediaSource, writtenLocation: String, duration: MediaTime? = nil, mediaDuration: MediaTime? = nil,
                volume: Double = 1, isMuted: Bool = false, gravity: VideoGravity? = nil, inPoint: MediaTime? = nil,
                outPoint: MediaTime? = nil, repeatCount: Int = 1, overlays: [Overlay] = [], location: SourceLocation) {
        self.source = source
        self.writtenLocation = writtenLocation
        self.duration = duration
        self.mediaDuration = mediaDuration
        self.volume = volume
        self.isMuted = isMuted
        self.gravity = gravity
        self.inPoint = inPoint
        self.outPoint = outPoint
        self.repeatCount = repeatCount
        self.overlays = overlays
        self.location = location
    }

    /// The length of one play: from the in point to the out point (or the media's end), capped by
    /// ``duration``; an image's ``duration``. `nil` when unknown; ``MediaTime/indefinite`` for live streams.
    public var playDuration: MediaTime? {
        if source.isStill { return duration }
        let start = inPoint ?? .zero
        var length: MediaTime?
        if let outPoint {
            length = outPoint - start
        } else if let mediaDuration {
            length = mediaDuration.isNumeric ? mediaDuration - start : mediaDuration
        }
        if let duration {
            guard let known = length, known.isNumeric else { return duration }
            return MediaTime.minimum(known, duration)
        }
        return length
    }

    /// ``playDuration`` times ``repeatCount``.
    public var totalDuration: MediaTime? {
        guard let play = playDuration else { return nil }
        guard play.isNumeric else { return play }
        return play * Int32(clamping: repeatCount)
    }

    /// Each overlay with the time range it shows in, within one play of the item (0 = the in point).
    /// Overlays whose cue cannot be resolved (a fraction or end-relative cue while the length is unknown) are left out.
    public func overlayTimeline() -> [(overlay: Overlay, range: TimeRange)] {
        let length = playDuration
        return overlays.compactMap { overlay in
            guard let start = overlay.cue.resolve(itemDuration: length) else { return nil }
            let end: MediaTime
            if let shown = overlay.duration {
                end = start + shown
            } else if let length, length.isNumeric {
                end = length
            } else {
                end = .positiveInfinity
            }
            return (overlay, TimeRange(start: start, end: end))
        }
    }
}

/// When inside an item an overlay appears.
public enum Cue: Sendable, Hashable, CustomStringConvertible {
    /// At a time from the item's start ("00:00:12.5", "12.5s").
    case absolute(MediaTime)
    /// At a fraction of the item's length ("25%" is 25/100).
    case fraction(numerator: Int32, denominator: Int32)
    /// Before the item's end ("end-5s"; "end" is `fromEnd(.zero)`).
    case fromEnd(MediaTime)

    /// The cue as a time in the item (0 = the item's in point), given its play length;
    /// `nil` when it depends on an unknown length.
    public func resolve(itemDuration: MediaTime?) -> MediaTime? {
        switch self {
        case .absolute(let time): return time
        case .fraction(let numerator, let denominator):
            guard let d = itemDuration, d.isNumeric else { return nil }
            // Exact when the product's timescale fits; otherwise to the nanosecond.
            let scale = Int64(d.timescale) * Int64(denominator)
            let value = Int128(d.value) * Int128(numerator)
            if scale <= Int64(Int32.max), let exact = Int64(exactly: value) {
                return MediaTime(value: exact, timescale: Int32(scale))
            }
            let ns = d.convertScale(1_000_000_000, method: .roundTowardNegativeInfinity)
            return ns.multiplied(byRatio: numerator, over: denominator, method: .roundTowardNegativeInfinity)
        case .fromEnd(let offset):
            guard let d = itemDuration, d.isNumeric else { return nil }
            return d - offset
        }
    }

    /// Parses "00:00:12.5", "12.5s", "25%", "end-5s", "end".
    public init?(parsing text: String) {
        let trimmed = text.trimmingSpaces
        if trimmed.hasSuffix("%") {
            let number = String(trimmed.dropLast()).trimmingSpaces
            guard let value = TimeSyntax.decimal(number), value <= MediaTime(value: 100, timescale: 1),
                  Int64(value.timescale) * 100 <= Int64(Int32.max) else { return nil }
            self = .fraction(numerator: Int32(value.value), denominator: value.timescale * 100)
            return
        }
        if trimmed.lowercased().hasPrefix("end") {
            let rest = String(trimmed.dropFirst(3)).trimmingSpaces
            if rest.isEmpty { self = .fromEnd(.zero); return }
            guard rest.hasPrefix("-"), let offset = TimeSyntax.duration(String(rest.dropFirst())) else { return nil }
            self = .fromEnd(offset)
            return
        }
        guard let time = TimeSyntax.duration(trimmed) else { return nil }
        self = .absolute(time)
    }

    public var description: String {
        switch self {
        case .absolute(let t): return TimeSyntax.clockString(t)
        case .fraction(let n, let d): return "\(MediaTime.format(seconds: Double(n) * 100 / Double(d), decimals: 2))%"
        case .fromEnd(let t): return "end-\(TimeSyntax.clockString(t))"
        }
    }
}

/// A picture or text drawn over an item.
public struct Overlay: Sendable {
    public enum Content: Sendable {
        case image(path: String)
        case text(TextStyle)
    }

    /// How a text overlay looks.
    public struct TextStyle: Sendable, Hashable {
        public var text: String
        /// Font size as a fraction of the overlay rectangle's height (0 ... 1].
        public var fontSize: Double
        /// "#RRGGBB" or "#RRGGBBAA".
        public var color: RGBAColor
        public var background: RGBAColor?
        /// A scrolling ticker: the text runs right to left at this many rectangle-widths per second;
        /// `nil` for static text.
        public var tickerSpeed: Double?

        public init(text: String, fontSize: Double = 0.7, color: RGBAColor = .white, background: RGBAColor? = nil, tickerSpeed: Double? = nil) {
            self.text = text
            self.fontSize = fontSize
            self.color = color
            self.background = background
            self.tickerSpeed = tickerSpeed
        }
    }

    public var content: Content
    /// Where on the screen, as fractions of its width and height (0,0 top left).
    public var rect: OverlayRect
    /// Higher draws on top.
    public var zIndex: Int
    /// 0 ... 1.
    public var opacity: Double
    public var fadeIn: MediaTime
    public var fadeOut: MediaTime
    public var cue: Cue
    /// How long it shows; `nil` until the item ends.
    public var duration: MediaTime?
    public var location: SourceLocation
    /// Where the cue was written, for messages.
    public var cueLocation: SourceLocation?

    public init(content: Content, rect: OverlayRect, zIndex: Int = 0, opacity: Double = 1, fadeIn: MediaTime = .zero,
                fadeOut: MediaTime = .zero, cue: Cue, duration: MediaTime? = nil, location: SourceLocation) {
        self.content = content
        self.rect = rect
        self.zIndex = zIndex
        self.opacity = opacity
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
        self.cue = cue
        self.duration = duration
        self.location = location
    }
}

/// A rectangle in fractions of what it is placed on: the screen as the viewer sees it for an
/// overlay of a full-screen item and for a layout's zone, the zone for an overlay of an item
/// playing in a zone.
public struct OverlayRect: Sendable, Hashable {
    public var x: Double, y: Double, width: Double, height: Double
    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle common to both, when it has an area (more than a millionth of a fraction
    /// each way, so that zones that meet edge to edge, `0.75` and `0.5 + 0.25`, do not overlap).
    public func intersection(_ other: OverlayRect) -> OverlayRect? {
        let left = max(x, other.x), top = max(y, other.y)
        let right = min(x + width, other.x + other.width), bottom = min(y + height, other.y + other.height)
        guard right - left > 1e-6, bottom - top > 1e-6 else { return nil }
        return OverlayRect(x: left, y: top, width: right - left, height: bottom - top)
    }
}

/// A screen divided into zones, each playing its own playlist on the wall clock (an entry names
/// a layout instead of a playlist).
public struct Layout: Sendable {
    public var name: String
    /// What shows where no zone covers the screen (and behind letterboxed video).
    public var background: RGBAColor
    /// The zones in the order they were written.
    public var zones: [LayoutZone]
    public var location: SourceLocation

    public init(name: String, background: RGBAColor = .black, zones: [LayoutZone], location: SourceLocation) {
        self.name = name
        self.background = background
        self.zones = zones
        self.location = location
    }

    /// The zone whose sound plays: the one marked `audio = true`, else the first not marked
    /// `audio = false`; `nil` when every zone is marked silent. At most one zone plays sound.
    public var soundZoneIndex: Int? {
        zones.firstIndex { $0.audio == true } ?? zones.firstIndex { $0.audio != false }
    }
}

/// One rectangle of a layout and the playlist it plays.
public struct LayoutZone: Sendable {
    /// Unique in its layout.
    public var name: String
    /// Where on the screen, as fractions of its width and height as the viewer sees it (0,0 top left).
    public var rect: OverlayRect
    public var playlist: String
    /// How video fits the zone unless an item says otherwise; `nil`: the display's gravity.
    public var gravity: VideoGravity?
    /// `audio` as written: `true` for the zone whose sound plays, `false` for a zone that must
    /// stay silent, `nil` when not said (see ``Layout/soundZoneIndex``).
    public var audio: Bool?
    /// Higher draws on top; zones that overlap differ in it.
    public var zIndex: Int
    public var location: SourceLocation

    public init(name: String, rect: OverlayRect = OverlayRect(x: 0, y: 0, width: 1, height: 1), playlist: String,
                gravity: VideoGravity? = nil, audio: Bool? = nil, zIndex: Int = 0, location: SourceLocation) {
        self.name = name
        self.rect = rect
        self.playlist = playlist
        self.gravity = gravity
        self.audio = audio
        self.zIndex = zIndex
        self.location = location
    }
}

/// What an entry plays in its windows.
public enum EntryContent: Sendable, Hashable {
    /// One playlist, full screen.
    case playlist(String)
    /// A layout: each of its zones plays its playlist.
    case layout(String)

    /// The playlist's name; `nil` for a layout.
    public var playlistName: String? {
        if case .playlist(let name) = self { return name } else { return nil }
    }

    /// The layout's name; `nil` for a playlist.
    public var layoutName: String? {
        if case .layout(let name) = self { return name } else { return nil }
    }
}

/// What plays when: a playlist or a layout, in windows.
public struct Entry: Sendable {
    public var name: String
    /// The playlist or layout its windows play (an interrupt always plays a playlist).
    public var content: EntryContent
    /// Higher wins when entries overlap.
    public var priority: Int
    /// An interrupt pre-empts whatever plays at its start, plays its playlist once (or until its
    /// window ends), then hands back to what the normal programme would be showing at that moment.
    public var isInterrupt: Bool
    /// Days of the week on which a window may start; `nil` for every day.
    public var days: Set<Weekday>?
    /// The daily window; `start` nil means 00:00. `end` nil means 24:00 (or, for an interrupt,
    /// one pass of its playlist). An end at or before the start makes an overnight window that
    /// ends on the next day.
    public var start: LocalTime?
    public var end: LocalTime?
    /// The first and last dates (inclusive) on which a window may start.
    public var firstDate: LocalDate?
    public var lastDate: LocalDate?
    public var recurrence: RecurrenceRule?
    /// Dates on which no window starts (RFC 5545 EXDATE, by date).
    public var exceptionDates: Set<LocalDate>
    public var location: SourceLocation

    public init(name: String, content: EntryContent, priority: Int = 0, isInterrupt: Bool = false, days: Set<Weekday>? = nil,
                start: LocalTime? = nil, end: LocalTime? = nil, firstDate: LocalDate? = nil, lastDate: LocalDate? = nil,
                recurrence: RecurrenceRule? = nil, exceptionDates: Set<LocalDate> = [], location: SourceLocation) {
        self.name = name
        self.content = content
        self.priority = priority
        self.isInterrupt = isInterrupt
        self.days = days
        self.start = start
        self.end = end
        self.firstDate = firstDate
        self.lastDate = lastDate
        self.recurrence = recurrence
        self.exceptionDates = exceptionDates
        self.location = location
    }

    /// Whether a window starts on `date`.
    public func startsWindow(on date: LocalDate) -> Bool {
        if let firstDate, date < firstDate { return false }
        if let lastDate, date > lastDate { return false }
        if let days, !days.contains(date.weekday) { return false }
        if exceptionDates.contains(date) { return false }
        if let recurrence { return recurrence.occurs(on: date) }
        return true
    }

    /// Whether the window runs past midnight.
    public var isOvernight: Bool {
        guard let end else { return false }
        return end <= (start ?? .midnight) && end != .endOfDay
    }
}
