/// A range of time: a start and a duration, with CMTimeRange's semantics.
///
/// A range is valid when both times are valid, the duration is not negative and not
/// indefinite-start. Its ``end`` is `start + duration`; a time is contained when
/// `start <= time < end` (the end is exclusive, as in CMTimeRangeContainsTime).
public struct TimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: MediaTime
    public var duration: MediaTime

    /// A range from `start` lasting `duration`.
    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    /// A range from `start` to `end` (CMTimeRangeFromTimeToTime).
    public init(start: MediaTime, end: MediaTime) {
        self.start = start
        self.duration = end - start
    }

    /// The invalid range (kCMTimeRangeInvalid).
    public static let invalid = TimeRange(start: .invalid, duration: .invalid)
    /// The empty range at zero (kCMTimeRangeZero).
    public static let zero = TimeRange(start: .zero, duration: .zero)

    /// Whether start and duration are valid and the duration is not negative.
    public var isValid: Bool {
        start.isValid && duration.isValid && !start.isIndefinite && !start.isPositiveInfinity
            && !(duration.isNumeric && duration.value < 0) && !duration.isNegativeInfinity
    }

    /// Whether the range is valid and lasts zero seconds.
    public var isEmpty: Bool { isValid && duration == .zero }

    /// The first time after the range: `start + duration`.
    public var end: MediaTime { isValid ? start + duration : .invalid }

    /// Whether `start <= time < end`.
    public func containsTime(_ time: MediaTime) -> Bool {
        guard isValid, time.isValid, !time.isIndefinite else { return false }
        return time >= start && time < end
    }

    /// Whether `other` lies entirely inside this range.
    public func containsTimeRange(_ other: TimeRange) -> Bool {
        guard isValid, other.isValid else { return false }
        return other.start >= start && other.end <= end
    }

    /// The overlap of two ranges; an empty range (at the later start) when they do not meet.
    public func intersection(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid else { return .invalid }
        let lower = MediaTime.maximum(start, other.start)
        let upper = MediaTime.minimum(end, other.end)
        if upper <= lower { return TimeRange(start: lower, duration: .zero) }
        return TimeRange(start: lower, end: upper)
    }

    /// The smallest range containing both (CMTimeRangeGetUnion).
    public func union(_ other: TimeRange) -> TimeRange {
        guard isValid, other.isValid else { return .invalid }
        let lower = MediaTime.minimum(start, other.start)
        let upper = MediaTime.maximum(end, other.end)
        return TimeRange(start: lower, end: upper)
    }

    public var description: String {
        guard isValid else { return "invalid range" }
        return "[\(start) … \(end))"
    }
}
