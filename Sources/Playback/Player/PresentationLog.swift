import MediaTime
import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Writes the presentation log: one JSON object per line, per presented frame and per event.
///
/// The format is a stable interface (tests, benchmarks, proof-of-play read it); it is
/// documented in docs/presentation-log.md. Fields are only ever added, never renamed.
public final class PresentationLogWriter: Sendable {
    private let file: LockedValue<UnsafeMutablePointer<FILE>?>

    /// Opens (truncates) `path` for writing; `-` writes to standard output.
    ///
    /// The file is line-buffered: each record reaches the file whole as soon as it is written, so
    /// a reader following the log (a test waiting for the first frame, a proof-of-play collector)
    /// sees a frame when it is presented. Fully buffered, the first 4 KiB (some twenty frames)
    /// stayed in memory — on a slow screen, a minute after the picture was up.
    public init(path: String) throws(PresentationLogError) {
        let handle: UnsafeMutablePointer<FILE>? = path == "-" ? fdopen(dup(1), "w") : fopen(path, "w")
        guard let handle else { throw PresentationLogError(path: path, reason: String(cString: strerror(errno))) }
        setvbuf(handle, nil, _IOLBF, 4096)
        file = LockedValue(handle)
    }

    deinit { close() }

    /// Appends one record (thread-safe; the whole line reaches the file at once).
    public func write(_ record: PresentationRecord) {
        let line = PresentationLogWriter.line(for: record) + "\n"
        file.withLock { handle in
            guard let handle else { return }
            fputs(line, handle)
        }
    }

    /// Flushes and closes the file.
    public func close() {
        file.withLock { handle in
            guard let open = handle else { return }
            fclose(open)
            handle = nil
        }
    }

    /// The JSON line (without newline) for a record.
    public static func line(for record: PresentationRecord) -> String {
        switch record {
        case .frame(let frame):
            var fields: [(String, String)] = [
                ("type", quote("frame")),
                ("item", String(frame.itemIndex)),
                ("source", quote(frame.source)),
                ("pts", rational(frame.presentationTime)),
                ("pts_s", seconds(frame.presentationTime)),
                ("presented_ns", String(frame.presentedAt.nanoseconds)),
            ]
            if let wall = frame.presentedWallClockTime, wall.isNumeric { fields.append(("presented_utc_ns", String(wall.nanoseconds))) }
            fields += [
                ("refresh", String(frame.refresh)),
                ("dropped", String(frame.droppedFrames)),
                ("clock_s", seconds(frame.clock)),
            ]
            if let audio = frame.audioClock { fields.append(("audio_clock_s", seconds(audio))) }
            if let layer = frame.layer { fields.append(("layer", quote(layer))) }
            if let error = frame.syncError, error.isNumeric { fields.append(("sync_error_s", seconds(error))) }
            return object(fields)
        case .event(let event):
            var fields: [(String, String)] = [
                ("type", quote("event")),
                ("event", quote(event.kind.rawValue)),
                ("item", String(event.itemIndex)),
                ("source", quote(event.source)),
                ("at_ns", String(event.at.nanoseconds)),
            ]
            if let time = event.time, time.isNumeric {
                fields.append(("time", rational(time)))
                fields.append(("time_s", seconds(time)))
            }
            if let reason = event.reason { fields.append(("reason", quote(reason))) }
            if let detail = event.detail { fields.append(("detail", quote(detail))) }
            if let attempt = event.attempt { fields.append(("attempt", String(attempt))) }
            if let delay = event.delay { fields.append(("delay_s", seconds(delay))) }
            if let entry = event.entry { fields.append(("entry", quote(entry))) }
            if let playlist = event.playlist { fields.append(("playlist", quote(playlist))) }
            if let index = event.playlistIndex { fields.append(("playlist_index", String(index))) }
            if let wall = event.wallClockTime, wall.isNumeric { fields.append(("at_utc_ns", String(wall.nanoseconds))) }
            if let error = event.error, error.isNumeric { fields.append(("error_s", seconds(error))) }
            if let adjustment = event.adjustment { fields.append(("rate_ppm", String(Int((adjustment * 1e6).rounded())))) }
            return object(fields)
        }
    }

    private static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    private static func rational(_ time: MediaTime) -> String {
        time.isNumeric ? "[\(time.value),\(time.timescale)]" : "null"
    }

    private static func seconds(_ time: MediaTime) -> String {
        time.isNumeric ? MediaTime.format(seconds: time.seconds, decimals: 6) : "null"
    }

    static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

/// The presentation log could not be opened.
public struct PresentationLogError: Error, Sendable, CustomStringConvertible {
    public let path: String
    public let reason: String
    public var description: String { "\(path): cannot write the presentation log: \(reason)" }
}
