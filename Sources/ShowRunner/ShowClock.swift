public import MediaTime
public import Scheduling
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

    /// The system's real time plus `offset` seconds (`--clock-offset`).
    public static func system(offsetSeconds: Double = 0) -> ShowClock {
        ShowClock(base: .realTime(offsetNanoseconds: Int64((offsetSeconds * 1e9).rounded())))
    }

    /// `start` now, advancing with `host` (`--start-at`; a ``ManualClock`` in tests).
    public static func starting(at start: UTCInstant, host: any HostClock = MonotonicClock()) -> ShowClock {
        ShowClock(base: .anchored(start: start, hostStart: host.now(), host: host))
    }

    /// The show's current instant.
    public func now() -> UTCInstant {
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
