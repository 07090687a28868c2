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
///
/// Two timelines meet here. Presentation times (vblank stamps, audio clock readings) are host
/// times on the monotonic clock (CLOCK_MONOTONIC), which never jumps. Schedules and other screens
/// speak wall-clock time (CLOCK_REALTIME: nanoseconds since the Unix epoch, UTC), which NTP slews
/// and may step. ``wallClockTime(at:)`` maps the first onto the second with the offset between
/// them read *now*, so every call sees the latest slew or step.
public protocol HostClock: Sendable {
    /// The current host time.
    func now() -> MediaTime
    /// Blocks the calling thread until `deadline` (host time), or returns at once if it has passed.
    func sleep(until deadline: MediaTime)
    /// The wall-clock instant (CLOCK_REALTIME, nanoseconds since 1970-01-01T00:00:00Z as a
    /// `MediaTime` with timescale 1e9) of host time `host`, with today's offset between the two
    /// clocks.
    func wallClockTime(at host: MediaTime) -> MediaTime
}

extension HostClock {
    /// The wall-clock instant now.
    public func wallClockNow() -> MediaTime { wallClockTime(at: now()) }
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

    /// CLOCK_REALTIME at `host` on CLOCK_MONOTONIC: the offset between the clocks is read at each
    /// call (two vDSO reads, tens of nanoseconds), so an NTP step or slew shows at once.
    public func wallClockTime(at host: MediaTime) -> MediaTime {
        .nanoseconds(host.nanoseconds + MonotonicClock.wallClockOffsetNanoseconds())
    }

    /// CLOCK_MONOTONIC in nanoseconds. The corresponding C function is `clock_gettime`.
    public static func nanosecondsNow() -> Int64 { clockNanoseconds(CLOCK_MONOTONIC) }

    /// CLOCK_REALTIME in nanoseconds since the Unix epoch.
    public static func wallClockNanosecondsNow() -> Int64 { clockNanoseconds(CLOCK_REALTIME) }

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC now, in nanoseconds.
    ///
    /// Each try takes a monotonic reading between two wall-clock readings and pairs it with their
    /// midpoint; a preemption inside a try can put the midpoint off by up to half the try's window,
    /// so of three tries the narrowest window is kept (a quiet try is tens of nanoseconds wide, and
    /// the search stops at the first within a microsecond).
    public static func wallClockOffsetNanoseconds() -> Int64 {
        var best = (window: Int64.max, offset: Int64(0))
        for _ in 0..<3 {
            let before = wallClockNanosecondsNow()
            let monotonic = nanosecondsNow()
            let after = wallClockNanosecondsNow()
            let window = after - before
            if window < best.window { best = (window, before + window / 2 - monotonic) }
            if window <= 1_000 { break }
        }
        return best.offset
    }
}

/// A clock that moves only when told to: the test seam for pacing and A/V sync.
///
/// ``sleep(until:)`` does not block: it advances the clock to the deadline, so a paced
/// loop driven by a `ManualClock` runs as fast as the machine allows while every
/// timestamp stays exactly what real time would have given.
public final class ManualClock: HostClock {
    private let current: LockedValue<MediaTime>
    /// Wall-clock time minus host time, and how fast the wall clock runs against the host clock.
    private let wall: LockedValue<(offset: MediaTime, ratePPM: Double, since: MediaTime)>

    /// A clock at `start`, whose wall clock reads `start + wallClockOffset` (by default the Unix
    /// epoch plus 56 years, 2026-01-01T00:00:00Z, so wall times look like today's).
    public init(start: MediaTime = .zero, wallClockOffset: MediaTime = .nanoseconds(1_767_225_600_000_000_000)) {
        current = LockedValue(start)
        wall = LockedValue((wallClockOffset, 0, start))
    }

    public func now() -> MediaTime { current.withLock { $0 } }

    /// The wall clock at `host`: the offset, plus the drift accumulated since the drift was set.
    public func wallClockTime(at host: MediaTime) -> MediaTime {
        let (offset, ppm, since) = wall.withLock { $0 }
        return ManualClock.wallClockTime(at: host, offset: offset, ppm: ppm, since: since)
    }

    private static func wallClockTime(at host: MediaTime, offset: MediaTime, ppm: Double, since: MediaTime) -> MediaTime {
        let drift = ppm == 0 ? MediaTime.zero : .nanoseconds(Int64((Double((host - since).nanoseconds) * ppm / 1e6).rounded()))
        return host + offset + drift
    }

    /// Steps the wall clock by `time` (negative: back), as an NTP step or an operator setting the
    /// date does; host time does not move.
    public func stepWallClock(by time: MediaTime) {
        wall.withLock { $0.offset = $0.offset + time }
    }

    /// Makes the wall clock run `ppm` parts per million faster (negative: slower) than host time
    /// from now on, as NTP slews it or as a badly disciplined oscillator drifts.
    public func setWallClockDrift(ppm: Double) {
        let now = now()
        wall.withLock { wall in
            let drifted = ManualClock.wallClockTime(at: now, offset: wall.offset, ppm: wall.ratePPM, since: wall.since) - now
            wall = (drifted, ppm, now)
        }
    }

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

/// The calling thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`): what the thread cost, without
/// the time other threads and processes held the core.
public enum ThreadCPUClock {
    /// The calling thread's CPU time so far.
    public static func now() -> MediaTime { .nanoseconds(clockNanoseconds(CLOCK_THREAD_CPUTIME_ID)) }
}

/// The one read of a kernel clock for the host clocks above, in nanoseconds (`clock_gettime`).
private func clockNanoseconds(_ id: clockid_t) -> Int64 {
    var ts = timespec()
    clock_gettime(id, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
