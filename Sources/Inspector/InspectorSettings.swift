#if canImport(Glibc)
import Glibc
#endif

/// How the inspector listens and whom it lets in (the configuration's `[inspector]` table).
public struct InspectorSettings: Sendable, Hashable {
    /// `ADDRESS:PORT`: `127.0.0.1:8080`, `0.0.0.0:8443`, `[::1]:8080`.
    public var host: String
    public var port: Int
    /// The file holding the bearer token (one line), readable only by the player's user.
    public var tokenFile: String
    /// PEM certificate chain and private key: with both, the inspector speaks HTTPS only.
    public var tlsCertificate: String?
    public var tlsKey: String?
    /// Plain HTTP on an address other than loopback (a token would cross the network in clear text).
    public var allowPlainHTTP = false

    // Limits.
    /// Connections held at once (idle ones cost a few kilobytes each; the request-head deadline
    /// and the idle timeout close them); more wait in the listen backlog.
    public var maximumConnections = 4096
    /// A connection that sends or receives nothing for this long is closed (slow or idle clients).
    public var idleTimeoutSeconds = 15
    /// A connection must deliver a complete request head this soon after opening or after its
    /// last response, or it is closed (slow-loris clients).
    public var requestHeadSeconds = 10
    /// The largest request header block, in bytes.
    public var maximumHeaderBytes = 16 * 1024
    /// Failed authentications from one address within a minute before it is refused for a minute.
    public var failuresBeforeLockout = 10

    public init(host: String, port: Int, tokenFile: String, tlsCertificate: String? = nil, tlsKey: String? = nil, allowPlainHTTP: Bool = false) {
        self.host = host
        self.port = port
        self.tokenFile = tokenFile
        self.tlsCertificate = tlsCertificate
        self.tlsKey = tlsKey
        self.allowPlainHTTP = allowPlainHTTP
    }

    /// Whether `host` is a loopback address (only this machine can reach it).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether the settings would send the token in clear text over a network.
    public var isPlainHTTPOnNetwork: Bool {
        (tlsCertificate == nil || tlsKey == nil) && !Self.isLoopback(host) && !allowPlainHTTP
    }
}

/// Why the inspector cannot start (the player plays on without it).
public struct InspectorError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The bearer token, read from its file.
enum TokenFile {
    /// The token (the file's first line, trimmed). Refused when empty, or when group or others
    /// may read the file: the token must be the service user's alone.
    static func read(_ path: String) throws(InspectorError) -> String {
        var status = stat()
        guard stat(path, &status) == 0 else { throw InspectorError("\(path): cannot read the token file: \(String(cString: strerror(errno)))") }
        guard status.st_mode & 0o077 == 0 else {
            throw InspectorError("\(path): the token file may be read by others (mode \(String(status.st_mode & 0o777, radix: 8))): chmod 600 it")
        }
        let file = fopen(path, "r")
        guard let file else { throw InspectorError("\(path): cannot read the token file: \(String(cString: strerror(errno)))") }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 4096)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { throw InspectorError("\(path): the token file is empty") }
        let token = trimmed(buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) })
        guard token.count >= 16 else { throw InspectorError("\(path): the token is shorter than 16 characters") }
        return token
    }

    /// The line without the blanks around it. Bytes, not `Character`s: "\r\n" is one Character, so a
    /// set of Characters holding "\r" and "\n" would never match the lone "\n" of `echo … > file`.
    static func trimmed(_ line: [UInt8]) -> String {
        let blank: Set<UInt8> = [0x20, 0x09, 0x0D, 0x0A]
        let start = line.firstIndex { !blank.contains($0) } ?? line.endIndex
        let end = (line.lastIndex { !blank.contains($0) }).map { $0 + 1 } ?? start
        return String(decoding: line[start..<max(start, end)], as: UTF8.self)
    }
}
