/// A recurrence rule: the documented subset of RFC 5545 RRULE that schedules use.
///
/// Supported parts: `FREQ` (DAILY, WEEKLY, MONTHLY), `INTERVAL`, `BYDAY` (weekdays; with an
/// ordinal such as `1MO` or `-1FR` only for MONTHLY), `BYMONTHDAY` (1…31, -31…-1), `COUNT`,
/// `UNTIL` (`YYYYMMDD`, `YYYYMMDDTHHMMSS` local, or `…Z` UTC) and `WKST`. A BYDAY list is either
/// all plain weekdays or all ordinal ones. Occurrences are the
/// dates that match every given part, on or after DTSTART (which, as in python-dateutil, is an
/// occurrence only if it matches the rule). A date-only `UNTIL` includes that whole day.
/// Rules are expanded in wall-clock terms: DST never shifts an occurrence to another date.
public struct RecurrenceRule: Sendable, Hashable, CustomStringConvertible {
    public enum Frequency: String, Sendable, Hashable, CaseIterable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY"
    }

    /// A BYDAY element: a weekday, optionally the nth (1…5) or nth-from-last (-1…-5) in the month.
    public struct WeekdaySpec: Sendable, Hashable {
        public var weekday: Weekday
        public var ordinal: Int?
        public init(weekday: Weekday, ordinal: Int? = nil) {
            self.weekday = weekday
            self.ordinal = ordinal
        }
    }

    public var frequency: Frequency
    public var interval: Int
    public var byDay: [WeekdaySpec]
    public var byMonthDay: [Int]
    public var count: Int?
    /// The last wall-clock time an occurrence may start at (inclusive).
    public var until: LocalDateTime?
    public var weekStart: Weekday
    /// The first occurrence candidate: the entry's first date at its start time.
    public var dtstart: LocalDateTime
    /// With COUNT: the date of the last occurrence (computed once), `nil` when there are none.
    private var lastCountedDate: LocalDate?
    /// The text the rule was parsed from.
    public let text: String

    public var description: String { text }

    /// Why a rule was rejected.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses `text` ("FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10", optionally prefixed with "RRULE:").
    /// A UTC `UNTIL` is converted to wall-clock time in `zone`.
    public init(parsing text: String, dtstart: LocalDateTime, zone: ZoneInfo = .utc) throws(ParseError) {
        self.text = text
        self.dtstart = dtstart
        var body = text.trimmingSpaces
        if body.uppercased().hasPrefix("RRULE:") { body = String(body.dropFirst(6)) }
        var frequency: Frequency?
        var interval = 1
        var byDay: [WeekdaySpec] = []
        var byMonthDay: [Int] = []
        var count: Int?
        var until: LocalDateTime?
        var weekStart = Weekday.monday
        var seen = Set<String>()
        for part in body.split(separator: ";", omittingEmptySubsequences: false) {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { String($0).uppercased() }
            guard pieces.count == 2, !pieces[0].isEmpty, !pieces[1].isEmpty else {
                throw ParseError(message: "\"\(part)\" is not NAME=VALUE")
            }
            let (name, value) = (pieces[0], pieces[1])
            guard seen.insert(name).inserted else { throw ParseError(message: "\(name) appears twice") }
            switch name {
            case "FREQ":
                guard let f = Frequency(rawValue: value) else {
                    throw ParseError(message: "FREQ=\(value) is not supported (use DAILY, WEEKLY or MONTHLY)")
                }
                frequency = f
            case "INTERVAL":
                guard let n = Int(value), n >= 1, n <= 10_000 else { throw ParseError(message: "INTERVAL must be a positive integer") }
                interval = n
            case "COUNT":
                guard let n = Int(value), n >= 1, n <= 100_000 else { throw ParseError(message: "COUNT must be a positive integer") }
                count = n
            case "UNTIL":
                guard let u = RecurrenceRule.parseUntil(value, zone: zone) else {
                    throw ParseError(message: "UNTIL=\(value) is not YYYYMMDD or YYYYMMDDTHHMMSS[Z]")
                }
                until = u
            case "WKST":
                guard let d = Weekday(name: value), value.count == 2 else { throw ParseError(message: "WKST=\(value) is not a weekday (MO…SU)") }
                weekStart = d
            case "BYDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard item.count >= 2, let day = Weekday(name: String(item.suffix(2))), Weekday(name: String(item.suffix(2)))?.rfc5545Code == String(item.suffix(2)) else {
                        throw ParseError(message: "BYDAY element \"\(item)\" is not a weekday such as MO or 1MO")
                    }
                    let prefix = item.dropLast(2)
                    var ordinal: Int?
                    if !prefix.isEmpty {
                        guard let n = Int(prefix), n != 0, (-5...5).contains(n) else {
                            throw ParseError(message: "BYDAY element \"\(item)\" has an ordinal outside -5…5")
                        }
                        ordinal = n
                    }
                    byDay.append(WeekdaySpec(weekday: day, ordinal: ordinal))
                }
            case "BYMONTHDAY":
                for item in value.split(separator: ",", omittingEmptySubsequences: false) {
                    guard let n = Int(item), n != 0, (-31...31).contains(n) else {
                        throw ParseError(message: "BYMONTHDAY element \"\(item)\" is not in 1…31 or -31…-1")
                    }
                    byMonthDay.append(n)
                }
            default:
                let known = ["FREQ", "INTERVAL", "COUNT", "UNTIL", "WKST", "BYDAY", "BYMONTHDAY"]
                if ["BYHOUR", "BYMINUTE", "BYSECOND", "BYMONTH", "BYYEARDAY", "BYWEEKNO", "BYSETPOS"].contains(name) {
                    throw ParseError(message: "\(name) is not in the supported RRULE subset (\(known.joined(separator: ", ")))")
                }
                let hint = nearestMatch(to: name, in: known).map { " (did you mean \($0)?)" } ?? ""
                throw ParseError(message: "unknown RRULE part \(name)\(hint)")
            }
        }
        guard let frequency else { throw ParseError(message: "FREQ is required") }
        if count != nil && until != nil { throw ParseError(message: "COUNT and UNTIL must not both be given (RFC 5545)") }
        if frequency != .monthly, byDay.contains(where: { $0.ordinal != nil }) {
            throw ParseError(message: "BYDAY ordinals such as 1MO are only allowed with FREQ=MONTHLY")
        }
        // Readers disagree on a list that mixes plain and ordinal weekdays (python-dateutil
        // intersects them, RFC 5545 unites them), so the subset leaves it out.
        if byDay.contains(where: { $0.ordinal != nil }) && byDay.contains(where: { $0.ordinal == nil }) {
            throw ParseError(message: "BYDAY must not mix plain weekdays (MO) with ordinal ones (1MO); write two entries instead")
        }
        self.frequency = frequency
        self.interval = interval
        self.byDay = byDay
        self.byMonthDay = byMonthDay
        self.count = count
        self.until = until
        self.weekStart = weekStart
        self.lastCountedDate = nil
        if let count {
            lastCountedDate = expand(limit: count, through: nil).last
        }
    }

    static func parseUntil(_ value: String, zone: ZoneInfo) -> LocalDateTime? {
        var text = value
        var isUTC = false
        if text.hasSuffix("Z") { isUTC = true; text.removeLast() }
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard let date = LocalDate(parsing: String(parts[0])), parts[0].count == 8 else { return nil }
        if parts.count == 1 {
            guard !isUTC else { return nil }
            // A whole day: the last instant of it.
            return LocalDateTime(date: date, time: LocalTime(hour: 23, minute: 59, second: 59, nanoseconds: 999_999_999)!)
        }
        let t = String(parts[1])
        guard parts.count == 2, t.count == 6, t.allSatisfy(\.isASCIIDigit),
              let time = LocalTime(hour: Int(t.prefix(2))!, minute: Int(t.dropFirst(2).prefix(2))!, second: Int(t.suffix(2))!),
              time.hour < 24 else { return nil }
        let local = LocalDateTime(date: date, time: time)
        if isUTC {
            return zone.localDateTime(at: UTCInstant(secondsSinceEpoch: local.localSeconds))
        }
        return local
    }

    // MARK: Matching

    /// Whether an occurrence falls on `date`.
    public func occurs(on date: LocalDate) -> Bool {
        guard date >= dtstart.date else { return false }
        if let until, LocalDateTime(date: date, time: dtstart.time) > until { return false }
        if count != nil {
            guard let last = lastCountedDate, date <= last else { return false }
        }
        return isAligned(date) && matchesParts(date)
    }

    /// Whether `date` is in a period (day, week, month) that the interval selects.
    private func isAligned(_ date: LocalDate) -> Bool {
        switch frequency {
        case .daily:
            return (date.daysSinceEpoch - dtstart.date.daysSinceEpoch) % interval == 0
        case .weekly:
            let weeks = (weekStartDay(of: date) - weekStartDay(of: dtstart.date)) / 7
            return weeks % interval == 0
        case .monthly:
            let months = (date.year - dtstart.date.year) * 12 + date.month - dtstart.date.month
            return months % interval == 0
        }
    }

    /// Days since the epoch of the first day of `date`'s week (by WKST).
    private func weekStartDay(of date: LocalDate) -> Int {
        let offset = (date.weekday.rawValue - weekStart.rawValue + 7) % 7
        return date.daysSinceEpoch - offset
    }

    /// Whether `date` matches BYDAY, BYMONTHDAY and the frequency's defaults.
    private func matchesParts(_ date: LocalDate) -> Bool {
        let length = LocalDate.daysIn(month: date.month, year: date.year)
        if !byMonthDay.isEmpty {
            let ok = byMonthDay.contains { n in n > 0 ? date.day == n : date.day == length + n + 1 }
            if !ok { return false }
        }
        if !byDay.isEmpty {
            let ok = byDay.contains { spec in
                guard spec.weekday == date.weekday else { return false }
                guard let ordinal = spec.ordinal else { return true }
                return ordinal > 0 ? (date.day - 1) / 7 + 1 == ordinal : (length - date.day) / 7 + 1 == -ordinal
            }
            if !ok { return false }
        }
        // Without BYDAY and BYMONTHDAY, the rule repeats DTSTART's weekday (weekly) or day of month (monthly).
        if byDay.isEmpty && byMonthDay.isEmpty {
            switch frequency {
            case .daily: break
            case .weekly: if date.weekday != dtstart.date.weekday { return false }
            case .monthly: if date.day != dtstart.date.day { return false }
            }
        }
        return true
    }

    // MARK: Expansion

    /// The occurrence dates in order, at most `limit`, none after `through`; stops at year 9999.
    public func occurrences(limit: Int, through: LocalDate? = nil) -> [LocalDate] {
        var result = expand(limit: min(limit, count ?? limit), through: through)
        if let until { result = result.filter { LocalDateTime(date: $0, time: dtstart.time) <= until } }
        return result
    }

    /// Walks period by period (interval-aligned), collecting matching dates on or after DTSTART.
    private func expand(limit: Int, through: LocalDate?) -> [LocalDate] {
        var result: [LocalDate] = []
        guard limit > 0 else { return result }
        var period = 0
        while true {
            let candidates: [LocalDate]
            switch frequency {
            case .daily:
                candidates = [dtstart.date.adding(days: period * interval)]
            case .weekly:
                let first = LocalDate(daysSinceEpoch: weekStartDay(of: dtstart.date) + period * interval * 7)
                candidates = (0..<7).map { first.adding(days: $0) }
            case .monthly:
                let monthIndex = dtstart.date.year * 12 + dtstart.date.month - 1 + period * interval
                let year = monthIndex / 12, month = monthIndex % 12 + 1
                candidates = (1...LocalDate.daysIn(month: month, year: year)).map { LocalDate(year: year, month: month, day: $0)! }
            }
            guard let firstCandidate = candidates.first, firstCandidate.year <= 9999 else { return result }
            if let through, firstCandidate > through { return result }
            for date in candidates where date >= dtstart.date && date.year <= 9999 && matchesParts(date) {
                if let through, date > through { return result }
                if let until, LocalDateTime(date: date, time: dtstart.time) > until { return result }
                result.append(date)
                if result.count >= limit { return result }
            }
            period += 1
        }
    }
}
