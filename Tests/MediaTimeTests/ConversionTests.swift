import MediaTime
import PropertyBased
import Testing

@Suite("Timescale conversion rounds exactly as specified")
struct ConversionTests {
    /// Checks `r` against the exact quotient `n / t` (t > 0) by inequalities alone.
    static func satisfies(_ method: MediaTime.RoundingMethod, r: Int128, n: Int128, t: Int128, scalingUp: Bool) -> Bool {
        let rt = r * t
        switch method {
        case .roundTowardZero:
            return rt.magnitude <= n.magnitude && n.magnitude < (r.magnitude + 1) * t.magnitude && (r == 0 || (r < 0) == (n < 0))
        case .roundAwayFromZero:
            return n.magnitude <= rt.magnitude && (r.magnitude == 0 || (r.magnitude - 1) * t.magnitude < n.magnitude) && (r == 0 || (r < 0) == (n < 0))
        case .roundHalfAwayFromZero:
            let twice = (rt - n).magnitude * 2
            if twice > t.magnitude { return false }
            if twice == t.magnitude { return rt.magnitude > n.magnitude }
            return true
        case .roundTowardPositiveInfinity:
            return rt >= n && rt - t < n
        case .roundTowardNegativeInfinity:
            return rt <= n && rt + t > n
        case .quickTime:
            if scalingUp { return satisfies(.roundAwayFromZero, r: r, n: n, t: t, scalingUp: true) }
            if n < 0 && n > -t { return r == -1 }  // never rounds a negative time to zero
            return satisfies(.roundTowardZero, r: r, n: n, t: t, scalingUp: false)
        }
    }

    @Test("every rounding method, checked against the exact quotient", arguments: MediaTime.RoundingMethod.allCases)
    func rounding(method: MediaTime.RoundingMethod) async {
        await propertyCheck(count: 1000, input: anyNumericTimes, timescales) { time, newTimescale in
            let converted = time.convertScale(newTimescale, method: method)
            let n = Int128(time.value) * Int128(newTimescale)
            if converted.isNumeric {
                #expect(converted.timescale == newTimescale)
                #expect(
                    ConversionTests.satisfies(method, r: Int128(converted.value), n: n, t: Int128(time.timescale), scalingUp: newTimescale > time.timescale),
                    "\(time) → /\(newTimescale) with \(method) gave \(converted.value)")
                let exact = n % Int128(time.timescale) == 0
                #expect(converted.hasBeenRounded == !exact || newTimescale == time.timescale)
            } else {
                // Only a value beyond Int64 may leave the numeric range, and then with the right sign.
                #expect((n / Int128(time.timescale)).magnitude >= UInt128(Int64.max))
                #expect(converted.isPositiveInfinity == (n > 0))
            }
        }
    }

    @Test("known cases for each method")
    func knownCases() {
        let third = MediaTime(value: 1, timescale: 3)  // 0.333… s
        #expect(third.convertScale(10, method: .roundHalfAwayFromZero).value == 3)
        #expect(third.convertScale(10, method: .roundAwayFromZero).value == 4)
        #expect(third.convertScale(10, method: .roundTowardZero).value == 3)
        #expect(third.convertScale(10, method: .quickTime).value == 4)  // 3 → 10 scales up
        #expect(third.convertScale(10, method: .roundTowardPositiveInfinity).value == 4)
        #expect(third.convertScale(10, method: .roundTowardNegativeInfinity).value == 3)
        let half = MediaTime(value: -1, timescale: 2)
        #expect(half.convertScale(1).value == -1)  // half away from zero
        #expect(MediaTime(value: -1, timescale: 1000).convertScale(10, method: .quickTime).value == -1)
        #expect(MediaTime(value: 1, timescale: 1000).convertScale(10, method: .quickTime).value == 0)
        #expect(MediaTime(value: 5, timescale: 3).convertScale(0) == .invalid)
    }

    @Test("seconds round-trip to within half a unit of the timescale")
    func secondsRoundTrip() async {
        await propertyCheck(count: 1000, input: Gen.double(in: -1e6...1e6), timescales) { seconds, timescale in
            let time = MediaTime(seconds: seconds, preferredTimescale: timescale)
            #expect(time.isNumeric)
            #expect(time.timescale == timescale)
            #expect((time.seconds - seconds).magnitude <= 0.5 / Double(timescale) + seconds.magnitude * 1e-15 + 1e-15)
        }
        #expect(MediaTime(seconds: .nan, preferredTimescale: 600) == .invalid)
        #expect(MediaTime(seconds: -.infinity, preferredTimescale: 600).isNegativeInfinity)
        #expect(MediaTime(seconds: 0.5, preferredTimescale: 600) == MediaTime(value: 1, timescale: 2))
    }
}
