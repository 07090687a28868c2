/// A rational time: `value / timescale` seconds, with CMTime's semantics.
///
/// Like Core Media's `CMTime`, a `MediaTime` is either *numeric* (valid and finite),
/// or one of the special times: ``positiveInfinity``, ``negativeInfinity``,
/// ``indefinite`` (valid but unknown, e.g. the duration of a live stream) and
/// ``invalid``. Arithmetic and comparison are exact across timescales: they use
/// 128-bit intermediates and never lose precision silently.
///
/// Overflow never wraps. When an exact result does not fit in `Int64 / Int32`:
/// - addition and subtraction keep the exact result in the first timescale that
///   holds it (the least common multiple of the timescales, the larger, the smaller,
///   or the reduced fraction's denominator); when none does, they round half away
///   from zero at the larger timescale (or the smaller, if the value outgrows `Int64`)
///   and set ``Flags-swift.struct/hasBeenRounded``;
/// - a sum or difference whose magnitude exceeds what `Int64` can hold even then is
///   clamped to ``positiveInfinity`` or ``negativeInfinity`` (the sign of the exact result);
/// - conversions (``convertScale(_:method:)``) whose value does not fit are clamped
///   the same way.
public struct MediaTime: Sendable {
    /// The numerator.
    public var value: Int64
    /// The denominator: units per second. Always positive for a numeric time.
    public var timescale: Int32
    /// Validity, infinities, indefiniteness and rounding.
    public var flags: Flags

    /// The state bits of a time; CMTimeFlags' counterpart.
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// The time is valid. Every other flag requires this one.
        public static let valid = Flags(rawValue: 1 << 0)
        /// The value was rounded when the time was computed.
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)
        /// The time is positive infinity.
        public static let positiveInfinity = Flags(rawValue: 1 << 2)
        /// The time is negative infinity.
        public static let negativeInfinity = Flags(rawValue: 1 << 3)
        /// The time is valid but not known (for example the duration of a live stream).
        public static let indefinite = Flags(rawValue: 1 << 4)
        /// The special bits: a time with any of them set is not numeric.
        public static let implied: Flags = [.positiveInfinity, .negativeInfinity, .indefinite]
    }

    /// The timescale used when none is given and when the result of an operation needs one:
    /// 600 is divisible by 24, 25 and 30, as in QuickTime.
    public static let defaultTimescale: Int32 = 600

    /// The largest timescale (`Int32.max`).
    public static let maxTimescale: Int32 = .max

    /// A time of `value / timescale` seconds.
    ///
    /// A timescale <= 0 makes the time ``invalid``.
    public init(value: Int64, timescale: Int32) {
        if timescale <= 0 {
            self = .invalid
        } else {
            self.value = value
            self.timescale = timescale
            self.flags = .valid
        }
    }

    /// Creates a time from raw fields without checks (used for the special times).
    init(value: Int64, timescale: Int32, flags: Flags) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
    }

    /// A time of `seconds`, in `preferredTimescale` units, rounded half away from zero.
    ///
    /// NaN gives ``invalid``; ±infinity gives the matching infinite time; a finite
    /// value too large for `Int64` at that timescale is clamped to ±infinity.
    /// A result that is not exact has ``Flags-swift.struct/hasBeenRounded`` set.
    public init(seconds: Double, preferredTimescale: Int32) {
        guard preferredTimescale > 0, !seconds.isNaN else { self = .invalid; return }
        if seconds.isInfinite { self = seconds > 0 ? .positiveInfinity : .negativeInfinity; return }
        let scaled = seconds * Double(preferredTimescale)
        let rounded = scaled.rounded(.toNearestOrAwayFromZero)
        // 2^63 is exactly representable as a Double; anything at or beyond it does not fit.
        guard rounded < 9_223_372_036_854_775_808.0, rounded >= -9_223_372_036_854_775_808.0 else {
            self = seconds > 0 ? .positiveInfinity : .negativeInfinity
            return
        }
        self.init(value: Int64(rounded), timescale: preferredTimescale)
        if rounded != scaled { flags.insert(.hasBeenRounded) }
    }

    // MARK: Special times

    /// Zero seconds (0/1).
    public static let zero = MediaTime(value: 0, timescale: 1)
    /// An invalid time: the result of an undefined operation, or "no time".
    public static let invalid = MediaTime(value: 0, timescale: 0, flags: [])
    /// A valid time whose value is not known.
    public static let indefinite = MediaTime(value: 0, timescale: 0, flags: [.valid, .indefinite])
    /// Positive infinity.
    public static let positiveInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity])
    /// Negative infinity.
    public static let negativeInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity])

    // MARK: Classification

    /// Whether the time is valid (numeric, infinite or indefinite).
    public var isValid: Bool { flags.contains(.valid) }
    /// Whether the time is a finite number of seconds.
    public var isNumeric: Bool { isValid && flags.isDisjoint(with: .implied) }
    /// Whether the time is ``positiveInfinity``.
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    /// Whether the time is ``negativeInfinity``.
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    /// Whether the time is ``indefinite``.
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    /// Whether the value was rounded when the time was computed.
    public var hasBeenRounded: Bool { flags.contains(.hasBeenRounded) }

    /// The time in seconds as a `Double`: for logs, JSON and UI only.
    ///
    /// Infinite times give ±infinity; invalid and indefinite times give NaN.
    public var seconds: Double {
        switch kind {
        case .numeric: return Double(value) / Double(timescale)
        case .positiveInfinity: return .infinity
        case .negativeInfinity: return -.infinity
        case .indefinite, .invalid: return .nan
        }
    }

    /// The class of a time, in CMTimeCompare's order.
    enum Kind: Int, Comparable {
        case negativeInfinity, numeric, positiveInfinity, indefinite, invalid
        static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    var kind: Kind {
        if !isValid { return .invalid }
        if flags.contains(.indefinite) { return .indefinite }
        if flags.contains(.positiveInfinity) { return .positiveInfinity }
        if flags.contains(.negativeInfinity) { return .negativeInfinity }
        return .numeric
    }

    /// The absolute value of a numeric time; infinities become ``positiveInfinity``.
    public var magnitude: MediaTime {
        switch kind {
        case .numeric:
            if value >= 0 { return self }
            if value == .min { return .positiveInfinity }
            var result = self
            result.value = -value
            return result
        case .negativeInfinity, .positiveInfinity: return .positiveInfinity
        case .indefinite, .invalid: return self
        }
    }
}

// MARK: - Comparison

extension MediaTime: Comparable, Hashable {
    /// Exact comparison, CMTimeCompare's total order:
    /// `negativeInfinity < numeric < positiveInfinity < indefinite < invalid`.
    /// Numeric times compare as exact rationals (1/2 == 2/4). All invalid times are equal,
    /// as are all indefinite times and each infinity with itself.
    public static func compare(_ lhs: MediaTime, _ rhs: MediaTime) -> Int {
        let (kl, kr) = (lhs.kind, rhs.kind)
        if kl != kr { return kl < kr ? -1 : 1 }
        guard kl == .numeric else { return 0 }
        if lhs.timescale == rhs.timescale {
            return lhs.value == rhs.value ? 0 : (lhs.value < rhs.value ? -1 : 1)
        }
        // a/b <=> c/d  ⇔  a·d <=> c·b (b, d > 0); products fit in 128 bits.
        let left = Int128(lhs.value) * Int128(rhs.timescale)
        let right = Int128(rhs.value) * Int128(lhs.timescale)
        return left == right ? 0 : (left < right ? -1 : 1)
    }

    public static func < (lhs: MediaTime, rhs: MediaTime) -> Bool { compare(lhs, rhs) < 0 }
    public static func == (lhs: MediaTime, rhs: MediaTime) -> Bool { compare(lhs, rhs) == 0 }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        guard kind == .numeric else { return }
        // Equal rationals hash alike: hash the reduced fraction.
        let divisor = gcd(value.magnitude, UInt64(timescale))
        hasher.combine(value / Int64(divisor))
        hasher.combine(Int64(timescale) / Int64(divisor))
    }

    /// The earlier of two times (CMTimeMinimum).
    public static func minimum(_ a: MediaTime, _ b: MediaTime) -> MediaTime {
        if !a.isValid || !b.isValid { return .invalid }
        return b < a ? b : a
    }

    /// The later of two times (CMTimeMaximum).
    public static func maximum(_ a: MediaTime, _ b: MediaTime) -> MediaTime {
        if !a.isValid || !b.isValid { return .invalid }
        return b > a ? b : a
    }
}

// MARK: - Arithmetic

extension MediaTime {
    /// The sum, exact where a representable timescale exists (CMTimeAdd).
    ///
    /// Special times: invalid with anything is invalid; +∞ + −∞ and anything with
    /// indefinite is indefinite; an infinity with a numeric time is that infinity.
    public static func + (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: false)
    }

    /// The difference, exact where a representable timescale exists (CMTimeSubtract).
    public static func - (lhs: MediaTime, rhs: MediaTime) -> MediaTime {
        combine(lhs, rhs, negateRight: true)
    }

    public static func += (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs + rhs }
    public static func -= (lhs: inout MediaTime, rhs: MediaTime) { lhs = lhs - rhs }

    /// The negation; infinities swap sign.
    public static prefix func - (time: MediaTime) -> MediaTime { .zero - time }

    private static func combine(_ lhs: MediaTime, _ rhs: MediaTime, negateRight: Bool) -> MediaTime {
        var rightKind = rhs.kind
        if negateRight {
            if rightKind == .positiveInfinity { rightKind = .negativeInfinity } else if rightKind == .negativeInfinity { rightKind = .positiveInfinity }
        }
        switch (lhs.kind, rightKind) {
        case (.invalid, _), (_, .invalid): return .invalid
        case (.indefinite, _), (_, .indefinite): return .indefinite
        case (.positiveInfinity, .negativeInfinity), (.negativeInfinity, .positiveInfinity): return .indefinite
        case (.positiveInfinity, _), (_, .positiveInfinity): return .positiveInfinity
        case (.negativeInfinity, _), (_, .negativeInfinity): return .negativeInfinity
        case (.numeric, .numeric): break
        }
        let rounded = lhs.hasBeenRounded || rhs.hasBeenRounded
        let sign: Int128 = negateRight ? -1 : 1
        if lhs.timescale == rhs.timescale {
            let exact = Int128(lhs.value) + sign * Int128(rhs.value)
            return make(numerator: exact, timescale: lhs.timescale, rounded: rounded)
        }
        // The exact sum is numerator / (tl·tr). Keep it exact in the first timescale that
        // can hold it: the least common multiple, the larger, the smaller input timescale,
        // or the reduced fraction's own denominator.
        let tl = Int128(lhs.timescale), tr = Int128(rhs.timescale)
        let denominator = tl * tr
        let numerator = Int128(lhs.value) * tr + sign * Int128(rhs.value) * tl
        let common = tl / Int128(gcd(UInt64(lhs.timescale), UInt64(rhs.timescale))) * tr
        let reduced = denominator / Int128(gcd128(numerator.magnitude, denominator.magnitude))
        let larger = max(lhs.timescale, rhs.timescale), smaller = min(lhs.timescale, rhs.timescale)
        for candidate in [common, Int128(larger), Int128(smaller), reduced] where candidate <= Int128(Int32.max) {
            let scaled = numerator * candidate
            guard scaled % denominator == 0 else { continue }
            if let result = fitting(numerator: scaled / denominator, timescale: Int32(candidate), rounded: rounded) {
                return result
            }
        }
        // No exact form fits: round half away from zero at the larger timescale, or at the
        // smaller one when the value outgrows Int64 there; beyond that the sum is infinite.
        for target in [larger, smaller] {
            let (quotient, _) = divide(numerator * Int128(target), by: denominator, method: .roundHalfAwayFromZero, scalingUp: false)
            if let result = fitting(numerator: quotient, timescale: target, rounded: true) { return result }
        }
        return numerator > 0 ? .positiveInfinity : .negativeInfinity
    }

    /// `numerator / timescale` when the numerator fits in Int64, else the matching infinity.
    static func make(numerator: Int128, timescale: Int32, rounded: Bool) -> MediaTime {
        if let time = fitting(numerator: numerator, timescale: timescale, rounded: rounded) { return time }
        return numerator > 0 ? .positiveInfinity : .negativeInfinity
    }

    static func fitting(numerator: Int128, timescale: Int32, rounded: Bool) -> MediaTime? {
        guard numerator >= Int128(Int64.min), numerator <= Int128(Int64.max) else { return nil }
        var time = MediaTime(value: Int64(numerator), timescale: timescale)
        if rounded { time.flags.insert(.hasBeenRounded) }
        return time
    }

    /// Multiplies by `multiplier / divisor` exactly, then rounds to this time's
    /// timescale with `method` (CMTimeMultiplyByRatio). A zero divisor gives ``invalid``.
    public func multiplied(byRatio multiplier: Int32, over divisor: Int32, method: RoundingMethod = .default) -> MediaTime {
        guard divisor != 0 else { return .invalid }
        switch kind {
        case .invalid, .indefinite: return self
        case .positiveInfinity, .negativeInfinity:
            if multiplier == 0 { return .invalid }
            let positive = (kind == .positiveInfinity) == ((multiplier > 0) == (divisor > 0))
            return positive ? .positiveInfinity : .negativeInfinity
        case .numeric:
            var num = Int128(value) * Int128(multiplier)
            var den = Int128(divisor)
            if den < 0 { num = -num; den = -den }
            let (q, exact) = MediaTime.divide(num, by: den, method: method, scalingUp: multiplier.magnitude >= divisor.magnitude)
            return MediaTime.make(numerator: q, timescale: timescale, rounded: hasBeenRounded || !exact)
        }
    }

    /// Multiplies by an integer (CMTimeMultiply); overflow clamps to ±infinity.
    public static func * (lhs: MediaTime, rhs: Int32) -> MediaTime { lhs.multiplied(byRatio: rhs, over: 1) }

    /// Multiplies by a `Double` (CMTimeMultiplyByFloat64), keeping the timescale and
    /// rounding half away from zero. NaN gives invalid; overflow clamps to ±infinity.
    public func multiplied(by factor: Double) -> MediaTime {
        guard !factor.isNaN else { return .invalid }
        switch kind {
        case .invalid, .indefinite: return self
        case .positiveInfinity, .negativeInfinity:
            if factor == 0 { return .invalid }
            return (kind == .positiveInfinity) == (factor > 0) ? .positiveInfinity : .negativeInfinity
        case .numeric:
            if factor.isInfinite {
                if value == 0 { return .invalid }
                return (value > 0) == (factor > 0) ? .positiveInfinity : .negativeInfinity
            }
            let product = Double(value) * factor
            let rounded = product.rounded(.toNearestOrAwayFromZero)
            guard rounded < 9_223_372_036_854_775_808.0, rounded >= -9_223_372_036_854_775_808.0 else {
                return rounded > 0 ? .positiveInfinity : .negativeInfinity
            }
            var result = MediaTime(value: Int64(rounded), timescale: timescale)
            if hasBeenRounded || rounded != product { result.flags.insert(.hasBeenRounded) }
            return result
        }
    }
}

// MARK: - Timescale conversion

extension MediaTime {
    /// How a value is rounded when a time changes timescale (CMTimeRoundingMethod).
    public enum RoundingMethod: Sendable, Hashable, CaseIterable {
        /// Round to nearest; halves go away from zero. The default.
        case roundHalfAwayFromZero
        /// Truncate.
        case roundTowardZero
        /// Round any non-zero fraction away from zero.
        case roundAwayFromZero
        /// Toward zero when converting to a smaller timescale (less precision), away from zero
        /// when converting to a larger one; a negative time never rounds to 0 but to −1/newTimescale.
        case quickTime
        /// Ceiling.
        case roundTowardPositiveInfinity
        /// Floor.
        case roundTowardNegativeInfinity

        /// ``roundHalfAwayFromZero``.
        public static let `default` = RoundingMethod.roundHalfAwayFromZero
    }

    /// This time in `newTimescale` units, rounded with `method` (CMTimeConvertScale).
    ///
    /// Non-numeric times are returned unchanged; a timescale <= 0 gives ``invalid``;
    /// a value that no longer fits in `Int64` is clamped to ±infinity.
    public func convertScale(_ newTimescale: Int32, method: RoundingMethod = .default) -> MediaTime {
        guard newTimescale > 0 else { return .invalid }
        guard isNumeric else { return self }
        if newTimescale == timescale { return self }
        let (q, exact) = MediaTime.divide(
            Int128(value) * Int128(newTimescale), by: Int128(timescale),
            method: method, scalingUp: newTimescale > timescale)
        return MediaTime.make(numerator: q, timescale: newTimescale, rounded: hasBeenRounded || !exact)
    }

    /// `numerator / denominator` (denominator > 0) rounded with `method`; also whether it was exact.
    static func divide(_ numerator: Int128, by denominator: Int128, method: RoundingMethod, scalingUp: Bool) -> (Int128, Bool) {
        let truncated = numerator / denominator
        let remainder = numerator % denominator
        if remainder == 0 { return (truncated, true) }
        let negative = numerator < 0
        let awayFromZero = truncated + (negative ? -1 : 1)
        switch method {
        case .roundTowardZero:
            return (truncated, false)
        case .roundAwayFromZero:
            return (awayFromZero, false)
        case .roundHalfAwayFromZero:
            let twice = remainder.magnitude * 2
            return (twice >= denominator.magnitude ? awayFromZero : truncated, false)
        case .roundTowardPositiveInfinity:
            return (negative ? truncated : awayFromZero, false)
        case .roundTowardNegativeInfinity:
            return (negative ? awayFromZero : truncated, false)
        case .quickTime:
            if scalingUp { return (awayFromZero, false) }
            // Toward zero, but a negative time never becomes 0.
            if negative && truncated == 0 { return (-1, false) }
            return (truncated, false)
        }
    }
}

// MARK: - Description

extension MediaTime: CustomStringConvertible, CustomDebugStringConvertible {
    /// "1/2 = 0.500 s", "+infinity", "-infinity", "indefinite", "invalid".
    public var description: String {
        switch kind {
        case .invalid: return "invalid"
        case .indefinite: return "indefinite"
        case .positiveInfinity: return "+infinity"
        case .negativeInfinity: return "-infinity"
        case .numeric: return "\(value)/\(timescale) = \(MediaTime.format(seconds: seconds, decimals: 3)) s"
        }
    }

    public var debugDescription: String {
        "MediaTime(\(description)\(hasBeenRounded ? ", rounded" : ""))"
    }

    /// Seconds with a fixed number of decimals, without Foundation's formatters.
    public static func format(seconds: Double, decimals: Int) -> String {
        guard seconds.isFinite else { return "\(seconds)" }
        var scale: Double = 1
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (seconds.magnitude * scale).rounded(.toNearestOrAwayFromZero)
        let whole = UInt64(scaled / scale)
        let fraction = UInt64(scaled - Double(whole) * scale)
        var text = (seconds < 0 && scaled != 0 ? "-" : "") + String(whole)
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: max(0, decimals - digits.count)) + digits
        }
        return text
    }
}

/// Euclid's greatest common divisor on 128 bits (1 when both are zero).
func gcd128(_ a: UInt128, _ b: UInt128) -> UInt128 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x == 0 ? 1 : x
}

/// Euclid's greatest common divisor (gcd(0, n) == n).
@inline(__always)
func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x == 0 ? 1 : x
}
