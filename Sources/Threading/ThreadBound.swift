#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// A value that one thread alone may touch, checked (swift-nio's `NIOLoopBound` idea): the render
/// thread's DRM descriptor and EGL context, the audio thread's PCM.
///
/// Until a thread calls ``claim()`` the value is being set up and whoever holds it may touch it (an
/// output opens its device on the caller's thread, then hands it to its own thread). The first
/// thread that claims it owns it: every later access through ``value`` or ``withValue(_:)`` checks,
/// in debug builds, that it comes from that thread and stops the process with a message naming the
/// resource if not. Release builds skip the check.
// Unchecked: `wrapped` is only accessed by the owner thread, which the accessors assert.
public final class ThreadBound<Value>: @unchecked Sendable {
    /// What the value is, for the failure message ("the DRM device").
    public let resource: String
    private var wrapped: Value
    /// The owner's `pthread_t`, 0 before ``claim()``.
    private let owner = Atomic<UInt>(0)

    /// A value no thread owns yet.
    public init(_ value: Value, resource: String) {
        self.wrapped = value
        self.resource = resource
    }

    /// Makes the calling thread the owner. A value is claimed once.
    public func claim() {
        let me = UInt(pthread_self())
        let (exchanged, previous) = owner.compareExchange(expected: 0, desired: me, ordering: .acquiringAndReleasing)
        precondition(exchanged || previous == me, "\(resource) is already owned by another thread")
    }

    /// Whether the calling thread owns the value.
    public var isOwnedByCurrentThread: Bool {
        let current = owner.load(ordering: .acquiring)
        return current != 0 && pthread_equal(pthread_t(current), pthread_self()) != 0
    }

    private func checkOwner() {
        assert(owner.load(ordering: .acquiring) == 0 || isOwnedByCurrentThread,
               "\(resource) touched from a thread that does not own it")
    }

    /// The value; once claimed, only the owner thread may read or write it.
    public var value: Value {
        get { checkOwner(); return wrapped }
        set { checkOwner(); wrapped = newValue }
    }

    /// Runs `body` on the value; once claimed, only the owner thread may call it.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        checkOwner()
        return try body(&wrapped)
    }
}
