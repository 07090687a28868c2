#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A datagram socket standing in for systemd's notify socket or the journal's: what a child
/// process (or the code under test) sends there is received here.
public final class DatagramReceiver {
    private static let counter = Atomic<Int>(0)
    public let path: String
    private let descriptor: Int32

    /// Bound to a fresh path, or (`abstract`) to an abstract name; `path` is what a client is given.
    public init(abstract: Bool = false) throws(ChildProcessError) {
        let name = "vitrine-test-\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)"
        path = abstract ? "@\(name)" : "/tmp/\(name).sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in for (index, byte) in bytes.enumerated() { raw[index] = byte } }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
        let status = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard status == 0 else { throw ChildProcessError(executable: "a datagram socket at \(path)", reason: "bind: errno \(errno)") }
    }

    deinit {
        close(descriptor)
        if !path.hasPrefix("@") { unlink(path) }
    }

    /// The next datagram (waits up to `seconds`), or nil.
    public func receive(waitingUpTo seconds: Int = 5) -> [UInt8]? {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        return count >= 0 ? Array(buffer.prefix(count)) : nil
    }
}

