#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The conditions of a ``ConditionLock``: one case per kind of waiter, raw values `0..<allCases.count`.
///
/// ```swift
/// enum Waiter: Int, LockCondition { case demux, videoWork, consumer }
/// ```
///
/// A hand-off wakes only the waiters of its condition, not every thread sharing the lock.
public protocol LockCondition: RawRepresentable, CaseIterable, Sendable where RawValue == Int {}

/// The condition of a lock with a single kind of waiter.
public enum StateChanged: Int, LockCondition {
    /// The guarded state changed.
    case changed
}

/// State guarded by a mutex, with condition variables named by `Condition` for blocking waits
/// (swift-nio's `ConditionLock`, generalised to several conditions).
///
/// `Synchronization.Mutex` has no condition variable; threads that must sleep until a queue has
/// room or data use this instead. The state is reachable only inside ``withLock(_:)`` and
/// ``withLock(waitingFor:until:timeout:_:)``, so nothing can read it without the lock, and a waiter
/// re-checks its predicate under the lock before sleeping, so a change made under the lock and
/// followed by a broadcast is never missed (no lost wake-ups).
// Unchecked: `state` is only touched with `mutex` held (every accessor locks it).
public final class ConditionLock<State, Condition: LockCondition>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int
    private var state: State

    /// A lock guarding `initial`.
    public init(_ initial: State) {
        let cases = Condition.allCases.map(\.rawValue)
        precondition(cases == Array(0..<cases.count) && !cases.isEmpty,
                     "\(Condition.self): raw values must be 0..<\(cases.count) in order")
        conditionCount = cases.count
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        conditions = .allocate(capacity: conditionCount)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        for index in 0..<conditionCount {
            (conditions + index).initialize(to: pthread_cond_t())
            pthread_cond_init(conditions + index, &attributes)
        }
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        pthread_mutex_destroy(mutex)
        conditions.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with the lock held.
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits on `condition` (releasing the lock while asleep) until `isReady` holds, then runs `body`
    /// with the lock held. With a `timeout`, `body` runs after at most that long even if `isReady`
    /// is still false: it must check what it needs.
    public func withLock<Result, Failure: Error>(
        waitingFor condition: Condition, until isReady: (inout State) -> Bool, timeout: Duration? = nil,
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let waiting = conditions + condition.rawValue
        if let timeout {
            var limit = Self.deadline(after: timeout)
            while !isReady(&state) {
                if pthread_cond_timedwait(waiting, mutex, &limit) == ETIMEDOUT { break }
            }
        } else {
            while !isReady(&state) { pthread_cond_wait(waiting, mutex) }
        }
        return try body(&state)
    }

    /// Wakes the waiters of `condition`. Call after changing the state they wait on (with or
    /// without the lock held: they re-check under the lock).
    public func broadcast(_ condition: Condition) {
        pthread_cond_broadcast(conditions + condition.rawValue)
    }

    /// Wakes every waiter of every condition (stop, seek: changes that concern all of them).
    public func broadcastAll() {
        for index in 0..<conditionCount { pthread_cond_broadcast(conditions + index) }
    }

    /// `CLOCK_MONOTONIC` now plus `timeout`, as the absolute time `pthread_cond_timedwait` takes.
    private static func deadline(after timeout: Duration) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let (seconds, attoseconds) = timeout.components
        let nanoseconds = Int64(now.tv_nsec) + max(0, attoseconds / 1_000_000_000)
        let wholeSeconds = Int64(now.tv_sec) + max(0, seconds) + nanoseconds / 1_000_000_000
        return timespec(tv_sec: Int(wholeSeconds), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}

extension ConditionLock where Condition == StateChanged {
    /// Waits until `isReady` holds (see ``withLock(waitingFor:until:timeout:_:)``).
    public func withLock<Result, Failure: Error>(
        waitingUntil isReady: (inout State) -> Bool, timeout: Duration? = nil, _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        try withLock(waitingFor: .changed, until: isReady, timeout: timeout, body)
    }

    /// Wakes every waiter.
    public func broadcast() { broadcast(.changed) }
}

/// A value behind a lock, with `Synchronization.Mutex`'s `withLock` — the lock every Vitrine type
/// uses for state shared between threads.
///
/// It is a `pthread_mutex_t` (a ``ConditionLock`` with one condition), not `Synchronization.Mutex`:
/// on Linux that one waits on a futex ThreadSanitizer cannot see, so TSan reported every access
/// made under it from two threads as a race, hiding any real one among hundreds of false reports.
public typealias LockedValue<Value> = ConditionLock<Value, StateChanged>
