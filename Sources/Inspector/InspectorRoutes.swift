import FoundationEssentials
import Hummingbird
import Logging
import NIOCore
import SystemJournal
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// The endpoints (docs/inspector.md).
struct InspectorRoutes: Sendable {
    let sources: InspectorSources
    let started: ContinuousClock.Instant
    let screenshots = ScreenshotCache()

    func register(on router: Router<InspectorContext>) {
        router.get("/healthz") { _, _ in "ok\n" }
        router.get("/") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: StatusPage.html)))
        }
        router.get("/metrics") { _, _ in
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: sources.metrics())))
        }
        router.get("/api/status") { _, _ in
            try Self.json(await sources.status())
        }
        router.get("/api/screenshot.png") { request, _ in
            let shot = try await screenshots.latest(from: sources.screenshot)
            // A validator: a client polling a screen that has not changed (a still, a pause, a
            // slide) is answered 304 without the picture. Kept by the browser only to ask again.
            var headers = HTTPFields()
            headers[.cacheControl] = "private, no-cache"
            headers[.eTag] = shot.entityTag
            if let asked = request.headers[.ifNoneMatch], ScreenshotCache.matches(asked, shot.entityTag) {
                return Response(status: .notModified, headers: headers)
            }
            headers[.contentType] = "image/png"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: shot.png)))
        }
        router.get("/api/programme") { request, _ in
            let query = request.uri.queryParameters
            guard let from = query["from"], let to = query["to"] else {
                return Self.problem(.badRequest, "give from= and to= (ISO 8601)")
            }
            switch await sources.programme(String(from), String(to)) {
            case .success(let json):
                var headers = HTTPFields()
                headers[.contentType] = "application/json"
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: json)))
            case .failure(let error):
                return Self.problem(.badRequest, error.description)
            }
        }
        router.get("/api/proof-of-play") { request, _ in
            let query = request.uri.queryParameters
            let format = query["format"].map(String.init) ?? "json"
            guard format == "json" || format == "csv" else { return Self.problem(.badRequest, "format must be json or csv") }
            switch await sources.proofOfPlay(query["from"].map(String.init), query["to"].map(String.init), format == "csv") {
            case .success(let (type, bytes)):
                var headers = HTTPFields()
                headers[.contentType] = type
                return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
            case .failure(let error):
                return Self.problem(.badRequest, error.description)
            }
        }
        router.get("/api/logs") { request, _ in
            let query = request.uri.queryParameters
            guard let since = query["since"].map({ Int($0) }) ?? 0 else {
                return Self.problem(.badRequest, "since must be a line's sequence number")
            }
            guard let asked = query["limit"].map({ Int($0) }) ?? 500, asked >= 0 else {
                return Self.problem(.badRequest, "limit must be a whole number of lines, 0 or more (at most 10000 are returned)")
            }
            let limit = min(asked, 10_000)
            guard let level = Self.level(query["priority"]) else {
                return Self.problem(.badRequest, "priority must be one of trace, debug, info, notice, warning, error, critical")
            }
            var sinceTime: Int64?
            if let text = query["since_time"] {
                guard let time = LogTime.nanoseconds(parsing: text) else {
                    return Self.problem(.badRequest, "since_time must be an ISO 8601 time with its zone (2026-11-25T08:00:00Z) or seconds since 1970")
                }
                sinceTime = time
            }
            switch query["source"] ?? "ring" {
            case "ring":
                return try Self.json(["lines": sources.logs.lines(after: since, minimumLevel: level, limit: limit, notBefore: sinceTime)])
            case "journal":
                let boot: JournalQuery.Boot
                switch query["boot"] ?? "all" {
                case "all": boot = .all
                case "current": boot = .current
                default: return Self.problem(.badRequest, "boot must be current or all")
                }
                guard let journal = sources.journal else {
                    return Self.unavailable(JournalProblem(title: "the journal is not read", detail: "this player does not read the systemd journal"))
                }
                switch await journal.lines(minimumLevel: level, sinceNanoseconds: sinceTime, afterSequence: since, boot: boot, limit: limit) {
                case .success(let found):
                    return try Self.json(JournalAnswer(lines: found.lines, truncated: found.complete ? nil : true))
                case .failure(let error):
                    return Self.unavailable(JournalProblem(error))
                }
            default:
                return Self.problem(.badRequest, "source must be ring or journal")
            }
        }
        router.get("/api/logs/stream") { request, _ in
            let level = Self.level(request.uri.queryParameters["priority"]) ?? .trace
            let logs = sources.logs
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            headers[.cacheControl] = "no-store"
            // Server-Sent Events: the recent tail first, then every new line as it is logged, and
            // a comment line every 15 s (a client gone is noticed at that write). The stream ends
            // when the player shuts down: an open one held the shutdown for its 10 s limit.
            return Response(status: .ok, headers: headers, body: ResponseBody { writer in
                let live = logs.subscribe()
                let encoder = JSONEncoder()
                var last = 0
                for line in logs.lines(minimumLevel: level, limit: 100) {
                    last = line.sequence
                    try await writer.write(ByteBuffer(string: Self.event(line, encoder)))
                }
                try await LogStreamEvent.forEach(live, heartbeat: Self.heartbeatInterval) { event in
                    switch event {
                    case .line(let line):
                        guard line.sequence > last && (Logger.Level(rawValue: line.level) ?? .trace) >= level else { return }
                        try await writer.write(ByteBuffer(string: Self.event(line, encoder)))
                    case .heartbeat:
                        try await writer.write(ByteBuffer(string: ":\n\n"))
                    }
                }
                try await writer.finish(nil)
            })
        }
    }

    /// How often `/api/logs/stream` writes a comment line when nothing else is written.
    static let heartbeatInterval: Duration = .seconds(15)

    static func event(_ line: LogRing.Line, _ encoder: JSONEncoder) -> String {
        let data = (try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        return "id: \(line.sequence)\ndata: \(data)\n\n"
    }

    static func level(_ text: Substring?) -> Logger.Level? {
        guard let text else { return .trace }
        return Logger.Level(rawValue: String(text))
    }

    static func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }

    /// 503 with a problem document (RFC 9457) saying why the journal cannot be read; with
    /// `Retry-After` when only too many reads at once are the reason.
    static func unavailable(_ problem: JournalProblem) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var headers = HTTPFields()
        headers[.contentType] = "application/problem+json"
        if problem.errno == Int(EBUSY) { headers[.retryAfter] = "1" }
        let body = (try? encoder.encode(problem)).map { ByteBuffer(bytes: $0) } ?? ByteBuffer(string: "{}")
        return Response(status: .serviceUnavailable, headers: headers, body: .init(byteBuffer: body))
    }

    static func problem(_ status: HTTPResponse.Status, _ message: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; charset=utf-8"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: message + "\n")))
    }
}

/// A screenshot is asked of the render thread at most about once a second; requests in between
/// share the last one (200 clients polling cost the render thread one copy a second, made right
/// after a refresh).
final class ScreenshotCache: Sendable {
    /// One encoded screenshot and its entity tag (a hash of the PNG: the same picture, the same tag).
    struct Shot: Sendable {
        var png: [UInt8]
        var entityTag: String
    }

    /// The last screenshot and when it was taken, shared by concurrent requests.
    private let last = LockedValue<(taken: ContinuousClock.Instant, shot: Shot)?>(nil)
    static let interval: Duration = .seconds(1)

    func latest(from take: @Sendable () async throws -> [UInt8]) async throws -> Shot {
        if let fresh = last.withLock({ $0 }), ContinuousClock.now - fresh.taken < Self.interval { return fresh.shot }
        let png = try await take()
        let shot = Shot(png: png, entityTag: Self.entityTag(png))
        last.withLock { $0 = (ContinuousClock.now, shot) }
        return shot
    }

    /// A strong entity tag for `bytes`: their 64-bit FNV-1a hash in hex, quoted (RFC 9110 8.8.3).
    /// Not a secret and not a defence against forgery: only a change detector.
    static func entityTag(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return "\"" + String(repeating: "0", count: 16 - hex.count) + hex + "\""
    }

    /// Whether an `If-None-Match` value names `tag`: `*`, or a comma-separated list of tags, weak
    /// ones (`W/"..."`) compared weakly as RFC 9110 13.1.2 asks.
    static func matches(_ ifNoneMatch: String, _ tag: String) -> Bool {
        ifNoneMatch.split(separator: ",").contains { candidate in
            var candidate = candidate.drop { $0 == " " || $0 == "\t" }
            while candidate.last == " " || candidate.last == "\t" { candidate.removeLast() }
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate.removeFirst(2) }
            return candidate == tag
        }
    }
}

/// `/api/logs?source=journal`'s answer: the lines, oldest first; `truncated` (only when true) says
/// the read stopped at its time budget and older matching lines may exist.
struct JournalAnswer: Encodable {
    var lines: [LogRing.Line]
    var truncated: Bool?
}

/// Why the journal cannot be read, as a problem document (RFC 9457, `application/problem+json`).
struct JournalProblem: Encodable {
    var type = "about:blank"
    var title: String
    var status = 503
    var detail: String
    /// The `errno` value behind it (2 `ENOENT`: no journal there; 13 `EACCES`: not in the
    /// `systemd-journal` group; 16 `EBUSY`: too many reads at once), when there is one.
    var errno: Int?
    /// The file or directory concerned, when there is one.
    var path: String?

    init(title: String, detail: String) {
        self.title = title
        self.detail = detail
    }

    init(_ error: JournalError) {
        title = error.errno == .resourceBusy ? "the journal is busy" : "the journal cannot be read"
        detail = error.description
        errno = Int(error.errno.rawValue)
        path = error.path?.string
    }
}
