public import MediaTime

/// The textual forms of durations and cues in schedule files.
///
/// Durations: a clock form "HH:MM:SS(.fff)" or "MM:SS(.fff)", a unit form "1h30m", "90s",
/// "1.5s", "500ms" (units h, m, s, ms, in that order), or a bare number of seconds.
/// Values are exact: "12.5" is 125/10 s, never a binary fraction.
public enum TimeSyntax {
    /// Parses a duration; `nil` when malformed. Negative durations are rejected.
    public static func duration(_ text: String) -> MediaTime? {
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { return nil }
        if trimmed.contains(":") { return clock(trimmed) }
        if let plain = decimal(trimmed) { return plain }
        // Unit form: number+unit pairs in descending order of unit.
        let order = ["h": 0, "m": 1, "s": 2, "ms": 3]
        let scale: [String: Int64] = ["h": 3600, "m": 60, "s": 1]
        var total = MediaTime.zero
        var last = -1
        var rest = Substring(trimmed)
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " }
            let number = rest.prefix { $0.isASCIIDigit || $0 == "." }
            guard !number.isEmpty, let value = decimal(String(number)) else { return nil }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let unit = String(rest.prefix { $0.isLetter })
            guard let rank = order[unit], rank > last else { return nil }
            last = rank
            rest = rest.dropFirst(unit.count)
            if unit == "ms" {
                total = total + value.dividedByThousand
            } else {
                total = total + value.multiplied(byRatio: Int32(scale[unit]!), over: 1)
            }
        }
        guard last >= 0 else { return nil }
        return total
    }

    /// "01:02:03.5" or "02:03.5" (minutes may exceed 59 only in the two-part form's first field).
    static func clock(_ text: String) -> MediaTime? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 || parts.count == 3 else { return nil }
        var wholeParts: [Int64] = []
        for part in parts.dropLast() {
            guard !part.isEmpty, part.count <= 4, part.allSatisfy(\.isASCIIDigit), let v = Int64(part) else { return nil }
            wholeParts.append(v)
        }
        guard let seconds = decimal(parts.last!), seconds < MediaTime(value: 60, timescale: 1),
              parts.last!.prefix(while: { $0 != "." }).count == 2 else { return nil }
        if parts.count == 3 {
            guard wholeParts[1] < 60 else { return nil }
            return seconds + MediaTime(value: wholeParts[0] * 3600 + wholeParts[1] * 60, timescale: 1)
        }
        return seconds + MediaTime(value: wholeParts[0] * 60, timescale: 1)
    }

    /// An exact non-negative decimal: "12", "12.5", ".5" (up to 9 fractional digits).
    static func decimal(_ text: String) -> MediaTime? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { return nil }
        let whole = parts[0]
        guard whole.allSatisfy(\.isASCIIDigit), whole.count <= 12 else { return nil }
        let wholeValue = whole.isEmpty ? 0 : Int64(whole)!
        if parts.count == 1 {
            guard !whole.isEmpty else { return nil }
            return MediaTime(value: wholeValue, timescale: 1)
        }
        let fraction = parts[1]
        guard !fraction.isEmpty || !whole.isEmpty, fraction.count <= 9, fraction.allSatisfy(\.isASCIIDigit) else { return nil }
        var scale: Int64 = 1
        for _ in 0..<fraction.count { scale *= 10 }
        let fractionValue = fraction.isEmpty ? 0 : Int64(fraction)!
        let (scaled, overflow) = wholeValue.multipliedReportingOverflow(by: scale)
        guard !overflow else { return nil }
        return MediaTime(value: scaled + fractionValue, timescale: Int32(scale))
    }

    /// Formats a duration as "HH:MM:SS.fff" (milliseconds, rounded down); for programme output.
    public static func clockString(_ time: MediaTime) -> String {
        guard time.isNumeric else { return time.isPositiveInfinity || time.isIndefinite ? "indefinite" : "invalid" }
        let ms = time.convertScale(1000, method: .roundTowardNegativeInfinity).value
        let negative = ms < 0
        let magnitude = ms.magnitude
        let h = magnitude / 3_600_000, m = magnitude / 60_000 % 60, s = magnitude / 1000 % 60, f = magnitude % 1000
        return (negative ? "-" : "") + pad(Int(h), 2) + ":" + pad(Int(m), 2) + ":" + pad(Int(s), 2) + "." + pad(Int(f), 3)
    }
}

extension MediaTime {
    fileprivate var dividedByThousand: MediaTime {
        // value/timescale / 1000: scale the timescale when it fits, else round to nanoseconds.
        if Int64(timescale) * 1000 <= Int64(Int32.max) { return MediaTime(value: value, timescale: timescale * 1000) }
        return convertScale(1_000_000, method: .roundTowardZero).multiplied(byRatio: 1, over: 1000)
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
