import MediaTime

extension ZoneInfo {
    /// "2026-03-29T03:00:00+02:00" (fractions of a second when present).
    public func isoString(at instant: UTCInstant) -> String {
        let offset = Int(offset(atUTC: instant.secondsSinceEpoch))
        let local = localDateTime(at: instant)
        let sign = offset < 0 ? "-" : "+"
        return local.description + sign + pad(abs(offset) / 3600, 2) + ":" + pad(abs(offset) / 60 % 60, 2)
    }

    /// The abbreviation in force ("CEST").
    public func abbreviation(at instant: UTCInstant) -> String { state(atUTC: instant.secondsSinceEpoch).abbreviation }

    /// Parses an ISO 8601 date-time for the command line: "2026-03-29T08:00:00Z",
    /// "2026-03-29T08:00+02:00", or a wall time in this zone ("2026-03-29T08:00", "2026-03-29").
    public func parseInstant(_ text: String) -> UTCInstant? {
        if let date = LocalDate(parsing: text), text.count == 10 {
            return instant(for: LocalDateTime(date: date, time: .midnight))
        }
        guard case .dateTime(let local, let offset)? = TOMLPositionReader.dateTime(text) else {
            // "2026-03-29T08:00" without seconds.
            if text.count == 16, case .dateTime(let local, let offset)? = TOMLPositionReader.dateTime(text + ":00") {
                return convert(local, offset)
            }
            let chars = Array(text)
            if chars.count > 16, chars[16] == "Z" || chars[16] == "+" || chars[16] == "-" || chars[16] == "z",
               case .dateTime(let local, let offset)? = TOMLPositionReader.dateTime(String(chars[0..<16]) + ":00" + String(chars[16...])) {
                return convert(local, offset)
            }
            return nil
        }
        return convert(local, offset)
    }

    private func convert(_ local: LocalDateTime, _ offset: Int?) -> UTCInstant {
        guard let offset else { return instant(for: local) }
        return UTCInstant(secondsSinceEpoch: local.localSeconds - Int64(offset), nanoseconds: local.time.nanoseconds)
    }
}

/// The resolved programme between two instants: what `vitrine programme` prints.
///
/// The JSON form is a stable, documented interface (Schedules/README.md, "Programme JSON").
public struct ProgrammeReport: Sendable {
    public var schedule: Schedule
    public var from: UTCInstant
    public var to: UTCInstant
    public var states: [ProgrammeState]

    /// Resolves the programme; with `entriesOnly`, item changes inside one window are left out.
    public init(schedule: Schedule, from: UTCInstant, to: UTCInstant, entriesOnly: Bool = false, maximumChanges: Int = 100_000) {
        self.schedule = schedule
        self.from = from
        self.to = to
        let states = ScheduleResolver(schedule: schedule).timeline(from: from, to: to, entriesOnly: entriesOnly, maximumChanges: maximumChanges)
        self.states = states
    }

    private var zone: ZoneInfo { schedule.timeZone }

    private func item(_ state: ProgrammeState) -> MediaItem? {
        guard let name = state.playlistName, let index = state.itemIndex else { return nil }
        return schedule.playlists[name]?.items[index]
    }

    /// A table for people: one line per change; under a layout's line, one line per zone.
    public func text() -> String {
        var lines = ["Programme of \(schedule.sourcePath) in \(zone.identifier), \(zone.isoString(at: from)) to \(zone.isoString(at: to))"]
        let header = ["LOCAL", "UTC", "ENTRY", "PLAYLIST", "ITEM", "POSITION"]
        var rows: [[String]] = [header]
        var unknownLengths = false
        /// The item and position columns of a playlist's state.
        func itemCells(_ state: ProgrammeState) -> [String] {
            var itemText = "-"
            if let index = state.itemIndex, let item = item(state) {
                itemText = "\(index + 1) \(item.writtenLocation)" + (item.repeatCount > 1 ? " [\(state.repetition + 1)/\(item.repeatCount)]" : "")
            }
            var position = state.itemIndex == nil ? "-" : TimeSyntax.clockString(state.position)
            if let item = item(state), item.playDuration == nil {
                position = "? (length unknown)"
                unknownLengths = true
            }
            return [itemText, position]
        }
        for state in states {
            let local = zone.isoString(at: state.instant) + " " + zone.abbreviation(at: state.instant)
            let entry = state.entry.map { $0.name + ($0.isInterrupt ? " (interrupt)" : "") } ?? (state.playlistName == nil ? "-" : "(fallback)")
            if let layout = state.layoutName {
                rows.append([local, state.instant.description, entry, "layout \(layout)", "", ""])
                for zone in state.zones {
                    rows.append(["", "", "  zone \(zone.zone.name)" + (zone.playsSound ? " (audio)" : ""), zone.state.playlistName ?? "(nothing)"]
                                + itemCells(zone.state))
                }
            } else {
                rows.append([local, state.instant.description, entry, state.playlistName ?? "(nothing)"] + itemCells(state))
            }
        }
        var widths = [Int](repeating: 0, count: header.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        for row in rows {
            let cells = row.enumerated().map { i, cell in i == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[i] - cell.count) }
            var line = cells.joined(separator: "  ")
            while line.hasSuffix(" ") { line.removeLast() }
            lines.append(line)
        }
        if unknownLengths {
            lines.append("Some media lengths are unknown (not probed): an item of unknown length plays until its window ends, and positions in it are not meaningful. Give it a \"duration\" or an \"out\" point.")
        }
        if states.count >= 100_000 { lines.append("(stopped after 100000 changes; narrow --from/--to or use --entries-only)") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The stable JSON form (format version 1). A layout's change adds `layout` and `zones`; a
    /// playlist's change has neither, so schedules without layouts print what they always did.
    public func json() -> String {
        var out = "{\n"
        out += "  \"format\": \"vitrine-programme\",\n  \"version\": 1,\n"
        out += "  \"schedule\": \(jsonString(schedule.sourcePath)),\n"
        out += "  \"timezone\": \(jsonString(zone.identifier)),\n"
        out += "  \"from\": \(instantObject(from)),\n"
        out += "  \"to\": \(instantObject(to)),\n"
        out += "  \"changes\": ["
        for (n, state) in states.enumerated() {
            out += n == 0 ? "\n" : ",\n"
            var fields: [(String, String)] = []
            fields.append(("utc", jsonString(state.instant.description)))
            fields.append(("local", jsonString(zone.isoString(at: state.instant))))
            fields.append(("utc_offset_seconds", String(zone.offset(atUTC: state.instant.secondsSinceEpoch))))
            fields.append(("entry", state.entry.map { jsonString($0.name) } ?? "null"))
            fields.append(("interrupt", state.entry?.isInterrupt == true ? "true" : "false"))
            fields.append(("fallback", state.isFallback ? "true" : "false"))
            fields.append(("priority", state.entry.map { String($0.priority) } ?? "null"))
            if let occurrence = state.occurrence {
                fields.append(("window", "{\"date\": \(jsonString(occurrence.date.description)), \"start\": \(instantObject(occurrence.start)), \"end\": \(instantObject(occurrence.end))}"))
            } else {
                fields.append(("window", "null"))
            }
            fields += itemFields(state)
            fields.append(("next_change", state.nextChange.map(instantObject) ?? "null"))
            if let layout = state.layoutName {
                fields.append(("layout", jsonString(layout)))
                let zones = state.zones.map { zone in
                    var zoneFields = [("name", jsonString(zone.zone.name))] + itemFields(zone.state)
                    zoneFields.append(("audio", zone.playsSound ? "true" : "false"))
                    zoneFields.append(("next_change", zone.state.nextChange.map(instantObject) ?? "null"))
                    return "{" + zoneFields.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
                }
                fields.append(("zones", "[" + zones.joined(separator: ", ") + "]"))
            }
            out += "    {" + fields.map { "\(jsonString($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
        }
        out += states.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
        return out
    }

    /// What a playlist plays, from `playlist` to `media_time_seconds`: a change's own, or a zone's.
    private func itemFields(_ state: ProgrammeState) -> [(String, String)] {
        [
            ("playlist", state.playlistName.map(jsonString) ?? "null"),
            ("item", state.itemIndex.map(String.init) ?? "null"),
            ("media", item(state).map { jsonString($0.writtenLocation) } ?? "null"),
            ("item_length_seconds", item(state).flatMap(\.playDuration).map(jsonNumber) ?? "null"),
            ("repetition", String(state.repetition)),
            ("position_seconds", state.itemIndex == nil ? "null" : jsonNumber(state.position)),
            ("media_time_seconds", state.itemIndex == nil ? "null" : jsonNumber(state.mediaTime)),
        ]
    }

    private func instantObject(_ instant: UTCInstant) -> String {
        "{\"utc\": \(jsonString(instant.description)), \"local\": \(jsonString(zone.isoString(at: instant)))}"
    }

    /// Seconds with up to nine decimals, exact for nanosecond times.
    private func jsonNumber(_ time: MediaTime) -> String {
        guard let ns = ScheduleResolver.nanoseconds(time) else { return "null" }
        let whole = ns / 1_000_000_000, fraction = Int(ns % 1_000_000_000)
        return fraction == 0 ? String(whole) : String(whole) + "." + fractionDigits(fraction)
    }
}

func jsonString(_ text: String) -> String {
    var out = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if scalar.value < 0x20 {
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    return out + "\""
}
