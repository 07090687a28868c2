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
        nanosecondsSinceEpoch >= 0 ? nanosecondsSinceEpoch / 1_000_000_000 : (nanosecondsSinceEpoch - 999_999_999) / 1_000_000_000
    }

    /// Nanoseconds past ``secondsSinceEpoch`` (0 ..< 1e9).
    public var subsecondNanoseconds: Int { Int(nanosecondsSinceEpoch - secondsSinceEpoch * 1_000_000_000) }

    public static func < (lhs: UTCInstant, rhs: UTCInstant) -> Bool { lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch }

    /// The instant `time` later; a non-numeric time gives `nil`.
    public func advanced(by time: MediaTime) -> UTCInstant? {
        guard time.isNumeric else { return nil }
        let ns = time.convertScale(1_000_000_000, method: .roundTowardNegativeInfinity)
        guard ns.isNumeric else { return nil }
        let (sum, overflow) = nanosecondsSinceEpoch.addingReportingOverflow(ns.value)
        return overflow ? nil : UTCInstant(nanosecondsSinceEpoch: sum)
    }

    /// The time from `earlier` to this instant, in nanoseconds.
    public func since(_ earlier: UTCInstant) -> MediaTime {
        MediaTime(value: nanosecondsSinceEpoch - earlier.nanosecondsSinceEpoch, timescale: 1_000_000_000)
    }

    /// "2026-03-29T01:00:00Z".
    public var description: String {
        LocalDateTime(localSeconds: secondsSinceEpoch, nanoseconds: subsecondNanoseconds).description + "Z"
    }
}
