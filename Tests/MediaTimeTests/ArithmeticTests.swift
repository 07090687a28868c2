import MediaTime
import PropertyBased
import Testing

@Suite("Arithmetic is exact or says it is not")
struct ArithmeticTests {
    @Test("a + b - b == a, exactly, whenever the sum was not rounded")
    func addThenSubtract() async {
        let exactCount = Counter()
        await propertyCheck(count: 2000, input: moderateTimes, moderateTimes) { a, b in
            let sum = a + b
            #expect(sum.isNumeric, "\(a) + \(b) gave \(sum)")
            guard !sum.hasBeenRounded else { return }
            exactCount.increment()
            let back = sum - b
            #expect(back == a, "\(a) + \(b) - \(b) gave \(back)")
            #expect(!back.hasBeenRounded)
        }
        // Most generated timescale pairs have a representable common timescale.
        #expect(exactCount.value > 500)
    }

    @Test("an exact sum keeps a timescale the result can be written in exactly")
    func exactTimescale() {
        let sum = MediaTime(value: 1, timescale: 30) + MediaTime(value: 1, timescale: 25)
        #expect(sum.timescale == 150)
        #expect(sum.value == 11)
        #expect(!sum.hasBeenRounded)
        let same = MediaTime(value: 3, timescale: 600) + MediaTime(value: 7, timescale: 600)
        #expect(same.timescale == 600 && same.value == 10)
    }

    @Test("a sum with no common timescale is rounded to the larger one and flagged")
    func roundedSum() {
        let a = MediaTime(value: 1, timescale: 1_000_000_007)
        let b = MediaTime(value: 1, timescale: 999_999_937)
        let sum = a + b
        #expect(sum.hasBeenRounded)
        #expect(sum.timescale == 1_000_000_007)
        #expect((sum.seconds - (a.seconds + b.seconds)).magnitude < 1e-9)
    }

    @Test("overflow never wraps: it yields the infinity with the sign of the exact result")
    func noSilentOverflow() async {
        await propertyCheck(count: 2000, input: Gen.int64(), Gen.int64(), timescales) { x, y, timescale in
            let a = MediaTime(value: x, timescale: timescale), b = MediaTime(value: y, timescale: timescale)
            let exact = Int128(x) + Int128(y)
            let sum = a + b
            if exact > Int128(Int64.max) {
                #expect(sum.isPositiveInfinity)
            } else if exact < Int128(Int64.min) {
                #expect(sum.isNegativeInfinity)
            } else {
                #expect(sum.isNumeric && Int128(sum.value) == exact && sum.timescale == timescale)
            }
        }
        #expect((MediaTime(value: .max, timescale: 1) * 2).isPositiveInfinity)
        #expect((MediaTime(value: .min, timescale: 1) * 2).isNegativeInfinity)
        #expect(MediaTime(value: .max, timescale: 1).convertScale(1000).isPositiveInfinity)
        #expect(MediaTime(value: .max, timescale: 1).multiplied(by: 4.0).isPositiveInfinity)
        #expect(MediaTime(seconds: 1e300, preferredTimescale: 600).isPositiveInfinity)
    }

    @Test("special times combine as Core Media's do")
    func specialArithmetic() {
        let five = MediaTime(value: 5, timescale: 1)
        #expect((MediaTime.invalid + five) == .invalid)
        #expect((MediaTime.positiveInfinity + five).isPositiveInfinity)
        #expect((MediaTime.positiveInfinity + .negativeInfinity).isIndefinite)
        #expect((MediaTime.positiveInfinity - .positiveInfinity).isIndefinite)
        #expect((five - .positiveInfinity).isNegativeInfinity)
        #expect((MediaTime.indefinite + five).isIndefinite)
        #expect((-five) == MediaTime(value: -5, timescale: 1))
    }

    @Test("multiplying by a ratio rounds like a conversion and keeps the timescale")
    func multiplyByRatio() async {
        await propertyCheck(count: 1000, input: moderateTimes, Gen.int32(in: -1000...1000), Gen.int32(in: 1...1000)) { a, m, d in
            let product = a.multiplied(byRatio: m, over: d, method: .roundTowardNegativeInfinity)
            #expect(product.timescale == a.timescale)
            let numerator = Int128(a.value) * Int128(m)
            // floor(numerator / d)
            #expect(Int128(product.value) * Int128(d) <= numerator)
            #expect((Int128(product.value) + 1) * Int128(d) > numerator)
        }
        #expect(MediaTime(value: 3, timescale: 2).multiplied(byRatio: 1, over: 0) == .invalid)
    }

    @Test("multiplying by a Double rounds half away from zero")
    func multiplyByDouble() {
        let time = MediaTime(value: 3, timescale: 10)
        #expect(time.multiplied(by: 1.5).value == 5)  // 4.5 → 5
        #expect(MediaTime(value: -3, timescale: 10).multiplied(by: 1.5).value == -5)
        #expect(time.multiplied(by: 2).value == 6)
        #expect(time.multiplied(by: .nan) == .invalid)
    }
}

/// A tally shared with a property body (which is a non-isolated closure).
final class Counter: Sendable {
    private let count = LockedValue(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

import Synchronization
import Threading
