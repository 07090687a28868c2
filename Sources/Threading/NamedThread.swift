#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
internal import CThreads
import Synchronization

/// Why a thread could not be started.
public struct ThreadStartError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The name the thread was to have.
    public let name: String
    /// `pthread_create`'s error number (`EAGAIN`: the process or system thread limit).
    public let code: Int32

    public init(name: String, code: Int32) {
        self.name = name
        self.code = code
    }

    public var description: String {
        "cannot start thread \(name): \(String(cString: strerror(code))) (error \(code))"
    }
}

/// An OS thread with a name (shown by `top -H`, `ps -L`, gdb and perf) running one closure, joined
/// once. The one way Vitrine starts a thread: creation failure is an error the caller must handle,
/// never a body that silently does not run.
public final class NamedThread: Sendable {
    /// The name given at start (the kernel keeps its first 15 bytes).
    public let name: String
    private let handle: pthread_t
    private let joined = Atomic<Bool>(false)

    private init(name: String, handle: pthread_t) {
        self.name = name
        self.handle = handle
    }

    /// Starts a joinable thread named `name` running `body`.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(ThreadStartError) -> NamedThread {
        let start = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { argument in
            let start = Unmanaged<ThreadStart>.fromOpaque(argument!).takeRetainedValue()
            _ = vitrine_name_current_thread(start.kernelName)
            start.body()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(start).release()
            throw ThreadStartError(name: name, code: status)
        }
        return NamedThread(name: name, handle: handle)
    }

    /// The calling thread's name as the kernel keeps it (at most 15 bytes), nil when it cannot be read.
    public static var currentName: String? {
        var buffer = [CChar](repeating: 0, count: 32)
        guard vitrine_current_thread_name(&buffer, buffer.count) == 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Whether the calling thread is this one.
    public var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// Waits for the closure to return. Later calls return at once; calling it from the thread
    /// itself is a programming error (it would wait for itself).
    public func join() {
        precondition(!isCurrent, "thread \(name) cannot join itself")
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        pthread_join(handle, nil)
    }

    deinit {
        // A thread never joined runs on and releases its resources when it ends.
        if !joined.load(ordering: .acquiring) { pthread_detach(handle) }
    }
}

/// What a new thread runs, passed through `pthread_create`'s context pointer.
private final class ThreadStart {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }

    /// The name cut to the kernel's 15 bytes (plus the terminating zero), on a character boundary.
    var kernelName: String {
        var cut = ""
        for character in name {
            guard cut.utf8.count + character.utf8.count <= 15 else { break }
            cut.append(character)
        }
        return cut
    }
}

/// Scheduling priority of the calling thread.
public enum ThreadPriority {
    /// Moves the calling thread to Linux's `SCHED_IDLE` class: it gets only the CPU time no
    /// normal thread wants, however many of its kind are busy — stronger than any nice value,
    /// which still takes a share of a saturated CPU (the HTTP inspector). Returns whether it worked.
    @discardableResult
    public static func makeCurrentIdle() -> Bool {
        vitrine_idle_current_thread() == 0
    }

    /// Lowers the calling thread's priority by `steps` nice steps (at most to 19). On Linux a
    /// nice value belongs to one thread, and the threads it starts from then on (FFmpeg's
    /// decoding threads included) inherit it; raising it again needs `CAP_SYS_NICE` or an
    /// `RLIMIT_NICE` that allows it.
    /// Returns the new nice value, nil when it could not be changed.
    @discardableResult
    public static func lowerCurrent(by steps: Int32) -> Int32? {
        let nice = vitrine_lower_current_thread_priority(steps)
        return nice == -100 ? nil : nice
    }

    /// The calling thread's nice value (nil when it cannot be read).
    public static var currentNice: Int32? {
        let nice = vitrine_current_thread_nice()
        return nice == -100 ? nil : nice
    }
}
