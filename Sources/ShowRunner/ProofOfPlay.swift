import Dispatch
import FoundationEssentials
public import Playback
import MediaTime
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// One played item: what an advertiser's proof of play needs. A stable interface
/// (`/api/proof-of-play`, `proof-of-play.jsonl`): fields are only added.
public struct PlayRecord: Codable, Sendable, Hashable {
    /// The presentation log's item number.
    public var item: Int
    /// The schedule entry (`fallback` when none), the playlist and the item's index in it.
    public var entry: String?
    public var playlist: String?
    public var playlistIndex: Int?
    public var media: String
    /// The SHA-256 of the media file (`nil` for URLs or unreadable files).
    public var mediaSHA256: String?
    /// When its first frame became visible and when it left the screen, ISO 8601 UTC, and the
    /// same in nanoseconds since 1970.
    public var start: String
    public var startNanoseconds: Int64
    public var end: String?
    public var endNanoseconds: Int64?
    /// `completed` (played to its end or out point), `cut` (the programme moved on: an entry
    /// change, a reload, a stop), `failed` (with `reason`), `skipped` (its retries spent), or
    /// `playing` (the one on screen now, only in answers, never in the file).
    public var outcome: String
    public var reason: String?
    public var framesPresented: Int
    public var framesDropped: Int
}

/// Turns the presentation records into proof-of-play records, appended as JSON lines to
/// `STATE/proof-of-play.jsonl` — written on its own queue (never on the render thread), flushed to
/// the disk within a second, rotated at 8 MB (four old files kept).
public final class ProofOfPlay: Sendable {
    private struct State {
        var open: PlayRecord?
        var lastDropped = 0
        var file: Int32 = -1
        var dirty = false
        var flushPending = false
    }

    public let directory: String
    public var path: String { directory + "/proof-of-play.jsonl" }
    static let rotateAt = 8 << 20
    static let keptFiles = 4

    private let queue = DispatchQueue(label: "vitrine.proof-of-play")
    /// The record on screen and the open file. Touched only on `queue`; the lock makes that
    /// visible to the compiler (and to TSan) rather than a promise.
    private let state = LockedValue(State())
    private let hash: @Sendable (String) -> String?

    /// Records into `directory` (the player's state directory); `hash` gives a media file's SHA-256.
    public init(directory: String, hash: @escaping @Sendable (String) -> String?) {
        self.directory = directory
        self.hash = hash
    }

    /// Takes one presentation record (from the render thread: hands it to the queue).
    public func record(_ record: PresentationRecord) {
        let wall = Self.wallOffset()
        queue.async { self.handle(record, wall: wall) }
    }

    /// Closes the record on screen (`cut`) and flushes: the player stops.
    public func close() {
        queue.sync {
            let now = Self.realTime()
            state.withLock { state in
                if var open = state.open {
                    open.end = Self.iso(now)
                    open.endNanoseconds = now
                    open.outcome = "cut"
                    append(open, state: &state)
                    state.open = nil
                }
                if state.file >= 0 {
                    fsync(state.file)
                    Glibc.close(state.file)
                    state.file = -1
                }
            }
        }
    }

    /// The records whose time on screen overlaps `[from, to)` (nanoseconds since 1970; `nil`:
    /// open-ended), oldest first, the one playing now last.
    public func records(from: Int64?, to: Int64?) -> [PlayRecord] {
        queue.sync {
            var all: [PlayRecord] = []
            for index in stride(from: Self.keptFiles, through: 1, by: -1) { all += Self.read(rotated(index)) }
            all += Self.read(path)
            if let open = state.withLock({ $0.open }) { all.append(open) }
            return all.filter { record in
                (to.map { record.startNanoseconds < $0 } ?? true) && (from.map { (record.endNanoseconds ?? Int64.max) > $0 } ?? true)
            }
        }
    }

    // MARK: On the queue

    private func handle(_ record: PresentationRecord, wall: Int64) {
        state.withLock { state in
            switch record {
            case .frame(let frame):
                let at = frame.presentedAt.nanoseconds + wall
                if state.open?.item != frame.itemIndex {
                    if var previous = state.open {
                        // Replaced before it ended (an entry change, a reload): cut where the new one starts.
                        previous.end = Self.iso(at)
                        previous.endNanoseconds = at
                        previous.outcome = "cut"
                        append(previous, state: &state)
                    }
                    state.open = PlayRecord(item: frame.itemIndex, media: frame.source, mediaSHA256: hash(frame.source), start: Self.iso(at),
                                            startNanoseconds: at, outcome: "playing", framesPresented: 0, framesDropped: 0)
                }
                state.open?.framesPresented += 1
                state.open?.framesDropped += max(0, frame.droppedFrames - state.lastDropped)
                state.lastDropped = frame.droppedFrames
            case .event(let event):
                let at = event.at.nanoseconds + wall
                switch event.kind {
                case .itemStarted where state.open?.item == event.itemIndex:
                    state.open?.entry = event.entry
                    state.open?.playlist = event.playlist
                    state.open?.playlistIndex = event.playlistIndex
                case .itemEnded where state.open?.item == event.itemIndex:
                    guard var ended = state.open else { return }
                    ended.end = Self.iso(at)
                    ended.endNanoseconds = at
                    ended.outcome = event.reason == nil ? "completed" : "failed"
                    ended.reason = event.reason
                    append(ended, state: &state)
                    state.open = nil
                case .showItemFailed, .skip:
                    // An item the supervisor held: it may never have shown a frame.
                    let failed = PlayRecord(
                        item: -1, entry: event.entry, playlist: event.playlist, playlistIndex: event.playlistIndex,
                        media: Self.media(inDetail: event.detail), mediaSHA256: nil, start: Self.iso(at),
                        startNanoseconds: at, end: Self.iso(at), endNanoseconds: at, outcome: event.kind == .skip ? "skipped" : "failed",
                        reason: event.reason ?? event.detail, framesPresented: 0, framesDropped: 0)
                    append(failed, state: &state)
                default:
                    break
                }
            }
        }
    }

    private func append(_ record: PlayRecord, state: inout State) {
        guard let data = try? JSONEncoder().encode(record) else { return }
        if state.file < 0 { state.file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640) }
        guard state.file >= 0 else { return }
        var size = stat()
        if fstat(state.file, &size) == 0, Int(size.st_size) > Self.rotateAt {
            fsync(state.file)
            Glibc.close(state.file)
            for index in stride(from: Self.keptFiles - 1, through: 1, by: -1) { rename(rotated(index), rotated(index + 1)) }
            rename(path, rotated(1))
            state.file = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o640)
            guard state.file >= 0 else { return }
        }
        let line = [UInt8](data) + [UInt8(ascii: "\n")]
        _ = line.withUnsafeBytes { write(state.file, $0.baseAddress, $0.count) }
        state.dirty = true
        if !state.flushPending {
            state.flushPending = true
            queue.asyncAfter(deadline: .now() + .seconds(1)) { [weak self] in self?.flush() }
        }
    }

    /// Once a second: what was appended reaches the disk.
    private func flush() {
        state.withLock { state in
            state.flushPending = false
            guard state.dirty, state.file >= 0 else { return }
            fsync(state.file)
            state.dirty = false
        }
    }

    /// The media of a supervisor event's `detail`, `playlist[index] (media)`.
    static func media(inDetail detail: String?) -> String {
        guard let detail, let open = detail.firstRange(of: " ("), detail.hasSuffix(")") else { return detail ?? "" }
        return String(detail[open.upperBound..<detail.index(before: detail.endIndex)])
    }

    private func rotated(_ index: Int) -> String { directory + "/proof-of-play.\(index).jsonl" }

    static func read(_ path: String) -> [PlayRecord] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var records: [PlayRecord] = []
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        let decoder = JSONDecoder()
        while getline(&line, &capacity, file) > 0, let line {
            let text = String(cString: line)
            if let record = try? decoder.decode(PlayRecord.self, from: Data(text.utf8)) { records.append(record) }
        }
        free(line)
        return records
    }

    // MARK: Time

    static func realTime() -> Int64 { MonotonicClock.wallClockNanosecondsNow() }

    /// CLOCK_REALTIME minus CLOCK_MONOTONIC now: turns presentation host times into UTC.
    static func wallOffset() -> Int64 { MonotonicClock.wallClockOffsetNanoseconds() }

    /// `2026-11-25T08:00:01.250Z`.
    public static func iso(_ nanoseconds: Int64) -> String {
        var seconds = time_t(nanoseconds / 1_000_000_000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        let millis = Int32((nanoseconds % 1_000_000_000) / 1_000_000)
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(millis, 3))Z"
    }
}

extension PlayRecord {
    static let csvHeader = "item,entry,playlist,playlist_index,media,media_sha256,start,end,outcome,reason,frames_presented,frames_dropped"

    /// One CSV row (RFC 4180 quoting).
    var csvRow: String {
        func field(_ text: String?) -> String {
            guard let text else { return "" }
            return text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + text.replacing("\"", with: "\"\"") + "\"" : text
        }
        return [String(item), field(entry), field(playlist), playlistIndex.map(String.init) ?? "", field(media), mediaSHA256 ?? "", start,
                end ?? "", outcome, field(reason), String(framesPresented), String(framesDropped)].joined(separator: ",")
    }

    /// Records as CSV with a header line.
    public static func csv(_ records: [PlayRecord]) -> String {
        ([csvHeader] + records.map(\.csvRow)).joined(separator: "\n") + "\n"
    }
}
