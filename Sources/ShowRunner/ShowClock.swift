public import MediaTime
public import Scheduling
import Threading

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

    /// The system's real time plus `offset` seconds (`--clock-offset`); `shift` steps it while it
    /// runs (`--clock-step`, a diagnostic: what an NTP step does to a screen).
    public static func system(offsetSeconds: Double = 0, shift: WallClockShift? = nil) -> ShowClock {
        ShowClock(base: .realTime(offsetNanoseconds: Int64((offsetSeconds * 1e9).rounded())), shift: shift)
    }

    /// How far this clock is from `host`'s wall clock (CLOCK_REALTIME, or a test's manual wall
    /// clock) now: the offset a player following this show's clock adds to it.
    public func offset(fromWallClockOf host: any HostClock) -> MediaTime {
        let shifted = MediaTime.nanoseconds(shift?.nanoseconds ?? 0)
        switch base {
        case .realTime(let offset):
            return .nanoseconds(offset) + shifted
        case .anchored(let start, let hostStart, let clock):
            // This clock advances with `clock` from `start`; the player's with `host`'s wall clock.
            return .nanoseconds(start.nanosecondsSinceEpoch) - host.wallClockTime(at: hostStart) + shifted
                + (host.now() - clock.now())
        }
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
            return UTCInstant(nanosecondsSinceEpoch: MonotonicClock.wallClockNanosecondsNow() + offset)
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
