#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// State guarded by a pthread mutex with a condition variable for blocking waits.
///
/// `Synchronization.Mutex` has no condition variable; the mixer needs one so that a
/// producer can block in ``AudioSink/enqueue(_:)`` until the audio thread has consumed
/// a period. The corresponding C functions are `pthread_mutex_lock` and `pthread_cond_wait`.
final class ConditionLock<State>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    init(_ initial: State) {
        state = initial
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// Waits (releasing the lock) until `isReady` holds, then runs `body` under the lock.
    /// `timeoutNanoseconds` bounds the wait; `body` then runs with `isReady` possibly false.
    func withLock<Result>(
        waitingUntil isReady: (inout State) -> Bool, timeoutNanoseconds: Int64? = nil,
        _ body: (inout State) throws -> Result
    ) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let timeoutNanoseconds {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let deadline = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) + timeoutNanoseconds
            var limit = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while !isReady(&state) {
                if pthread_cond_timedwait(condition, mutex, &limit) == ETIMEDOUT { break }
            }
        } else {
            while !isReady(&state) { pthread_cond_wait(condition, mutex) }
        }
        return try body(&state)
    }

    /// Wakes every waiter so it re-checks its condition.
    func broadcast() {
        pthread_cond_broadcast(condition)
    }
}

/// Starts a joinable OS thread running `body`. The corresponding C function is `pthread_create`.
func startThread(_ body: @escaping @Sendable () -> Void) -> pthread_t {
    final class Box { let body: @Sendable () -> Void; init(_ body: @escaping @Sendable () -> Void) { self.body = body } }
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let status = pthread_create(&thread, nil, { argument in
        let box = Unmanaged<Box>.fromOpaque(argument!).takeRetainedValue()
        box.body()
        return nil
    }, box)
    precondition(status == 0, "pthread_create failed: \(status)")
    return thread
}
