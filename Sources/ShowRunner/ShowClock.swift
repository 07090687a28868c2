public import MediaTime
public import Scheduling
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The wall clock a show runs on: the system's real time, shifted by an offset, or a chosen instant
/// (`--start-at`) that then advances with a host clock. Tests and operators use the latter to see what
/// a given moment plays.
public struct ShowClock: Sendable {
    enum Base: Sendable {
        case realTime(offsetNanoseconds: Int64)
        case anchored(start: UTCInstant, hostStart: MediaTime, host: any HostClock)
    }

    let base: Base
    /// Steps applied on top (a test's clock step, an operator's changed offset).
    let shift: WallClockShift?

    /// The system's real time plus `offset` seconds (`--clock-offset`).
    public static func system(offsetSeconds: Double = 0) -> ShowClock {
        ShowClock(base: .realTime(offsetNanoseconds: Int64((offsetSeconds * 1e9).rounded())), shift: nil)
    }

    /// `start` now, advancing with `host` (`--start-at`; a ``ManualClock`` in tests).
    ///
    /// `shift` steps it while it runs, as an NTP step or a changed time zone setting steps the real
    /// clock: the show sees the jump and resolves the programme again.
    public static func starting(at start: UTCInstant, host: any HostClock = MonotonicClock(), shift: WallClockShift? = nil) -> ShowClock {
        ShowClock(base: .anchored(start: start, hostStart: host.now(), host: host), shift: shift)
    }

    /// The show's current instant.
    public func now() -> UTCInstant {
        let instant = baseNow()
        guard let shift else { return instant }
        return UTCInstant(nanosecondsSinceEpoch: instant.nanosecondsSinceEpoch + shift.nanoseconds)
    }

    private func baseNow() -> UTCInstant {
        switch base {
        case .realTime(let offset):
            var spec = timespec()
            clock_gettime(CLOCK_REALTIME, &spec)
            return UTCInstant(nanosecondsSinceEpoch: Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec) + offset)
        case .anchored(let start, let hostStart, let host):
            let elapsed = max(.zero, host.now() - hostStart)
            return UTCInstant(nanosecondsSinceEpoch: start.nanosecondsSinceEpoch + elapsed.nanoseconds)
        }
    }
}

/// A step applied to a ``ShowClock`` while it runs.
public final class WallClockShift: Sendable {
    private let shift = LockedValue<Int64>(0)

    public init() {}

    /// Steps the clock by `time` (negative: back).
    public func step(by time: MediaTime) { shift.withLock { $0 += time.nanoseconds } }

    var nanoseconds: Int64 { shift.withLock { $0 } }
}
