import FoundationEssentials

/// An IANA time zone read from a TZif file (RFC 8536), with the POSIX TZ rule of its footer for
/// instants after the last recorded transition.
///
/// Foundation's `TimeZone` needs ICU for IANA rules on Linux; this reader needs only the
/// system's zoneinfo files (Debian's tzdata), so the product stays free of ICU.
public struct ZoneInfo: Sendable, Hashable, CustomStringConvertible {
    /// The IANA name, "Europe/Berlin".
    public let identifier: String
    /// Transition instants (UTC seconds), ascending.
    let transitions: [Int64]
    /// The UTC offset (seconds east) in force from each transition on.
    let offsetsAfter: [Int32]
    /// The abbreviation in force from each transition on.
    let abbreviationsAfter: [String]
    /// The offset before the first transition.
    let initialOffset: Int32
    let initialAbbreviation: String
    /// The rule after the last transition.
    let footer: PosixTimeZoneRule?

    public var description: String { identifier }

    /// UTC itself.
    public static let utc = ZoneInfo(identifier: "UTC", transitions: [], offsetsAfter: [], abbreviationsAfter: [],
                                     initialOffset: 0, initialAbbreviation: "UTC", footer: nil)

    /// The directory searched for zone files: `$TZDIR` or `/usr/share/zoneinfo`.
    public static var zoneDirectory: String {
        if let dir = ProcessInfo.processInfo.environment["TZDIR"], !dir.isEmpty { return dir }
        return "/usr/share/zoneinfo"
    }

    /// Why a zone could not be loaded.
    public enum LoadError: Error, Sendable, Hashable, CustomStringConvertible {
        case invalidName(String)
        case notFound(String, directory: String)
        case malformed(String, reason: String)

        public var description: String {
            switch self {
            case .invalidName(let name): return "\"\(name)\" is not an IANA time zone name"
            case .notFound(let name, let dir): return "unknown time zone \"\(name)\" (no such zone in \(dir))"
            case .malformed(let name, let reason): return "the zone file for \"\(name)\" is malformed: \(reason)"
            }
        }
    }

    /// Loads `identifier` ("Europe/Berlin", "UTC") from ``zoneDirectory``.
    public init(identifier: String) throws(LoadError) {
        if identifier == "UTC" || identifier == "Etc/UTC" || identifier == "Z" {
            self = .utc
            return
        }
        let allowed = identifier.allSatisfy { $0.isLetter || $0.isNumber || "/_-+".contains($0) }
        guard !identifier.isEmpty, allowed, !identifier.hasPrefix("/"), !identifier.split(separator: "/").contains("..") else {
            throw .invalidName(identifier)
        }
        let path = ZoneInfo.zoneDirectory + "/" + identifier
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .notFound(identifier, directory: ZoneInfo.zoneDirectory)
        }
        try self.init(identifier: identifier, tzif: [UInt8](data))
    }

    init(identifier: String, transitions: [Int64], offsetsAfter: [Int32], abbreviationsAfter: [String],
         initialOffset: Int32, initialAbbreviation: String, footer: PosixTimeZoneRule?) {
        self.identifier = identifier
        self.transitions = transitions
        self.offsetsAfter = offsetsAfter
        self.abbreviationsAfter = abbreviationsAfter
        self.initialOffset = initialOffset
        self.initialAbbreviation = initialAbbreviation
        self.footer = footer
    }

    /// Parses TZif bytes (versions 1 to 4; the 64-bit block is used when present).
    public init(identifier: String, tzif bytes: [UInt8]) throws(LoadError) {
        var reader = ByteReader(bytes: bytes)
        func fail(_ reason: String) -> LoadError { .malformed(identifier, reason: reason) }
        guard reader.remaining >= 44, Array(bytes[0..<4]) == Array("TZif".utf8) else { throw fail("no TZif header") }
        let version = bytes[4]
        var header = try reader.header(fail)
        var timeSize = 4
        if version >= UInt8(ascii: "2") {
            // Skip the version 1 block; the second header describes 64-bit data.
            let skip = header.timeCount * 4 + header.timeCount + header.typeCount * 6 + header.charCount
                + header.leapCount * 8 + header.isStdCount + header.isUTCount
            guard reader.skip(skip) else { throw fail("truncated version 1 block") }
            guard reader.remaining >= 44, reader.peek(4) == Array("TZif".utf8) else { throw fail("no second header") }
            header = try reader.header(fail)
            timeSize = 8
        }
        var times: [Int64] = []
        for _ in 0..<header.timeCount {
            guard let t = timeSize == 8 ? reader.int64() : reader.int32().map(Int64.init) else { throw fail("truncated transitions") }
            times.append(t)
        }
        var indices: [Int] = []
        for _ in 0..<header.timeCount {
            guard let i = reader.byte() else { throw fail("truncated transition types") }
            indices.append(Int(i))
        }
        var types: [(offset: Int32, isDST: Bool, abbreviationIndex: Int)] = []
        for _ in 0..<header.typeCount {
            guard let offset = reader.int32(), let dst = reader.byte(), let index = reader.byte() else { throw fail("truncated types") }
            types.append((offset, dst != 0, Int(index)))
        }
        guard let chars = reader.bytes(header.charCount) else { throw fail("truncated abbreviations") }
        guard reader.skip(header.leapCount * (timeSize + 4) + header.isStdCount + header.isUTCount) else { throw fail("truncated tail") }
        guard !types.isEmpty, indices.allSatisfy({ $0 < types.count }) else { throw fail("bad type index") }
        func abbreviation(_ start: Int) -> String {
            guard start < chars.count else { return "" }
            let end = chars[start...].firstIndex(of: 0) ?? chars.count
            return String(decoding: chars[start..<end], as: UTF8.self)
        }
        var footer: PosixTimeZoneRule?
        if timeSize == 8, let text = reader.footer(), !text.isEmpty {
            footer = PosixTimeZoneRule(text)
        }
        // RFC 8536: local time type 0 applies before the first transition.
        self.init(identifier: identifier, transitions: times,
                  offsetsAfter: indices.map { types[$0].offset },
                  abbreviationsAfter: indices.map { abbreviation(types[$0].abbreviationIndex) },
                  initialOffset: types[0].offset, initialAbbreviation: abbreviation(types[0].abbreviationIndex),
                  footer: footer)
    }

    /// The UTC offset (seconds east of Greenwich) in force at `utcSeconds`.
    public func offset(atUTC utcSeconds: Int64) -> Int32 { state(atUTC: utcSeconds).offset }

    /// The offset and abbreviation in force at `utcSeconds`.
    public func state(atUTC utcSeconds: Int64) -> (offset: Int32, abbreviation: String) {
        if transitions.isEmpty || utcSeconds >= transitions[transitions.count - 1] {
            if let footer { return footer.state(atUTC: utcSeconds) }
            if let last = offsetsAfter.last { return (last, abbreviationsAfter.last!) }
            return (initialOffset, initialAbbreviation)
        }
        if utcSeconds < transitions[0] { return (initialOffset, initialAbbreviation) }
        // Binary search: the last transition <= utcSeconds.
        var low = 0, high = transitions.count - 1
        while low < high {
            let mid = (low + high + 1) / 2
            if transitions[mid] <= utcSeconds { low = mid } else { high = mid - 1 }
        }
        return (offsetsAfter[low], abbreviationsAfter[low])
    }

    /// The wall-clock time at `instant`.
    public func localDateTime(at instant: UTCInstant) -> LocalDateTime {
        let seconds = instant.secondsSinceEpoch
        return LocalDateTime(localSeconds: seconds + Int64(offset(atUTC: seconds)), nanoseconds: instant.subsecondNanoseconds)
    }

    /// What to do with a wall-clock time that happens twice (the hour repeated when clocks go back).
    public enum RepeatedTimePolicy: Sendable, Hashable {
        /// The first of the two instants (RFC 5545's rule, and the default).
        case earlier
        /// The second.
        case later
    }

    /// The instant at which clocks in this zone show `local`.
    ///
    /// A time in a gap (skipped when clocks go forward) is read with the offset in force before
    /// the gap, so 02:30 on the morning clocks jump from 02:00 to 03:00 becomes 03:30 (RFC 5545
    /// section 3.3.5). A repeated time gives the earlier instant unless `repeated` says otherwise.
    public func instant(for local: LocalDateTime, repeated: RepeatedTimePolicy = .earlier) -> UTCInstant {
        let l = local.localSeconds
        let before = offset(atUTC: l - 86_400 * 2)
        let after = offset(atUTC: l + 86_400 * 2)
        var candidates: [Int64] = []
        for o in Set([before, after, offset(atUTC: l)]) {
            let t = l - Int64(o)
            if offset(atUTC: t) == o { candidates.append(t) }
        }
        candidates.sort()
        let seconds: Int64
        if candidates.isEmpty {
            // In a gap: read the wall time with the offset in force just before the transition,
            // which is the offset at `l - after` (that instant precedes the transition).
            seconds = l - Int64(offset(atUTC: l - Int64(after)))
        } else {
            seconds = repeated == .earlier ? candidates.first! : candidates.last!
        }
        return UTCInstant(secondsSinceEpoch: seconds, nanoseconds: local.time.nanoseconds)
    }

    /// Whether `local` is skipped (0 instants) or repeated (2 instants) in this zone.
    public func instantCount(for local: LocalDateTime) -> Int {
        let l = local.localSeconds
        var candidates = Set<Int64>()
        for o in [offset(atUTC: l - 86_400 * 2), offset(atUTC: l + 86_400 * 2), offset(atUTC: l)] {
            let t = l - Int64(o)
            if offset(atUTC: t) == o { candidates.insert(t) }
        }
        return candidates.count
    }

    public static func == (lhs: ZoneInfo, rhs: ZoneInfo) -> Bool { lhs.identifier == rhs.identifier }
    public func hash(into hasher: inout Hasher) { hasher.combine(identifier) }
}

/// A POSIX TZ string such as "CET-1CEST,M3.5.0,M10.5.0/3" (the TZif footer), with RFC 8536's
/// extensions (hours beyond 24 and negative in rule times).
struct PosixTimeZoneRule: Sendable, Hashable {
    var standardAbbreviation: String
    /// Seconds east of UTC (the POSIX sign inverted).
    var standardOffset: Int32
    var dst: DaylightRule?

    struct DaylightRule: Sendable, Hashable {
        var abbreviation: String
        var offset: Int32
        var start: TransitionDate
        var startTime: Int32
        var end: TransitionDate
        var endTime: Int32
    }

    enum TransitionDate: Sendable, Hashable {
        /// Mm.w.d: day d (0 = Sunday) of week w (5 = last) of month m.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
        /// Jn: day n (1...365), February 29th never counted.
        case julianNoLeap(Int)
        /// n: day n (0...365), February 29th counted.
        case zeroBasedDay(Int)

        func date(in year: Int) -> LocalDate {
            switch self {
            case .monthWeekDay(let month, let week, let weekday):
                let first = LocalDate(year: year, month: month, day: 1)!
                // Sunday-based weekday of the 1st.
                let firstSunday0 = (first.weekday.rawValue + 1) % 7
                var day = 1 + (weekday - firstSunday0 + 7) % 7 + (week - 1) * 7
                let length = LocalDate.daysIn(month: month, year: year)
                while day > length { day -= 7 }
                return LocalDate(year: year, month: month, day: day)!
            case .julianNoLeap(let n):
                var day = n - 1
                if LocalDate.isLeap(year) && n >= 60 { day += 1 }
                return LocalDate(year: year, month: 1, day: 1)!.adding(days: day)
            case .zeroBasedDay(let n):
                return LocalDate(year: year, month: 1, day: 1)!.adding(days: n)
            }
        }
    }

    init?(_ text: String) {
        let scanner = Array(text.unicodeScalars)
        var index = 0
        func name() -> String? {
            if index < scanner.count && scanner[index] == "<" {
                guard let close = scanner[index...].firstIndex(of: ">") else { return nil }
                let result = String(String.UnicodeScalarView(scanner[(index + 1)..<close]))
                index = close + 1
                return result
            }
            let start = index
            while index < scanner.count, scanner[index].properties.isAlphabetic { index += 1 }
            return index - start >= 3 ? String(String.UnicodeScalarView(scanner[start..<index])) : nil
        }
        func time() -> Int32? {
            var sign: Int32 = 1
            if index < scanner.count, scanner[index] == "+" || scanner[index] == "-" {
                if scanner[index] == "-" { sign = -1 }
                index += 1
            }
            var parts: [Int32] = []
            while parts.count < 3 {
                let start = index
                while index < scanner.count, ("0"..."9").contains(scanner[index]) { index += 1 }
                guard index > start, let value = Int32(String(String.UnicodeScalarView(scanner[start..<index]))) else { return nil }
                parts.append(value)
                if index < scanner.count, scanner[index] == ":" { index += 1 } else { break }
            }
            while parts.count < 3 { parts.append(0) }
            return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])
        }
        func number() -> Int? {
            let start = index
            while index < scanner.count, ("0"..."9").contains(scanner[index]) { index += 1 }
            return index > start ? Int(String(String.UnicodeScalarView(scanner[start..<index]))) : nil
        }
        func date() -> TransitionDate? {
            guard index < scanner.count else { return nil }
            if scanner[index] == "M" {
                index += 1
                guard let m = number(), index < scanner.count, scanner[index] == "." else { return nil }
                index += 1
                guard let w = number(), index < scanner.count, scanner[index] == "." else { return nil }
                index += 1
                guard let d = number(), (1...12).contains(m), (1...5).contains(w), (0...6).contains(d) else { return nil }
                return .monthWeekDay(month: m, week: w, weekday: d)
            }
            if scanner[index] == "J" {
                index += 1
                guard let n = number(), (1...365).contains(n) else { return nil }
                return .julianNoLeap(n)
            }
            guard let n = number(), (0...365).contains(n) else { return nil }
            return .zeroBasedDay(n)
        }
        guard let std = name(), let stdPosix = time() else { return nil }
        standardAbbreviation = std
        standardOffset = -stdPosix
        dst = nil
        if index >= scanner.count { return }
        guard let dstName = name() else { return nil }
        var dstOffset = standardOffset + 3600
        if index < scanner.count, scanner[index] != "," {
            guard let posix = time() else { return nil }
            dstOffset = -posix
        }
        guard index < scanner.count, scanner[index] == "," else { return nil }
        index += 1
        guard let startDate = date() else { return nil }
        var startTime: Int32 = 7200
        if index < scanner.count, scanner[index] == "/" {
            index += 1
            guard let t = time() else { return nil }
            startTime = t
        }
        guard index < scanner.count, scanner[index] == "," else { return nil }
        index += 1
        guard let endDate = date() else { return nil }
        var endTime: Int32 = 7200
        if index < scanner.count, scanner[index] == "/" {
            index += 1
            guard let t = time() else { return nil }
            endTime = t
        }
        guard index == scanner.count else { return nil }
        dst = DaylightRule(abbreviation: dstName, offset: dstOffset, start: startDate, startTime: startTime, end: endDate, endTime: endTime)
    }

    func state(atUTC t: Int64) -> (offset: Int32, abbreviation: String) {
        guard let dst else { return (standardOffset, standardAbbreviation) }
        let year = LocalDateTime(localSeconds: t + Int64(standardOffset)).date.year
        // Check the surrounding years too, for rules whose DST period crosses New Year.
        for y in [year - 1, year, year + 1] {
            let start = Int64(dst.start.date(in: y).daysSinceEpoch) * 86_400 + Int64(dst.startTime) - Int64(standardOffset)
            var endYear = y
            if dst.end.date(in: y) < dst.start.date(in: y) || (dst.end.date(in: y) == dst.start.date(in: y) && dst.endTime < dst.startTime) {
                endYear = y + 1
            }
            let end = Int64(dst.end.date(in: endYear).daysSinceEpoch) * 86_400 + Int64(dst.endTime) - Int64(dst.offset)
            if start <= t && t < end { return (dst.offset, dst.abbreviation) }
        }
        return (standardOffset, standardAbbreviation)
    }
}

/// A cursor over big-endian TZif bytes.
private struct ByteReader {
    let bytes: [UInt8]
    var position = 0

    var remaining: Int { bytes.count - position }

    struct Header {
        var isUTCount = 0, isStdCount = 0, leapCount = 0, timeCount = 0, typeCount = 0, charCount = 0
    }

    mutating func header(_ fail: (String) -> ZoneInfo.LoadError) throws(ZoneInfo.LoadError) -> Header {
        guard skip(20) else { throw fail("truncated header") }
        var counts: [Int] = []
        for _ in 0..<6 {
            guard let value = int32(), value >= 0 else { throw fail("bad header count") }
            counts.append(Int(value))
        }
        return Header(isUTCount: counts[0], isStdCount: counts[1], leapCount: counts[2],
                      timeCount: counts[3], typeCount: counts[4], charCount: counts[5])
    }

    func peek(_ count: Int) -> [UInt8] { Array(bytes[position..<min(bytes.count, position + count)]) }

    mutating func skip(_ count: Int) -> Bool {
        guard count >= 0, remaining >= count else { return false }
        position += count
        return true
    }

    mutating func byte() -> UInt8? {
        guard remaining >= 1 else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func bytes(_ count: Int) -> [UInt8]? {
        guard count >= 0, remaining >= count else { return nil }
        defer { position += count }
        return Array(bytes[position..<(position + count)])
    }

    mutating func int32() -> Int32? {
        guard let raw = bytes(4) else { return nil }
        return Int32(bitPattern: raw.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    }

    mutating func int64() -> Int64? {
        guard let raw = bytes(8) else { return nil }
        return Int64(bitPattern: raw.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
    }

    /// The footer: "\n" TZ-string "\n".
    mutating func footer() -> String? {
        guard byte() == UInt8(ascii: "\n") else { return nil }
        guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        defer { position = end + 1 }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }
}
