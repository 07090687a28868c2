import FoundationEssentials
public import MediaTime

/// What a media probe learned about one item's source.
public enum MediaInspection: Sendable, Hashable {
    /// Readable, with this length (``MediaTime/indefinite`` for a live stream).
    case duration(MediaTime)
    /// Readable; the length is not known (not probed, or a format without one).
    case readable
    /// The file does not exist.
    case missing(String)
    /// The file exists but cannot be opened or decoded; the reason (FFmpeg's message where there is one).
    case unreadable(String)
}

/// Probes media for validation. The CLI provides an FFmpeg-backed one; the Schedule module
/// itself depends on no media library.
public protocol MediaInspector: Sendable {
    func inspect(_ source: MediaSource) -> MediaInspection
}

/// Checks that files exist and can be opened; knows no durations. URLs are not contacted.
public struct FileAccessInspector: MediaInspector {
    public init() {}

    public func inspect(_ source: MediaSource) -> MediaInspection {
        switch source {
        case .url: return .readable
        case .videoFile(let path), .image(let path):
            var isDirectory = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return .missing("no such file") }
            if isDirectory { return .unreadable("is a folder, not a media file") }
            guard FileManager.default.isReadableFile(atPath: path) else { return .unreadable("permission denied") }
            if let attributes = try? FileManager.default.attributesOfItem(atPath: path) {
                let size = (attributes[.size] as? Int).map(Int64.init) ?? (attributes[.size] as? UInt64).map { Int64($0) } ?? (attributes[.size] as? Int64)
                if size == 0 { return .unreadable("the file is empty") }
            }
            return .readable
        }
    }
}

/// The outcome of `vitrine validate`.
public struct ValidationReport: Sendable {
    /// Every problem, in file order.
    public var diagnostics: [ScheduleDiagnostic]
    /// The file could not be read at all.
    public var isUnreadable: Bool
    /// The schedule, with media durations filled in, when it is valid.
    public var schedule: Schedule?

    public var errorCount: Int { diagnostics.filter { $0.severity == .error }.count }
    public var isValid: Bool { !isUnreadable && errorCount == 0 }
    /// 0 valid, 1 invalid, 2 unreadable.
    public var exitStatus: Int32 { isUnreadable ? 2 : (errorCount > 0 ? 1 : 0) }
}

/// The meaning checks that need the whole schedule, or the media: missing and unreadable files,
/// cues outside their item, trim points beyond the media, overlapping equal-priority entries.
public enum ScheduleValidator {
    /// Reads and checks the schedule at `path`. `referenceDate` anchors the overlap search for
    /// entries without a `from` date (normally today in the schedule's zone).
    public static func validate(path: String, inspector: any MediaInspector = FileAccessInspector(), referenceDate: LocalDate? = nil) -> ValidationReport {
        let read = ScheduleReader.read(path: path)
        return validate(read, inspector: inspector, referenceDate: referenceDate)
    }

    /// Checks already-parsed text (for tests and for JSON arriving from elsewhere).
    public static func validate(text: String, path: String, format: ScheduleFormat? = nil, inspector: any MediaInspector = FileAccessInspector(),
                                referenceDate: LocalDate? = nil) -> ValidationReport {
        validate(ScheduleReader.parse(text: text, path: path, format: format), inspector: inspector, referenceDate: referenceDate)
    }

    static func validate(_ read: ScheduleReader.Result, inspector: any MediaInspector, referenceDate: LocalDate?) -> ValidationReport {
        guard let schedule = read.schedule else {
            return ValidationReport(diagnostics: read.diagnostics, isUnreadable: read.isUnreadable, schedule: nil)
        }
        var log = DiagnosticLog(items: read.diagnostics)
        let checked = check(schedule, inspector: inspector, referenceDate: referenceDate, log: &log)
        return ValidationReport(diagnostics: log.sorted, isUnreadable: false, schedule: log.hasErrors ? nil : checked)
    }

    static func check(_ schedule: Schedule, inspector: any MediaInspector, referenceDate: LocalDate?, log: inout DiagnosticLog) -> Schedule {
        // Media: probe each distinct source once.
        var durations: [String: MediaTime] = [:]
        var inspected: [String: MediaInspection] = [:]
        func probe(_ source: MediaSource) -> MediaInspection {
            if let known = inspected[source.location] { return known }
            let result = inspector.inspect(source)
            inspected[source.location] = result
            return result
        }
        for name in schedule.playlists.keys.sorted() {
            for item in schedule.playlists[name]!.items {
                switch probe(item.source) {
                case .duration(let d): durations[item.source.location] = d
                case .readable: break
                case .missing(let reason):
                    log.error(.missingMedia, item.location, "media file \"\(item.writtenLocation)\" not found (\(item.source.location): \(reason))")
                case .unreadable(let reason):
                    log.error(.unreadableMedia, item.location, "media file \"\(item.writtenLocation)\" cannot be read: \(reason)")
                }
                for overlay in item.overlays {
                    guard case .image(let path) = overlay.content else { continue }
                    switch probe(.image(path: path)) {
                    case .missing(let reason): log.error(.missingMedia, overlay.location, "overlay image \"\(path)\" not found: \(reason)")
                    case .unreadable(let reason): log.error(.unreadableMedia, overlay.location, "overlay image \"\(path)\" cannot be read: \(reason)")
                    case .duration, .readable: break
                    }
                }
            }
        }
        let withDurations = schedule.withMediaDurations(durations)
        // Trim points and cues against known lengths.
        for name in withDurations.playlists.keys.sorted() {
            for item in withDurations.playlists[name]!.items {
                if let media = item.mediaDuration, media.isNumeric, !item.source.isStill {
                    if let inPoint = item.inPoint, inPoint >= media {
                        log.error(.invalidTrim, item.location, "the in point \(TimeSyntax.clockString(inPoint)) is at or after the end of \"\(item.writtenLocation)\" (\(TimeSyntax.clockString(media)))")
                    }
                    if let outPoint = item.outPoint, outPoint > media {
                        log.error(.invalidTrim, item.location, "the out point \(TimeSyntax.clockString(outPoint)) is after the end of \"\(item.writtenLocation)\" (\(TimeSyntax.clockString(media)))")
                    }
                }
                guard let length = item.playDuration, length.isNumeric, length > .zero else { continue }
                for overlay in item.overlays {
                    checkCue(overlay, itemLength: length, log: &log)
                }
            }
        }
        // Interrupts must know when to hand back.
        let resolver = ScheduleResolver(schedule: withDurations)
        for entry in withDurations.entries where entry.isInterrupt && entry.end == nil {
            if let playlist = entry.content.playlistName, withDurations.playlists[playlist] != nil, resolver.passNanoseconds(playlist) == nil {
                log.warning(.unknownDuration, entry.location, "interrupt \"\(entry.name)\" has no \"end\" and the length of playlist \"\(playlist)\" is not known; it will run until midnight")
            }
        }
        checkOverlaps(resolver, referenceDate: referenceDate, log: &log)
        return withDurations
    }

    /// A cue must fall inside its item; an overlay that outlasts the item is cut short (a warning).
    static func checkCue(_ overlay: Overlay, itemLength: MediaTime, log: inout DiagnosticLog) {
        let location = overlay.cueLocation ?? overlay.location
        guard let start = overlay.cue.resolve(itemDuration: itemLength) else { return }
        if start < .zero || start >= itemLength {
            log.error(.cueOutsideItem, location, "cue \(overlay.cue) falls at \(TimeSyntax.clockString(start)), outside the item (length \(TimeSyntax.clockString(itemLength)))")
        } else if let shown = overlay.duration, start + shown > itemLength {
            log.warning(.cueOutsideItem, location, "the overlay shows until \(TimeSyntax.clockString(start + shown)) but the item ends at \(TimeSyntax.clockString(itemLength)); it will be cut short")
        }
    }

    /// Entries of equal priority (and kind) whose windows overlap: which wins would be arbitrary.
    static func checkOverlaps(_ resolver: ScheduleResolver, referenceDate: LocalDate?, log: inout DiagnosticLog) {
        let entries = resolver.schedule.entries
        let zone = resolver.schedule.timeZone
        let today = referenceDate ?? zone.localDateTime(at: UTCInstant(secondsSinceEpoch: Int64(Date().timeIntervalSince1970))).date
        for (i, a) in entries.enumerated() {
            for b in entries[(i + 1)...] where a.priority == b.priority && a.isInterrupt == b.isInterrupt {
                let firstDay = max(a.firstDate ?? today, b.firstDate ?? today)
                var lastDay = firstDay.adding(days: 400)
                if let l = a.lastDate { lastDay = min(lastDay, l.adding(days: 1)) }
                if let l = b.lastDate { lastDay = min(lastDay, l.adding(days: 1)) }
                guard firstDay <= lastDay else { continue }
                let from = zone.instant(for: LocalDateTime(date: firstDay, time: .midnight))
                let to = zone.instant(for: LocalDateTime(date: lastDay.adding(days: 1), time: .midnight))
                let left = resolver.occurrences(of: a, from: from, to: to)
                let right = resolver.occurrences(of: b, from: from, to: to)
                var j = 0
                search: for x in left {
                    while j < right.count && right[j].end <= x.start { j += 1 }
                    var k = j
                    while k < right.count && right[k].start < x.end {
                        let y = right[k]
                        if y.start < x.end && x.start < y.end {
                            let start = max(x.start, y.start)
                            let local = zone.localDateTime(at: start)
                            let later = a.location < b.location ? b : a
                            let other = later.name == a.name ? b : a
                            log.error(.overlappingEntries, later.location,
                                      "entries \"\(other.name)\" (\(other.location)) and \"\(later.name)\" have the same priority \(a.priority) and overlap, first on \(local.date) at \(local.time); give one a higher priority")
                            break search
                        }
                        k += 1
                    }
                }
            }
        }
    }
}
