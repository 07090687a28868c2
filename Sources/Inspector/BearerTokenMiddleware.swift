import Crypto
import Hummingbird
import NIOCore
import Threading

/// Every request but `GET /healthz` and the status page's HTML needs `Authorization: Bearer TOKEN`:
/// 401 without it, 403 with a wrong one (compared in constant time), and an address that failed
/// ``InspectorSettings/failuresBeforeLockout`` times within a minute gets 429 for a minute.
struct BearerTokenMiddleware: RouterMiddleware {
    typealias Context = InspectorContext

    let tokenDigest: [UInt8]
    let limiter: FailureLimiter
    /// Paths served without a token.
    static let openPaths: Set<String> = ["/healthz", "/"]

    init(token: String, limiter: FailureLimiter) {
        tokenDigest = Array(SHA256.hash(data: Array(token.utf8)))
        self.limiter = limiter
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.method == .get, Self.openPaths.contains(request.uri.path) { return try await next(request, context) }
        let client = context.remoteAddress?.ipAddress ?? "unknown"
        if let wait = limiter.lockout(for: client) {
            var headers = HTTPFields()
            headers[.retryAfter] = String(wait)
            return Response(status: .tooManyRequests, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "too many failed attempts\n")))
        }
        guard let value = request.headers[.authorization], value.hasPrefix("Bearer ") else {
            var headers = HTTPFields()
            headers[.wwwAuthenticate] = "Bearer realm=\"vitrine\""
            return Response(status: .unauthorized, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "a bearer token is needed\n")))
        }
        // Equal-length digests compared without an early exit: the time says nothing about the token.
        let given = Array(SHA256.hash(data: Array(value.dropFirst("Bearer ".count).utf8)))
        var difference: UInt8 = 0
        for (a, b) in zip(given, tokenDigest) { difference |= a ^ b }
        guard difference == 0 else {
            limiter.recordFailure(of: client)
            return Response(status: .forbidden, body: .init(byteBuffer: ByteBuffer(string: "wrong token\n")))
        }
        return try await next(request, context)
    }
}

/// Failed authentications per client address, over a sliding minute.
final class FailureLimiter: Sendable {
    /// Recent failure times per client address, shared by the inspector's connections.
    private let failures = LockedValue<[String: [ContinuousClock.Instant]]>([:])
    let limit: Int
    let window: Duration = .seconds(60)

    init(limit: Int) { self.limit = limit }

    func recordFailure(of client: String) {
        let now = ContinuousClock.now
        failures.withLock { table in
            table[client, default: []].removeAll { now - $0 > window }
            table[client, default: []].append(now)
            if table.count > 10_000 { table = table.filter { !$0.value.isEmpty && now - $0.value.last! < window } }
        }
    }

    /// Seconds to wait when `client` is locked out, else `nil`.
    func lockout(for client: String) -> Int? {
        let now = ContinuousClock.now
        return failures.withLock { table in
            guard let recent = table[client]?.filter({ now - $0 < window }), recent.count >= limit, let first = recent.first else { return nil }
            return max(1, Int((window - (now - first)).components.seconds))
        }
    }
}
