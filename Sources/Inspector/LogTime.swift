/// `since_time=` of `/api/logs`: an ISO 8601 time with its zone (`2026-11-25T08:00:00Z`,
/// `2026-11-25T09:00:00.250+01:00`) or seconds since 1970 (`1795600000`, `1795600000.5`).
enum LogTime {
    /// Nanoseconds since 1970 (UTC), or `nil` when `text` is neither form.
    static func nanoseconds(parsing text: Substring) -> Int64? {
        if let seconds = unixSeconds(text) { return seconds }
        return iso8601(Array(text.utf8))
    }

    private static func unixSeconds(_ text: Substring) -> Int64? {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCII), let seconds = Int64(whole), seconds >= 0,
              seconds < Int64.max / 1_000_000_000 else { return nil }
        var nanoseconds: Int64 = 0
        if parts.count == 2 {
            guard let fraction = fractionNanoseconds(Array(parts[1].utf8)) else { return nil }
            nanoseconds = fraction
        }
        return seconds * 1_000_000_000 + nanoseconds
    }

    /// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM|±HHMM)`; a `+` turned into a space by a form
    /// encoder is taken as `+`.
    private static func iso8601(_ bytes: [UInt8]) -> Int64? {
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<index + digits] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += digits
            return value
        }
        func expect(_ characters: String) -> Bool {
            guard index < bytes.count, characters.utf8.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt"),
              let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var nanoseconds: Int64 = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let start = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard let fraction = fractionNanoseconds(Array(bytes[start..<index])) else { return nil }
            nanoseconds = fraction
        }
        var offsetSeconds = 0
        if expect("Zz") {
        } else if index < bytes.count, let sign = [UInt8(ascii: "+"): 1, UInt8(ascii: " "): 1, UInt8(ascii: "-"): -1][bytes[index]] {
            index += 1
            guard let hours = number(2) else { return nil }
            _ = expect(":")
            guard let minutes = number(2), hours < 24, minutes < 60 else { return nil }
            offsetSeconds = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let seconds = daysSinceEpoch(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        guard seconds >= 0 else { return nil }
        return Int64(seconds) * 1_000_000_000 + nanoseconds
    }

    /// Digits after the decimal point as nanoseconds (beyond nine digits ignored).
    private static func fractionNanoseconds(_ digits: [UInt8]) -> Int64? {
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        var value: Int64 = 0
        for position in 0..<9 {
            value = value * 10 + (position < digits.count ? Int64(digits[position] - UInt8(ascii: "0")) : 0)
        }
        return value
    }

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
    /// `days_from_civil`).
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
