#if canImport(Glibc)
import Glibc
#endif
import MediaTime
import Testing

/// The mapping between presentation (host) times on CLOCK_MONOTONIC and wall-clock times on
/// CLOCK_REALTIME, for the real clocks and for the tests' manual clock.
@Suite("Host clock and wall clock")
struct WallClockMappingTests {
    @Test("the monotonic clock maps its now onto CLOCK_REALTIME read around it, to the microsecond")
    func monotonicMapsOntoRealTime() {
        let clock = MonotonicClock()
        for _ in 0..<100 {
            let before = MonotonicClock.wallClockNanosecondsNow()
            let wall = clock.wallClockNow().nanoseconds
            let after = MonotonicClock.wallClockNanosecondsNow()
            // The mapping reads the host clock and then the clocks' offset, all between `before`
            // and `after`. A preemption between the offset's own reads can put it off by half
            // their window, which lies inside [before, after]: that is the bound, whatever the
            // host's load (ThreadSanitizer's runs and a busy CI machine widen the window).
            let slack = (after - before) / 2 + 1_000
            #expect(wall >= before - slack && wall <= after + slack, "wall \(wall) outside [\(before), \(after)] ± \(slack) ns")
        }
    }

    @Test("the mapping is re-read at every call: two host times a second apart are a second apart on the wall")
    func mappingFollowsHostTime() {
        let clock = MonotonicClock()
        let host = clock.now()
        let later = host + MediaTime(value: 1, timescale: 1)
        let difference = clock.wallClockTime(at: later) - clock.wallClockTime(at: host)
        // Both calls read the offset anew; between them NTP could slew it by nanoseconds at most.
        #expect(abs(difference.nanoseconds - 1_000_000_000) < 100_000)
    }

    @Test("a manual clock's wall clock steps and drifts when told, and host time never moves with it")
    func manualClockStepsAndDrifts() {
        let clock = ManualClock(start: .nanoseconds(5_000_000_000), wallClockOffset: .nanoseconds(1_000_000_000_000))
        #expect(clock.wallClockNow() == .nanoseconds(1_005_000_000_000))
        clock.stepWallClock(by: MediaTime(value: 80, timescale: 1000))
        #expect(clock.now() == .nanoseconds(5_000_000_000))
        #expect(clock.wallClockNow() == .nanoseconds(1_005_080_000_000))
        // 500 ppm faster: after 10 s of host time the wall clock gained 5 ms.
        clock.setWallClockDrift(ppm: 500)
        clock.advance(by: MediaTime(value: 10, timescale: 1))
        #expect(clock.wallClockNow() == .nanoseconds(1_015_085_000_000))
        // Stopping the drift keeps what it accumulated.
        clock.setWallClockDrift(ppm: 0)
        clock.advance(by: MediaTime(value: 1, timescale: 1))
        #expect(clock.wallClockNow() == .nanoseconds(1_016_085_000_000))
        // A host time in the past maps through the same offset.
        #expect(clock.wallClockTime(at: .nanoseconds(16_000_000_000)) == .nanoseconds(1_016_085_000_000))
    }
}
