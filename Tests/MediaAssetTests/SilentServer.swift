import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that accepts connections (through the kernel's backlog) and
/// never answers: the network peer that hangs a player without timeouts.
final class SilentServer: @unchecked Sendable {
    let port: UInt16
    private let socketDescriptor: Int32

    init() throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socketDescriptor >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(socketDescriptor, 16) == 0 else { close(socketDescriptor); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        self.socketDescriptor = socketDescriptor
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(socketDescriptor) }

    /// A port with nothing listening on it (bound, then released).
    static func unusedPort() throws -> UInt16 {
        let server = try SilentServer()
        return server.port
    }
}
