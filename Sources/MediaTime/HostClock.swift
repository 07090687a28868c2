import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A source of "now" on the host's monotonic timeline, in nanoseconds (timescale 1e9).
///
/// The engine never reads the system clock directly: it asks a `HostClock`, so tests can
/// substitute a ``ManualClock`` and run faster than real time while asserting exactly.
public protocol HostClock: Sendable {
    /// The current host time.
    func now() -> MediaTime
    /// Blocks the calling thread until `deadline` (host time), or returns at once if it has passed.
    func sleep(until deadline: MediaTime)
}

extension MediaTime {
    /// The timescale of host times: nanoseconds.
    public static let nanosecondTimescale: Int32 = 1_000_000_000

    /// A host time or duration of `nanoseconds`.
    public static func nanoseconds(_ nanoseconds: Int64) -> MediaTime {
        MediaTime(value: nanoseconds, timescale: nanosecondTimescale)
    }

    /// This time in whole nanoseconds, rounded half away from zero (for host-clock arithmetic).
    public var nanoseconds: Int64 {
        let converted = convertScale(MediaTime.nanosecondTimescale)
        if converted.isPositiveInfinity { return .max }
        if converted.isNegativeInfinity { return .min }
        return converted.isNumeric ? converted.value : 0
    }
}

/// The system's monotonic clock (CLOCK_MONOTONIC), the clock DRM timestamps its vblank events with.
public struct MonotonicClock: HostClock {
    public init() {}

    public func now() -> MediaTime {
        .nanoseconds(MonotonicClock.nanosecondsNow())
    }

    public func sleep(until deadline: MediaTime) {
        var request = timespec()
        let target = deadline.nanoseconds
        request.tv_sec = Int(target / 1_000_000_000)
        request.tv_nsec = Int(target % 1_000_000_000)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &request, nil) == EINTR {}
    }

    /// CLOCK_MONOTONIC in nanoseconds. The corresponding C function is `clock_gettime`.
    public static func nanosecondsNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

/// A clock that moves only when told to: the test seam for pacing and A/V sync.
///
/// ``sleep(until:)`` does not block: it advances the clock to the deadline, so a paced
/// loop driven by a `ManualClock` runs as fast as the machine allows while every
/// timestamp stays exactly what real time would have given.
public final class ManualClock: HostClock {
    private let current: LockedValue<MediaTime>

    public init(start: MediaTime = .zero) {
        current = LockedValue(start)
    }

    public func now() -> MediaTime { current.withLock { $0 } }

    public func sleep(until deadline: MediaTime) {
        advance(to: deadline)
    }

    /// Moves the clock forward by `duration`.
    public func advance(by duration: MediaTime) {
        current.withLock { $0 = $0 + duration }
    }

    /// Sets the clock to `time` if that is later than now.
    public func advance(to time: MediaTime) {
        current.withLock { if time > $0 { $0 = time } }
    }
}

