public import MediaTime

/// A moment in absolute time: nanoseconds since 1970-01-01T00:00:00Z (leap seconds ignored, as POSIX does).
///
/// The schedule's resolver works on instants; ``ZoneInfo`` turns them into wall-clock times and back.
public struct UTCInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) { self.nanosecondsSinceEpoch = nanosecondsSinceEpoch }

    /// Beyond what 64-bit nanoseconds hold (about 1677 to 2262) the instant saturates at the
    /// nearest end: a schedule may name the year 6025, and it must read as "very late", not trap.
    public init(secondsSinceEpoch seconds: Int64, nanoseconds: Int = 0) {
        let (whole, overflowed) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflowedAgain) = whole.addingReportingOverflow(Int64(nanoseconds))
        nanosecondsSinceEpoch = overflowed || overflowedAgain ? (seconds < 0 ? .min : .max) : sum
    }

    /// Whole seconds (floor).
    public var secondsSinceEpoch: Int64 {
        let (quotient, remainder) = nanosecondsSinceEpoch.quotientAndRemainder(dividingBy: 1_000_000_000)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// Nanoseconds past ``secondsSinceEpoch`` (0 ..< 1e9).
    public var subsecondNanoseconds: Int {
        let remainder = nanosecondsSinceEpoch % 1_000_000_000
        return Int(remainder < 0 ? remainder + 1_000_000_000 : remainder)
    }

    public static func < (lhs: UTCInstant, rhs: UTCInstant) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }

    /// The instant `time` later; a non-numeric time gives `nil`.
    public func advanced(by time: MediaTime) -> UTCInstant? {
        guard time.isNumeric else { return nil }
        let ns = time.convertScale(1_000_000_000, method: .roundTowardNegativeInfinity)
        guard ns.isNumeric else { return nil }
        let (sum, overflow) = nanosecondsSinceEpoch.addingReportingOverflow(ns.value)
        return overflow ? nil : UTCInstant(nanosecondsSinceEpoch: sum)
    }

    /// The time from `earlier` to this instant, in nanoseconds (saturating, as the instants do).
    public func since(_ earlier: UTCInstant) -> MediaTime {
        MediaTime(value: saturatingDifference(nanosecondsSinceEpoch, earlier.nanosecondsSinceEpoch), timescale: 1_000_000_000)
    }

    /// The instants a schedule can be asked about: 1900-01-01 to 2200-01-01 UTC.
    ///
    /// The resolver searches up to a century ahead of an instant (``ScheduleResolver/horizonDays``)
    /// and its arithmetic saturates at 64-bit nanoseconds' ends (1677 and 2262) instead of
    /// trapping, so an instant outside this range would be answered with a clamped, wrong time.
    /// The command line and the inspector refuse such instants with ``addressableDescription``.
    public static let addressable = UTCInstant(secondsSinceEpoch: -2_208_988_800) ... UTCInstant(secondsSinceEpoch: 7_258_118_400)

    /// What ``addressable`` spans, for error messages.
    public static let addressableDescription = "1900-01-01 to 2200-01-01 UTC"

    /// "2026-03-29T01:00:00Z".
    public var description: String {
        LocalDateTime(localSeconds: secondsSinceEpoch, nanoseconds: subsecondNanoseconds).description + "Z"
    }
}

// Sums, differences and products of nanoseconds that stop at the ends of `Int64` instead of
// trapping: a schedule may name absurd lengths ("99999h", repeated 10000 times) and far years,
// and must still resolve.

/// `a + b`, at Int64's nearest end instead of trapping.
func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
    let (result, overflow) = a.addingReportingOverflow(b)
    return overflow ? (b > 0 ? .max : .min) : result
}

/// `a - b`, at Int64's nearest end instead of trapping (`-b` itself traps for `Int64.min`).
func saturatingDifference(_ a: Int64, _ b: Int64) -> Int64 {
    let (result, overflow) = a.subtractingReportingOverflow(b)
    return overflow ? (b < 0 ? .max : .min) : result
}

/// `a * b`, at Int64's nearest end instead of trapping.
func saturatingProduct(_ a: Int64, _ b: Int64) -> Int64 {
    let (result, overflow) = a.multipliedReportingOverflow(by: b)
    return overflow ? ((a > 0) == (b > 0) ? .max : .min) : result
}
