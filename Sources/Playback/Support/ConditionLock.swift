#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with one condition variable, for the pipeline's blocking hand-offs.
///
/// `Synchronization.Mutex` has no condition variable, and the demux and decode threads must
/// sleep until a queue has room or data, so this wraps `pthread_mutex_t` and `pthread_cond_t`.
// Unchecked: every access to the protected state goes through the pthread mutex.
final class ConditionLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits for a broadcast; call with the lock held (inside ``withLock(_:)``).
    /// Returns after at most `timeoutNanoseconds` of real time when one is given.
    func wait(timeoutNanoseconds: Int64? = nil) {
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

    /// Wakes every waiter; call with or without the lock held.
    func broadcast() {
        pthread_cond_broadcast(condition)
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
