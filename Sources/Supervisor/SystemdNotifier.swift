#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The service manager's notification protocol (`sd_notify`), written here: one datagram of
/// `KEY=value` lines to the `AF_UNIX` socket named by `NOTIFY_SOCKET` (a path, or an abstract
/// socket when it starts with `@`).
///
/// Outside systemd (`NOTIFY_SOCKET` unset) every call does nothing. Sending never blocks the
/// caller: the socket is non-blocking and a full or missing receiver drops the message, as
/// `sd_notify` does.
public struct SystemdNotifier: Sendable {
    /// The socket address as given (`/run/systemd/notify`, `@/org/freedesktop/systemd1/notify`).
    public let socketPath: String?
    /// How often systemd expects `WATCHDOG=1` (`WATCHDOG_USEC`), when the watchdog is on for us.
    public let watchdogInterval: Duration?

    /// A notifier for the environment the process runs in (`NOTIFY_SOCKET`, `WATCHDOG_USEC` and
    /// `WATCHDOG_PID`: the watchdog is ours only when that pid is this process's).
    public static func fromEnvironment() -> SystemdNotifier {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        var watchdog: Duration?
        if let microseconds = variable("WATCHDOG_USEC").flatMap(Int64.init), microseconds > 0 {
            let pid = variable("WATCHDOG_PID").flatMap(Int32.init)
            if pid == nil || pid == getpid() { watchdog = .microseconds(microseconds) }
        }
        return SystemdNotifier(socketPath: variable("NOTIFY_SOCKET"), watchdogInterval: watchdog)
    }

    public init(socketPath: String?, watchdogInterval: Duration? = nil) {
        self.socketPath = socketPath
        self.watchdogInterval = watchdogInterval
    }

    /// Whether a service manager listens.
    public var isActive: Bool { socketPath != nil }

    /// The service is up (its first frame is on screen).
    public func ready(status: String? = nil) { send(["READY=1"] + (status.map { ["STATUS=\($0)"] } ?? [])) }

    /// One line for `systemctl status`.
    public func status(_ text: String) { send(["STATUS=\(text)"]) }

    /// The watchdog ping: send it only while the service makes progress.
    public func watchdog() { send(["WATCHDOG=1"]) }

    /// The service is shutting down.
    public func stopping(status: String? = nil) { send(["STOPPING=1"] + (status.map { ["STATUS=\($0)"] } ?? [])) }

    /// Sends the assignments as one datagram. Returns whether it was delivered to the socket.
    @discardableResult
    public func send(_ assignments: [String]) -> Bool {
        guard let socketPath, !assignments.isEmpty else { return false }
        // A value never spans lines: a newline would start another assignment.
        let message = assignments.map { $0.replacing("\n", with: " ") }.joined(separator: "\n") + "\n"
        return Self.sendDatagram(Array(message.utf8), to: socketPath)
    }

    /// Sends `bytes` to the AF_UNIX datagram socket at `path` (`@` first: abstract).
    static func sendDatagram(_ bytes: [UInt8], to path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        guard var address = UnixAddress(path) else { return false }
        let sent = bytes.withUnsafeBytes { buffer in
            address.withSockaddr { sockaddr, length in
                sendto(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), sockaddr, length)
            }
        }
        return sent == bytes.count
    }
}

/// A `sockaddr_un` for a path, or an abstract name when the path starts with `@`.
struct UnixAddress {
    private var storage = sockaddr_un()
    private let length: socklen_t

    init?(_ path: String) {
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else { return nil }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        // An abstract name's length counts exactly its bytes; a path's includes the terminating zero.
        let pathLength = bytes.first == 0 ? bytes.count : bytes.count + 1
        length = socklen_t(MemoryLayout<sa_family_t>.size + pathLength)
    }

    mutating func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        let length = self.length
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) }
        }
    }
}
