#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with condition variables, for the pipeline's blocking hand-offs.
///
/// `Synchronization.Mutex` has no condition variable, and the demux and decode threads must
/// sleep until a queue has room or data, so this wraps `pthread_mutex_t` and `pthread_cond_t`.
/// There can be several conditions (one per kind of waiter) so that a hand-off wakes only the
/// thread waiting for it, not every thread sharing the lock: with one condition, each of the
/// hundreds of hand-offs a second woke the demuxer, both decoders and the audio feeder.
// Unchecked: every access to the protected state goes through the pthread mutex.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let conditions: UnsafeMutablePointer<pthread_cond_t>
    private let conditionCount: Int

    /// A lock with `conditionCount` conditions, numbered from 0.
    init(conditionCount: Int = 1) {
        precondition(conditionCount >= 1)
        self.conditionCount = conditionCount
        conditions = .allocate(capacity: conditionCount)
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        for index in 0..<conditionCount { pthread_cond_init(conditions + index, &attributes) }
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        for index in 0..<conditionCount { pthread_cond_destroy(conditions + index) }
        pthread_mutex_destroy(mutex)
        conditions.deallocate()
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a broadcast of condition `index` (or of all); call with the lock held (inside
    /// ``withLock(_:)``). Returns after at most `timeoutNanoseconds` of real time when one is given.
    func wait(_ index: Int = 0, timeoutNanoseconds: Int64? = nil) {
        let condition = conditions + index
        guard let timeout = timeoutNanoseconds else {
            pthread_cond_wait(condition, mutex)
            return
        }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let target = Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec) + timeout
        var deadline = timespec(tv_sec: Int(target / 1_000_000_000), tv_nsec: Int(target % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &deadline)
    }

    /// Wakes every waiter of every condition; call with or without the lock held.
    func broadcast() {
        for index in 0..<conditionCount { pthread_cond_broadcast(conditions + index) }
    }

    /// Wakes the waiters of condition `index` only.
    func broadcast(_ index: Int) {
        pthread_cond_broadcast(conditions + index)
    }
}

/// A joinable thread running one closure: the pipeline's demux and decode loops.
final class WorkerThread: @unchecked Sendable {
    private var thread: pthread_t?
    private let body: @Sendable () -> Void

    private final class Box {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }

    init(name: String, _ body: @escaping @Sendable () -> Void) {
        self.body = body
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var handle = pthread_t()
        let result = pthread_create(&handle, nil, { context in
            let box = Unmanaged<Box>.fromOpaque(context!).takeRetainedValue()
            box.body()
            return nil
        }, box)
        if result == 0 {
            thread = handle
        } else {
            Unmanaged<Box>.fromOpaque(box).release()
        }
    }

    /// Waits for the closure to return. Call once.
    func join() {
        guard let handle = thread else { return }
        thread = nil
        pthread_join(handle, nil)
    }
}
