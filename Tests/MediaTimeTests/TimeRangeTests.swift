import MediaTime
import PropertyBased
import Testing

@Suite("TimeRange")
struct TimeRangeTests {
    let oneToThree = TimeRange(start: MediaTime(value: 1, timescale: 1), duration: MediaTime(value: 2, timescale: 1))

    @Test("contains its start but not its end")
    func containsHalfOpen() {
        #expect(oneToThree.containsTime(MediaTime(value: 1, timescale: 1)))
        #expect(oneToThree.containsTime(MediaTime(value: 5, timescale: 2)))
        #expect(!oneToThree.containsTime(MediaTime(value: 3, timescale: 1)))
        #expect(!oneToThree.containsTime(.invalid))
        #expect(oneToThree.end == MediaTime(value: 3, timescale: 1))
    }

    @Test("intersection and union of overlapping and disjoint ranges")
    func intersectionAndUnion() {
        let twoToFive = TimeRange(start: MediaTime(value: 2, timescale: 1), end: MediaTime(value: 5, timescale: 1))
        #expect(oneToThree.intersection(twoToFive) == TimeRange(start: MediaTime(value: 2, timescale: 1), end: MediaTime(value: 3, timescale: 1)))
        #expect(oneToThree.union(twoToFive) == TimeRange(start: MediaTime(value: 1, timescale: 1), end: MediaTime(value: 5, timescale: 1)))
        let later = TimeRange(start: MediaTime(value: 10, timescale: 1), duration: MediaTime(value: 1, timescale: 1))
        #expect(oneToThree.intersection(later).isEmpty)
    }

    @Test("the invalid range is invalid and contains nothing")
    func invalidRange() {
        #expect(!TimeRange.invalid.isValid)
        #expect(!TimeRange.invalid.containsTime(.zero))
        #expect(!TimeRange(start: .zero, duration: MediaTime(value: -1, timescale: 1)).isValid)
        #expect(!oneToThree.intersection(.invalid).isValid)
    }

    @Test("a time is in the intersection exactly when it is in both ranges")
    func intersectionLaw() async {
        let small = Gen.int64(in: -1000...1000)
        await propertyCheck(count: 1000, input: small, Gen.int64(in: 0...500), small, Gen.int64(in: 0...500), small) { s1, d1, s2, d2, t in
            let a = TimeRange(start: MediaTime(value: s1, timescale: 30), duration: MediaTime(value: d1, timescale: 30))
            let b = TimeRange(start: MediaTime(value: s2, timescale: 25), duration: MediaTime(value: d2, timescale: 25))
            let time = MediaTime(value: t, timescale: 24)
            #expect(a.intersection(b).containsTime(time) == (a.containsTime(time) && b.containsTime(time)))
            if a.containsTime(time) || b.containsTime(time) { #expect(a.union(b).containsTime(time)) }
        }
    }
}
