import FoundationEssentials
import MediaSinks
import MediaTime

/// The two spellings of a schedule.
public enum ScheduleFormat: String, Sendable, Hashable {
    case toml, json

    /// JSON for ".json" files or text that starts with "{"; TOML otherwise.
    public static func detect(path: String, text: String) -> ScheduleFormat {
        if path.lowercased().hasSuffix(".json") { return .json }
        if path.lowercased().hasSuffix(".toml") { return .toml }
        return text.drop { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }.first == "{" ? .json : .toml
    }
}

/// Reads schedule files (TOML or JSON) into a ``Schedule``, reporting every mistake it finds.
public enum ScheduleReader {
    /// The format versions this reader understands.
    public static let supportedVersions: ClosedRange<Int> = 1...1

    /// The result of reading: a schedule when there were no errors, and every diagnostic found.
    public struct Result: Sendable {
        public var schedule: Schedule?
        public var diagnostics: [ScheduleDiagnostic]
        /// The file could not be read (exit status 2 for `vitrine validate`).
        public var isUnreadable: Bool
    }

    /// Reads and decodes the file at `path`. Media paths resolve against its folder.
    public static func read(path: String) -> Result {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "permission denied or not a regular file" : "no such file"
            return Result(schedule: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: SourceLocation(file: path, line: 0, column: 0),
                                                                          "cannot read the schedule: \(reason)")], isUnreadable: true)
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            return Result(schedule: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: SourceLocation(file: path, line: 0, column: 0),
                                                                          "cannot read the schedule: not UTF-8 text")], isUnreadable: true)
        }
        return parse(text: text, path: path)
    }

    /// Decodes schedule `text`; `path` names the file in messages and gives the base folder for media.
    public static func parse(text: String, path: String, format: ScheduleFormat? = nil) -> Result {
        let format = format ?? ScheduleFormat.detect(path: path, text: text)
        let root: DocumentNode
        switch format {
        case .toml:
            // The position reader is a complete TOML 1.0 reader: it rejects every document the
            // specification forbids, so no second parser (and no full Foundation, nor ICU) is needed.
            do {
                root = try TOMLPositionReader.read(text, file: path)
            } catch {
                return Result(schedule: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: SourceLocation(file: path, line: error.line, column: error.column), "TOML syntax: \(error.message)")], isUnreadable: false)
            }
        case .json:
            do {
                root = try JSONReader.read(text, file: path)
            } catch {
                return Result(schedule: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: SourceLocation(file: path, line: error.line, column: error.column), "JSON syntax: \(error.message)")], isUnreadable: false)
            }
        }
        var decoder = ScheduleDecoder(path: path)
        let schedule = decoder.decode(root)
        let diagnostics = decoder.log.sorted
        return Result(schedule: decoder.log.hasErrors ? nil : schedule, diagnostics: diagnostics, isUnreadable: false)
    }

    /// The folder part of `path` ("." for a bare file name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }
}

/// Turns a ``DocumentNode`` tree into the model, checking keys, types and values.
struct ScheduleDecoder {
    let path: String
    let baseDirectory: String
    var log = DiagnosticLog()
    var zone = ZoneInfo.utc

    init(path: String) {
        self.path = path
        // Absolute, so that a player started from another folder (a service) finds the media.
        var base = ScheduleReader.directory(of: path)
        if !base.hasPrefix("/") {
            let cwd = FileManager.default.currentDirectoryPath
            base = base == "." ? cwd : cwd + "/" + base
        }
        baseDirectory = base
    }

    static let topKeys = ["version", "timezone", "fallback", "display", "restart", "playlists", "layouts", "entries"]
    static let displayKeys = ["mode", "rotation", "gravity", "connector", "wall", "crop"]
    static let restartKeys = ["retries", "backoff", "backoff_multiplier", "max_backoff", "on_failure", "fallback_after"]
    static let playlistKeys = ["items"]
    static let itemKeys = ["video", "url", "image", "duration", "volume", "mute", "gravity", "in", "out", "repeat", "overlays"]
    static let overlayKeys = ["image", "text", "rect", "z", "opacity", "fade_in", "fade_out", "at", "duration",
                              "font_size", "color", "background", "ticker", "ticker_speed"]
    static let layoutKeys = ["background", "zones"]
    static let zoneKeys = ["name", "rect", "playlist", "gravity", "audio", "z"]
    static let entryKeys = ["playlist", "layout", "priority", "interrupt", "days", "start", "end", "from", "until", "rrule", "exdates"]

    mutating func decode(_ root: DocumentNode) -> Schedule? {
        guard let table = log.table(root, "the schedule") else { return nil }
        log.checkKeys(table, Self.topKeys, context: "the schedule")
        var version = 1
        if let node = table["version"] {
            if let v = log.integer(node, "version") {
                if !ScheduleReader.supportedVersions.contains(Int(v)) {
                    log.error(.unsupportedVersion, node.location, "version \(v) is not supported (this Vitrine reads version \(ScheduleReader.supportedVersions.upperBound))")
                }
                version = Int(v)
            }
        } else {
            log.error(.missingKey, root.location, "missing \"version\" (write version = 1 at the top)")
        }
        if let node = table["timezone"], let name = log.string(node, "timezone") {
            do {
                zone = try ZoneInfo(identifier: name)
            } catch {
                let hint = Self.zoneSuggestion(name).map { " (did you mean \"\($0)\"?)" } ?? ""
                log.error(.unknownTimeZone, node.location, "\(error)\(hint)")
            }
        }
        var display = DisplaySettings()
        if let node = table["display"] { display = decodeDisplay(node) }
        var restart = RestartPolicy()
        if let node = table["restart"] { restart = decodeRestart(node) }
        var playlists: [String: Playlist] = [:]
        if let node = table["playlists"], let lists = log.table(node, "playlists") {
            for name in lists.keys {
                if let playlist = decodePlaylist(name: name, lists[name]!) { playlists[name] = playlist }
            }
        }
        var layouts: [String: Layout] = [:]
        if let node = table["layouts"], let list = log.table(node, "layouts") {
            for name in list.keys {
                if let layout = decodeLayout(name: name, list[name]!, playlists: playlists) { layouts[name] = layout }
            }
        }
        var entries: [Entry] = []
        if let node = table["entries"], let list = log.table(node, "entries") {
            for name in list.keys {
                if let entry = decodeEntry(name: name, list[name]!, playlists: playlists, layouts: layouts) { entries.append(entry) }
            }
        }
        var fallback: String?
        if let node = table["fallback"], let name = log.string(node, "fallback") {
            if playlists[name] == nil {
                if layouts[name] != nil {
                    log.error(.unknownPlaylist, node.location, "no playlist named \"\(name)\": \"\(name)\" is a layout, and the fallback plays one playlist full screen")
                } else {
                    reportUnknownPlaylist(name, node.location, playlists)
                }
            }
            fallback = name
        }
        if entries.isEmpty && fallback == nil {
            log.error(.emptySchedule, root.location, "the schedule has no entries and no fallback playlist: nothing would ever play")
        }
        return Schedule(version: version, sourcePath: path, baseDirectory: baseDirectory, timeZone: zone, display: display,
                        restartPolicy: restart, playlists: playlists, layouts: layouts, entries: entries, fallbackPlaylist: fallback)
    }

    static func zoneSuggestion(_ name: String) -> String? {
        let common = ["UTC", "Europe/Berlin", "Europe/London", "Europe/Paris", "Europe/Madrid", "Europe/Rome", "Europe/Amsterdam",
                      "Europe/Zurich", "Europe/Vienna", "Europe/Warsaw", "Europe/Stockholm", "America/New_York", "America/Chicago",
                      "America/Denver", "America/Los_Angeles", "America/Toronto", "America/Sao_Paulo", "Asia/Tokyo", "Asia/Shanghai",
                      "Asia/Kolkata", "Asia/Singapore", "Australia/Sydney", "Pacific/Auckland", "Africa/Johannesburg"]
        return nearestMatch(to: name, in: common)
    }

    mutating func reportUnknownPlaylist(_ name: String, _ location: SourceLocation, _ playlists: [String: Playlist]) {
        let hint = nearestMatch(to: name, in: playlists.keys.sorted()).map { " (did you mean \"\($0)\"?)" } ?? ""
        log.error(.unknownPlaylist, location, "no playlist named \"\(name)\"\(hint)")
    }

    // MARK: Sections

    mutating func decodeDisplay(_ node: DocumentNode) -> DisplaySettings {
        var settings = DisplaySettings()
        guard let table = log.table(node, "display") else { return settings }
        log.checkKeys(table, Self.displayKeys, context: "[display]")
        if let n = table["mode"], let text = log.string(n, "mode") {
            if text == "auto" {
                settings.mode = .automatic
            } else if let mode = Self.parseMode(text) {
                settings.mode = mode
            } else {
                log.error(.invalidValue, n.location, "mode \"\(text)\" is not \"auto\" or WIDTHxHEIGHT[@HZ] such as \"1920x1080@60\"")
            }
        }
        if let n = table["rotation"], let r = log.integer(n, "rotation") {
            if [0, 90, 180, 270].contains(r) { settings.rotationDegrees = Int(r) } else {
                log.error(.invalidValue, n.location, "rotation must be 0, 90, 180 or 270 (degrees clockwise), not \(r)")
            }
        }
        if let n = table["gravity"], let g = log.gravity(n) { settings.gravity = g }
        if let n = table["connector"], let c = log.string(n, "connector") { settings.connector = c }
        if let wall = table["wall"], let crop = table["crop"] {
            log.error(.invalidValue, crop.location, "give [display] wall or crop, not both (wall at line \(wall.location.line))")
        } else if let n = table["wall"] {
            settings.wall = log.wallTile(n)
        } else if let n = table["crop"] {
            settings.wall = log.wallCrop(n)
        }
        return settings
    }

    static func parseMode(_ text: String) -> DisplaySettings.Mode? {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), (1...16384).contains(w), (1...16384).contains(h) else { return nil }
        var hz: Int?
        if parts.count == 2 {
            guard let r = Int(parts[1]), (1...1000).contains(r) else { return nil }
            hz = r
        }
        return .explicit(width: w, height: h, refreshHz: hz)
    }

    mutating func decodeRestart(_ node: DocumentNode) -> RestartPolicy {
        var policy = RestartPolicy()
        guard let table = log.table(node, "restart") else { return policy }
        log.checkKeys(table, Self.restartKeys, context: "[restart]")
        if let n = table["retries"], let v = log.integer(n, "retries") {
            if (0...100).contains(v) { policy.retries = Int(v) } else { log.error(.outOfRange, n.location, "retries must be 0…100, not \(v)") }
        }
        if let n = table["backoff"], let d = duration(n, "backoff") { policy.backoff = d }
        if let n = table["max_backoff"], let d = duration(n, "max_backoff") { policy.maximumBackoff = d }
        if let n = table["backoff_multiplier"], let v = log.number(n, "backoff_multiplier") {
            if v >= 1 && v <= 10 { policy.backoffMultiplier = v } else { log.error(.outOfRange, n.location, "backoff_multiplier must be 1…10, not \(v)") }
        }
        if let n = table["on_failure"], let text = log.string(n, "on_failure") {
            if let value = RestartPolicy.OnFailure(rawValue: text) { policy.onFailure = value } else {
                log.error(.invalidValue, n.location, "on_failure must be \"skip\" or \"fallback\", not \"\(text)\"")
            }
        }
        if let n = table["fallback_after"], let v = log.integer(n, "fallback_after") {
            if v >= 1 { policy.fallbackAfter = Int(v) } else { log.error(.outOfRange, n.location, "fallback_after must be at least 1") }
        }
        return policy
    }

    mutating func decodePlaylist(name: String, _ node: DocumentNode) -> Playlist? {
        guard let table = log.table(node, "playlist \"\(name)\"") else { return nil }
        log.checkKeys(table, Self.playlistKeys, context: "playlist \"\(name)\"")
        var items: [MediaItem] = []
        if let n = table["items"], let array = log.array(n, "items") {
            for element in array {
                if let item = decodeItem(element) { items.append(item) }
            }
            if array.isEmpty { log.error(.emptyPlaylist, n.location, "playlist \"\(name)\" has no items") }
        } else if table["items"] == nil {
            log.error(.emptyPlaylist, node.location, "playlist \"\(name)\" has no items (add [[playlists.\(name).items]])")
        }
        return Playlist(name: name, items: items, location: node.location)
    }

    mutating func decodeItem(_ node: DocumentNode) -> MediaItem? {
        guard let table = log.table(node, "an item") else { return nil }
        log.checkKeys(table, Self.itemKeys, context: "an item")
        let sources = ["video", "url", "image"].filter { table[$0] != nil }
        guard let sourceKey = sources.first else {
            log.error(.missingKey, node.location, "an item needs one of \"video\", \"url\" or \"image\"")
            return nil
        }
        if sources.count > 1 {
            log.error(.conflictingKeys, table[sources[1]]!.location, "an item has both \"\(sources[0])\" and \"\(sources[1])\"; give only one")
        }
        guard let written = log.string(table[sourceKey]!, sourceKey) else { return nil }
        let source: MediaSource
        switch sourceKey {
        case "image": source = .image(path: resolve(written))
        case "url": source = .url(written)
        default: source = written.contains("://") ? .url(written) : .videoFile(path: resolve(written))
        }
        var item = MediaItem(source: source, writtenLocation: written, location: node.location)
        if let n = table["duration"], let d = duration(n, "duration") {
            if d > .zero { item.duration = d } else { log.error(.outOfRange, n.location, "duration must be longer than zero") }
        }
        if source.isStill && item.duration == nil && table["duration"] == nil {
            log.error(.missingKey, node.location, "an image item needs a \"duration\" (how long it shows, e.g. \"10s\")")
        }
        if let n = table["volume"], let v = log.number(n, "volume") {
            if (0...1).contains(v) { item.volume = v } else { log.error(.outOfRange, n.location, "volume must be 0…1, not \(v)") }
        }
        if let n = table["mute"], let b = log.bool(n, "mute") { item.isMuted = b }
        if let n = table["gravity"], let g = log.gravity(n) { item.gravity = g }
        if let n = table["in"], let t = duration(n, "in") { item.inPoint = t }
        if let n = table["out"], let t = duration(n, "out") {
            if let inPoint = item.inPoint, t <= inPoint {
                log.error(.invalidTrim, n.location, "the out point \(TimeSyntax.clockString(t)) is not after the in point \(TimeSyntax.clockString(inPoint))")
            } else {
                item.outPoint = t
            }
        }
        if source.isStill, let n = table["in"] ?? table["out"] {
            log.error(.conflictingKeys, n.location, "an image item cannot have \"in\" or \"out\" trim points")
        }
        if let n = table["repeat"], let v = log.integer(n, "repeat") {
            if (1...100_000).contains(v) { item.repeatCount = Int(v) } else { log.error(.outOfRange, n.location, "repeat must be at least 1, not \(v)") }
        }
        if let n = table["overlays"], let array = log.array(n, "overlays") {
            item.overlays = array.compactMap { decodeOverlay($0, item: item) }
        }
        return item
    }

    mutating func decodeOverlay(_ node: DocumentNode, item: MediaItem) -> Overlay? {
        guard let table = log.table(node, "an overlay") else { return nil }
        log.checkKeys(table, Self.overlayKeys, context: "an overlay")
        var content: Overlay.Content?
        if let n = table["image"], let text = log.string(n, "image") { content = .image(path: resolve(text)) }
        if let n = table["text"], let text = log.string(n, "text") {
            if content != nil {
                log.error(.conflictingKeys, n.location, "an overlay has both \"image\" and \"text\"; give only one")
            } else {
                var style = Overlay.TextStyle(text: text)
                if let n = table["font_size"], let v = log.number(n, "font_size") {
                    if v > 0 && v <= 1 { style.fontSize = v } else { log.error(.outOfRange, n.location, "font_size is a fraction of the overlay's height, 0…1, not \(v)") }
                }
                if let n = table["color"], let c = color(n, "color") { style.color = c }
                if let n = table["background"], let c = color(n, "background") { style.background = c }
                var ticker = false
                if let n = table["ticker"], let b = log.bool(n, "ticker") { ticker = b }
                if ticker { style.tickerSpeed = 0.25 }
                if let n = table["ticker_speed"], let v = log.number(n, "ticker_speed") {
                    if v > 0 && v <= 100 { style.tickerSpeed = v } else { log.error(.outOfRange, n.location, "ticker_speed must be above 0 (rectangle widths per second), not \(v)") }
                }
                content = .text(style)
            }
        }
        if content == nil, table["image"] == nil, table["text"] == nil {
            log.error(.missingKey, node.location, "an overlay needs \"image\" or \"text\"")
        }
        if case .image? = content {
            for key in ["font_size", "color", "background", "ticker", "ticker_speed"] where table[key] != nil {
                log.error(.conflictingKeys, table[key]!.location, "\"\(key)\" applies to text overlays only")
            }
        }
        var rect = OverlayRect(x: 0, y: 0, width: 1, height: 1)
        if let n = table["rect"], let r = self.rect(n) { rect = r }
        var overlay = Overlay(content: content ?? .text(Overlay.TextStyle(text: "")), rect: rect, cue: .absolute(.zero), location: node.location)
        if let n = table["z"], let v = log.integer(n, "z") { overlay.zIndex = Int(v) }
        if let n = table["opacity"], let v = log.number(n, "opacity") {
            if (0...1).contains(v) { overlay.opacity = v } else { log.error(.outOfRange, n.location, "opacity must be 0…1, not \(v)") }
        }
        if let n = table["fade_in"], let d = duration(n, "fade_in") { overlay.fadeIn = d }
        if let n = table["fade_out"], let d = duration(n, "fade_out") { overlay.fadeOut = d }
        if let n = table["at"] {
            if let text = cueText(n) {
                if let cue = Cue(parsing: text) { overlay.cue = cue } else {
                    log.error(.malformedCue, n.location, "cue \"\(text)\" is not a time (\"00:00:12.5\", \"12.5s\"), a percentage (\"25%\") or \"end-5s\"")
                }
            }
        }
        if let n = table["duration"], let d = duration(n, "duration") {
            if d > .zero { overlay.duration = d } else { log.error(.outOfRange, n.location, "an overlay's duration must be longer than zero") }
        }
        if let shown = overlay.duration, overlay.fadeIn + overlay.fadeOut > shown, let n = table["fade_in"] ?? table["fade_out"] {
            log.error(.outOfRange, n.location, "fade_in plus fade_out (\(TimeSyntax.clockString(overlay.fadeIn + overlay.fadeOut))) is longer than the overlay shows (\(TimeSyntax.clockString(shown)))")
        }
        if let n = table["at"] { overlay.cueLocation = n.location }
        return overlay
    }

    mutating func decodeEntry(name: String, _ node: DocumentNode, playlists: [String: Playlist], layouts: [String: Layout]) -> Entry? {
        guard let table = log.table(node, "entry \"\(name)\"") else { return nil }
        log.checkKeys(table, Self.entryKeys, context: "entry \"\(name)\"")
        var isInterrupt = false
        if let n = table["interrupt"], let b = log.bool(n, "interrupt") { isInterrupt = b }
        guard let content = decodeEntryContent(name: name, table, node.location, isInterrupt: isInterrupt, playlists: playlists, layouts: layouts) else {
            return nil
        }
        var entry = Entry(name: name, content: content, isInterrupt: isInterrupt, location: node.location)
        if let n = table["priority"], let v = log.integer(n, "priority") { entry.priority = Int(v) }
        if let n = table["days"], let values = log.array(n, "days") {
            var days = Set<Weekday>()
            for value in values {
                guard let text = log.string(value, "days") else { continue }
                if ["weekdays", "weekday"].contains(text.lowercased()) {
                    days.formUnion([.monday, .tuesday, .wednesday, .thursday, .friday])
                } else if ["weekend", "weekends"].contains(text.lowercased()) {
                    days.formUnion([.saturday, .sunday])
                } else if let day = Weekday(name: text) {
                    days.insert(day)
                } else {
                    let names = Weekday.allCases.map(\.shortName) + ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekdays", "weekend"]
                    let hint = nearestMatch(to: text, in: names).map { " (did you mean \"\($0)\"?)" } ?? ""
                    log.error(.unknownWeekday, value.location, "\"\(text)\" is not a day of the week\(hint)")
                }
            }
            if values.isEmpty { log.error(.invalidValue, n.location, "days is empty: entry \"\(name)\" would never play (leave \"days\" out for every day)") }
            entry.days = days
        }
        if let n = table["start"] { entry.start = timeOfDay(n, "start") }
        if let n = table["end"] { entry.end = timeOfDay(n, "end") }
        if let start = entry.start, start == .endOfDay, let n = table["start"] {
            log.error(.malformedTimeOfDay, n.location, "a window cannot start at 24:00")
            entry.start = nil
        }
        if let n = table["from"] { entry.firstDate = date(n, "from") }
        if let n = table["until"] { entry.lastDate = date(n, "until") }
        if let first = entry.firstDate, let last = entry.lastDate, last < first, let n = table["until"] {
            log.error(.invalidDateRange, n.location, "\"until\" (\(last)) is before \"from\" (\(first))")
        }
        if let n = table["exdates"], let values = log.array(n, "exdates") {
            entry.exceptionDates = Set(values.compactMap { date($0, "exdates") })
        }
        if let n = table["rrule"], let text = log.string(n, "rrule") {
            if let first = entry.firstDate {
                do {
                    entry.recurrence = try RecurrenceRule(parsing: text, dtstart: LocalDateTime(date: first, time: entry.start ?? .midnight), zone: zone)
                } catch {
                    log.error(.invalidRecurrence, n.location, "rrule: \(error.message)")
                }
            } else {
                log.error(.missingKey, n.location, "an entry with an rrule needs \"from\": the rule's first date (its DTSTART)")
            }
        }
        if entry.isInterrupt, entry.start == nil, let n = table["interrupt"] {
            log.error(.missingKey, n.location, "an interrupt needs a \"start\" time: the moment it pre-empts the programme")
        }
        return entry
    }

    /// What an entry plays: exactly one of `playlist` and `layout`, which must exist; an interrupt
    /// takes the whole screen, so it names a playlist.
    mutating func decodeEntryContent(name: String, _ table: DocumentTable, _ location: SourceLocation, isInterrupt: Bool,
                                     playlists: [String: Playlist], layouts: [String: Layout]) -> EntryContent? {
        let playlistNode = table["playlist"], layoutNode = table["layout"]
        if let playlistNode, let layoutNode {
            let (first, second) = playlistNode.location < layoutNode.location ? ("playlist", layoutNode) : ("layout", playlistNode)
            log.error(.conflictingKeys, second.location, "entry \"\(name)\" has both \"\(first)\" and \"\(first == "playlist" ? "layout" : "playlist")\"; an entry plays one playlist or one layout")
            return nil
        }
        if let playlistNode {
            guard let playlist = log.string(playlistNode, "playlist") else { return nil }
            if playlists[playlist] == nil {
                if layouts[playlist] != nil {
                    log.error(.unknownPlaylist, playlistNode.location, "no playlist named \"\(playlist)\": \"\(playlist)\" is a layout (write layout = \"\(playlist)\")")
                } else {
                    reportUnknownPlaylist(playlist, playlistNode.location, playlists)
                }
            }
            return .playlist(playlist)
        }
        if let layoutNode {
            guard let layout = log.string(layoutNode, "layout") else { return nil }
            if isInterrupt {
                log.error(.conflictingKeys, layoutNode.location, "interrupt \"\(name)\" names a layout: interrupts still take the whole screen, so an interrupt plays one \"playlist\"")
                return nil
            }
            if layouts[layout] == nil {
                if playlists[layout] != nil {
                    log.error(.unknownLayout, layoutNode.location, "no layout named \"\(layout)\": \"\(layout)\" is a playlist (write playlist = \"\(layout)\")")
                } else {
                    let hint = nearestMatch(to: layout, in: layouts.keys.sorted()).map { " (did you mean \"\($0)\"?)" } ?? ""
                    log.error(.unknownLayout, layoutNode.location, "no layout named \"\(layout)\"\(hint)")
                }
            }
            return .layout(layout)
        }
        log.error(.missingKey, location, "entry \"\(name)\" needs a \"playlist\" or a \"layout\"")
        return nil
    }

    mutating func decodeLayout(name: String, _ node: DocumentNode, playlists: [String: Playlist]) -> Layout? {
        guard let table = log.table(node, "layout \"\(name)\"") else { return nil }
        log.checkKeys(table, Self.layoutKeys, context: "layout \"\(name)\"")
        var layout = Layout(name: name, zones: [], location: node.location)
        if let n = table["background"], let c = color(n, "background") { layout.background = c }
        guard let zonesNode = table["zones"] else {
            log.error(.emptyLayout, node.location, "layout \"\(name)\" has no zones (add [[layouts.\(name).zones]])")
            return layout
        }
        guard let array = log.array(zonesNode, "zones") else { return layout }
        if array.isEmpty { log.error(.emptyLayout, zonesNode.location, "layout \"\(name)\" has no zones") }
        // Each zone is checked against the ones before it; a later zone's key carries the message.
        for element in array {
            guard let decoded = decodeZone(element, layout: name, playlists: playlists) else { continue }
            let zone = decoded.zone
            if let earlier = layout.zones.first(where: { $0.name == zone.name }) {
                log.error(.duplicateName, decoded.nameLocation, "layout \"\(name)\" has two zones named \"\(zone.name)\" (the other at \(earlier.location)); zone names must differ")
                continue
            }
            if zone.audio == true, let loud = layout.zones.first(where: { $0.audio == true }), let at = decoded.audioLocation {
                log.error(.conflictingKeys, at, "zones \"\(loud.name)\" and \"\(zone.name)\" of layout \"\(name)\" both have audio = true; at most one zone's sound plays")
            }
            for other in layout.zones where other.zIndex == zone.zIndex {
                guard let overlap = other.rect.intersection(zone.rect) else { continue }
                let area = [overlap.x, overlap.y, overlap.width, overlap.height].map(Self.fraction).joined(separator: ", ")
                log.error(.overlappingZones, decoded.rectLocation,
                          "zones \"\(other.name)\" (\(other.location)) and \"\(zone.name)\" of layout \"\(name)\" overlap at [\(area)] with the same z \(zone.zIndex); give one a higher z, or move it")
            }
            layout.zones.append(zone)
        }
        return layout
    }

    mutating func decodeZone(_ node: DocumentNode, layout: String, playlists: [String: Playlist])
        -> (zone: LayoutZone, nameLocation: SourceLocation, rectLocation: SourceLocation, audioLocation: SourceLocation?)? {
        guard let table = log.table(node, "a zone") else { return nil }
        log.checkKeys(table, Self.zoneKeys, context: "a zone of layout \"\(layout)\"")
        var name: String?
        if let n = table["name"], let text = log.string(n, "name") {
            if text.isEmpty { log.error(.invalidValue, n.location, "a zone's name must not be empty") } else { name = text }
        } else if table["name"] == nil {
            log.error(.missingKey, node.location, "a zone of layout \"\(layout)\" needs a \"name\"")
        }
        var playlist: String?
        if let n = table["playlist"], let text = log.string(n, "playlist") {
            if playlists[text] == nil { reportUnknownPlaylist(text, n.location, playlists) }
            playlist = text
        } else if table["playlist"] == nil {
            log.error(.missingKey, node.location, "zone \"\(name ?? "")\" of layout \"\(layout)\" needs a \"playlist\"")
        }
        var rect = OverlayRect(x: 0, y: 0, width: 1, height: 1)
        var rectValid = true
        if let n = table["rect"] {
            if let r = self.rect(n) { rect = r } else { rectValid = false }
        }
        var zone = LayoutZone(name: name ?? "", rect: rect, playlist: playlist ?? "", location: node.location)
        if let n = table["gravity"], let g = log.gravity(n) { zone.gravity = g }
        if let n = table["audio"], let b = log.bool(n, "audio") { zone.audio = b }
        if let n = table["z"], let v = log.integer(n, "z") { zone.zIndex = Int(v) }
        // A zone missing what it needs is reported above; checks between zones skip it.
        guard name != nil, playlist != nil, rectValid else { return nil }
        return (zone, table["name"]?.location ?? node.location, table["rect"]?.location ?? node.location, table["audio"]?.location)
    }

    // MARK: Values

    /// A fraction for messages: at most four decimals, no trailing zeros ("0.75", "0.0001", "1").
    static func fraction(_ value: Double) -> String {
        var text = MediaTime.format(seconds: value, decimals: 4)
        while text.hasSuffix("0"), text.contains(".") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// `[x, y, width, height]` in fractions 0…1 with a positive size, lying within what it is placed on.
    mutating func rect(_ node: DocumentNode) -> OverlayRect? {
        guard let values = log.array(node, "rect") else { return nil }
        let numbers = values.compactMap { element -> Double? in
            switch element.value {
            case .integer(let i): return Double(i)
            case .float(let f): return f
            default: return nil
            }
        }
        if numbers.count != 4 || values.count != 4 {
            log.error(.invalidValue, node.location, "rect is [x, y, width, height] as fractions of the screen, e.g. [0.7, 0.05, 0.25, 0.1]")
            return nil
        }
        if numbers.contains(where: { $0 < 0 || $0 > 1 }) || numbers[2] <= 0 || numbers[3] <= 0
            || numbers[0] + numbers[2] > 1.000001 || numbers[1] + numbers[3] > 1.000001 {
            log.error(.outOfRange, node.location, "rect \(numbers) does not fit on the screen (fractions 0…1; x+width and y+height at most 1)")
            return nil
        }
        return OverlayRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
    }

    func resolve(_ written: String) -> String {
        if written.hasPrefix("/") { return written }
        var relative = Substring(written)
        while relative.hasPrefix("./") { relative = relative.dropFirst(2) }
        return baseDirectory == "/" ? "/" + relative : baseDirectory + "/" + relative
    }

    mutating func color(_ node: DocumentNode, _ key: String) -> RGBAColor? {
        guard let text = log.string(node, key) else { return nil }
        if let c = RGBAColor(parsing: text) { return c }
        log.error(.invalidValue, node.location, "\(key) \"\(text)\" is not a colour such as \"#FFFFFF\" or \"#000000AA\"")
        return nil
    }

    /// A duration: a string in ``TimeSyntax`` form, a TOML local time (as a clock reading), or a number of seconds.
    mutating func duration(_ node: DocumentNode, _ key: String) -> MediaTime? {
        switch node.value {
        case .integer(let i) where i >= 0: return MediaTime(value: i, timescale: 1)
        case .float(let f) where f >= 0 && f.isFinite: return MediaTime(seconds: f, preferredTimescale: 1_000_000)
        case .time(let t): return MediaTime(value: Int64(t.secondsIntoDay) * 1_000_000_000 + Int64(t.nanoseconds), timescale: 1_000_000_000)
        case .string(let s):
            if let d = TimeSyntax.duration(s) { return d }
            log.error(.malformedDuration, node.location, "\(key) \"\(s)\" is not a duration such as \"90s\", \"1m30s\", \"500ms\" or \"00:01:30\"")
            return nil
        case .integer, .float:
            log.error(.malformedDuration, node.location, "\(key) must not be negative")
            return nil
        default:
            log.wrongType(node, key, "a duration string such as \"90s\" or \"00:01:30\"")
            return nil
        }
    }

    mutating func cueText(_ node: DocumentNode) -> String? {
        switch node.value {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .float(let f): return String(f)
        case .time(let t): return pad(t.hour, 2) + ":" + pad(t.minute, 2) + ":" + pad(t.second, 2) + (t.nanoseconds != 0 ? "." + fractionDigits(t.nanoseconds) : "")
        default:
            log.wrongType(node, "at", "a cue string such as \"00:00:12.5\", \"25%\" or \"end-5s\"")
            return nil
        }
    }

    mutating func timeOfDay(_ node: DocumentNode, _ key: String) -> LocalTime? {
        switch node.value {
        case .time(let t): return t
        case .string(let s):
            if let t = LocalTime(parsing: s.trimmingSpaces) { return t }
            log.error(.malformedTimeOfDay, node.location, "\(key) \"\(s)\" is not a time of day HH:MM or HH:MM:SS (00:00…24:00)")
            return nil
        default:
            log.wrongType(node, key, "a time of day such as \"08:30\"")
            return nil
        }
    }

    mutating func date(_ node: DocumentNode, _ key: String) -> LocalDate? {
        switch node.value {
        case .date(let d): return d
        case .string(let s):
            if s.count == 10, let d = LocalDate(parsing: s) { return d }
            log.error(.malformedDate, node.location, "\(key) \"\(s)\" is not a date YYYY-MM-DD that exists")
            return nil
        default:
            log.wrongType(node, key, "a date such as 2026-03-29")
            return nil
        }
    }
}
