// Calendar dates and wall-clock times without Foundation's Calendar (which pulls ICU).
// Proleptic Gregorian calendar; day arithmetic after Howard Hinnant's public-domain
// "days from civil" algorithms.

/// A day of the week, in ISO 8601 order (Monday first), as Python's `weekday()` numbers them.
public enum Weekday: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case monday = 0, tuesday, wednesday, thursday, friday, saturday, sunday

    public static func < (lhs: Weekday, rhs: Weekday) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The RFC 5545 two-letter code: "MO" … "SU".
    public var rfc5545Code: String { ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][rawValue] }

    /// The three-letter English abbreviation: "mon" … "sun".
    public var shortName: String { ["mon", "tue", "wed", "thu", "fri", "sat", "sun"][rawValue] }

    public var description: String { shortName }

    /// Parses "mon", "monday", "MO" (any case).
    public init?(name: String) {
        let lower = name.lowercased()
        let full = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        for day in Weekday.allCases {
            if lower == day.shortName || lower == full[day.rawValue] || lower == day.rfc5545Code.lowercased() {
                self = day
                return
            }
        }
        return nil
    }
}

/// A calendar date with no time zone (proleptic Gregorian).
public struct LocalDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int

    /// A date; `nil` when the month or day does not exist (2025-02-29, 2026-04-31).
    public init?(year: Int, month: Int, day: Int) {
        guard (1...12).contains(month), day >= 1, day <= LocalDate.daysIn(month: month, year: year) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The date `days` days after 1970-01-01.
    public init(daysSinceEpoch days: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        year = yoe + era * 400 + (m <= 2 ? 1 : 0)
        month = m
        day = d
    }

    /// Days since 1970-01-01 (negative before).
    public var daysSinceEpoch: Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The day of the week.
    public var weekday: Weekday {
        // 1970-01-01 was a Thursday (3 in Monday-first numbering).
        let index = ((daysSinceEpoch % 7) + 7 + 3) % 7
        return Weekday(rawValue: index)!
    }

    /// The date `count` days later (earlier when negative).
    public func adding(days count: Int) -> LocalDate { LocalDate(daysSinceEpoch: daysSinceEpoch + count) }

    public static func isLeap(_ year: Int) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    public static func < (lhs: LocalDate, rhs: LocalDate) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// "2026-03-29".
    public var description: String {
        pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
    }

    /// Parses "YYYY-MM-DD" (also "YYYYMMDD").
    public init?(parsing text: String) {
        let digits = text.filter { $0 != "-" }
        let dashes = text.count - digits.count
        guard digits.count == 8, dashes == 0 || (dashes == 2 && text.count == 10 && Array(text)[4] == "-" && Array(text)[7] == "-"),
              digits.allSatisfy(\.isASCIIDigit),
              let y = Int(digits.prefix(4)), let m = Int(digits.dropFirst(4).prefix(2)), let d = Int(digits.suffix(2))
        else { return nil }
        self.init(year: y, month: m, day: d)
    }
}

/// A wall-clock time of day, to the nanosecond; `24:00` is allowed as the end of a day.
public struct LocalTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Seconds after midnight, 0 ... 86_400.
    public var secondsIntoDay: Int
    /// Nanoseconds within the second.
    public var nanoseconds: Int

    public init?(hour: Int, minute: Int, second: Int = 0, nanoseconds: Int = 0) {
        guard (0...24).contains(hour), (0...59).contains(minute), (0...59).contains(second), (0..<1_000_000_000).contains(nanoseconds) else { return nil }
        if hour == 24 && (minute != 0 || second != 0 || nanoseconds != 0) { return nil }
        secondsIntoDay = hour * 3600 + minute * 60 + second
        self.nanoseconds = nanoseconds
    }

    public static let midnight = LocalTime(hour: 0, minute: 0)!
    public static let endOfDay = LocalTime(hour: 24, minute: 0)!

    public var hour: Int { secondsIntoDay / 3600 }
    public var minute: Int { secondsIntoDay / 60 % 60 }
    public var second: Int { secondsIntoDay % 60 }

    public static func < (lhs: LocalTime, rhs: LocalTime) -> Bool {
        (lhs.secondsIntoDay, lhs.nanoseconds) < (rhs.secondsIntoDay, rhs.nanoseconds)
    }

    /// "06:30", "06:30:15", "06:30:15.5".
    public var description: String {
        var text = pad(hour, 2) + ":" + pad(minute, 2)
        if second != 0 || nanoseconds != 0 { text += ":" + pad(second, 2) }
        if nanoseconds != 0 { text += "." + fractionDigits(nanoseconds) }
        return text
    }

    /// Parses "HH:MM", "HH:MM:SS" and "HH:MM:SS.fff".
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3,
              parts[0].count == 2, parts[1].count == 2,
              parts[0].allSatisfy(\.isASCIIDigit), parts[1].allSatisfy(\.isASCIIDigit),
              let h = Int(parts[0]), let m = Int(parts[1]) else { return nil }
        var s = 0, ns = 0
        if parts.count == 3 {
            let secondParts = parts[2].split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard secondParts[0].count == 2, secondParts[0].allSatisfy(\.isASCIIDigit), let sv = Int(secondParts[0]) else { return nil }
            s = sv
            if secondParts.count == 2 {
                guard let fraction = parseFraction(secondParts[1]) else { return nil }
                ns = fraction
            } else if secondParts.count > 2 { return nil }
        }
        self.init(hour: h, minute: m, second: s, nanoseconds: ns)
    }
}

/// A date and a wall-clock time with no time zone.
public struct LocalDateTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var date: LocalDate
    public var time: LocalTime

    public init(date: LocalDate, time: LocalTime) {
        self.date = date
        self.time = time
    }

    /// Seconds since 1970-01-01T00:00 as if this wall time were UTC (the "local seconds" of zone arithmetic).
    public var localSeconds: Int64 { Int64(date.daysSinceEpoch) * 86_400 + Int64(time.secondsIntoDay) }

    public init(localSeconds: Int64, nanoseconds: Int = 0) {
        let days = localSeconds >= 0 ? localSeconds / 86_400 : (localSeconds - 86_399) / 86_400
        date = LocalDate(daysSinceEpoch: Int(days))
        time = LocalTime.midnight
        time.secondsIntoDay = Int(localSeconds - days * 86_400)
        time.nanoseconds = nanoseconds
    }

    public static func < (lhs: LocalDateTime, rhs: LocalDateTime) -> Bool {
        (lhs.date, lhs.time) < (rhs.date, rhs.time)
    }

    /// "2026-03-29T02:30:00" (ISO 8601 without offset; fractions when present).
    public var description: String {
        var text = date.description + "T" + pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2)
        if time.nanoseconds != 0 { text += "." + fractionDigits(time.nanoseconds) }
        return text
    }
}

func pad(_ value: Int, _ width: Int) -> String {
    let digits = String(value.magnitude)
    return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
}

/// Nanoseconds as decimal digits without trailing zeros ("5", "25", "000001").
func fractionDigits(_ nanoseconds: Int) -> String {
    var digits = pad(nanoseconds, 9)
    while digits.hasSuffix("0") { digits.removeLast() }
    return digits
}

/// "5" → 500_000_000 ns; up to 9 digits.
func parseFraction(_ digits: String) -> Int? {
    guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCIIDigit), let value = Int(digits) else { return nil }
    var scaled = value
    for _ in digits.count..<9 { scaled *= 10 }
    return scaled
}

extension Character {
    /// One of the ASCII digits 0 to 9, alone: a digit with a combining mark ("0\u{652}") is not
    /// one, although it sorts between "0" and "9" (and `Int` would refuse it).
    var isASCIIDigit: Bool { asciiValue.map { (0x30...0x39).contains($0) } ?? false }
}
