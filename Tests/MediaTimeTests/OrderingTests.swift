import MediaTime
import PropertyBased
import Testing

@Suite("Ordering is total and exact")
struct OrderingTests {
    @Test("numeric times compare as exact rationals, across timescales")
    func agreesWithRationalOrder() async {
        await propertyCheck(count: 2000, input: anyNumericTimes, anyNumericTimes) { a, b in
            let expected = rationalCompare(a.value, Int64(a.timescale), b.value, Int64(b.timescale))
            #expect(MediaTime.compare(a, b) == expected, "\(a) vs \(b)")
            #expect((a < b) == (expected < 0))
            #expect((a == b) == (expected == 0))
        }
    }

    @Test("exactly one of <, ==, > holds, and the order is antisymmetric")
    func totality() async {
        await propertyCheck(count: 1000, input: allTimes, allTimes) { a, b in
            let relations = [a < b, a == b, a > b].filter { $0 }.count
            #expect(relations == 1, "\(a) vs \(b)")
            #expect(MediaTime.compare(a, b) == -MediaTime.compare(b, a))
        }
    }

    @Test("the order is transitive")
    func transitivity() async {
        await propertyCheck(count: 1000, input: allTimes, allTimes, allTimes) { a, b, c in
            if a <= b && b <= c { #expect(a <= c, "\(a) <= \(b) <= \(c)") }
        }
    }

    @Test("equal times hash alike")
    func hashing() async {
        await propertyCheck(count: 1000, input: moderateTimes, Gen.int32(in: 1...1000)) { a, factor in
            let scaled = MediaTime(value: a.value * Int64(factor), timescale: a.timescale)
            // value·k / timescale·k is the same rational when the timescale still fits.
            if Int64(a.timescale) * Int64(factor) <= Int64(Int32.max) {
                let same = MediaTime(value: scaled.value, timescale: a.timescale * factor)
                #expect(same == a)
                #expect(same.hashValue == a.hashValue)
            }
        }
    }

    @Test("special times order as -inf < numeric < +inf < indefinite < invalid")
    func specialOrder() {
        let ordered: [MediaTime] = [.negativeInfinity, MediaTime(value: -5, timescale: 1), .zero, MediaTime(value: Int64.max, timescale: 1), .positiveInfinity, .indefinite, .invalid]
        for (i, earlier) in ordered.enumerated() {
            for later in ordered[(i + 1)...] { #expect(earlier < later, "\(earlier) < \(later)") }
        }
        #expect(MediaTime.invalid == MediaTime(value: 3, timescale: 0))
    }
}
