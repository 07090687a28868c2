package import CFFmpeg
package import MediaTime
internal import Glibc
internal import Synchronization
package import MediaSinks
import Threading

/// An open media container (`AVFormatContext`): streams, packets, seeking.
///
/// Opens a local path or any URL libavformat reads (file, http, https, HLS). Every blocking
/// call runs under an interrupt callback with a deadline (``openTimeout`` for opening and
/// probing, ``readTimeout`` for each packet read and seek), so a silent server cannot hang the
/// caller; ``cancel()`` aborts a blocking call from any thread.
///
/// One thread at a time uses a demuxer (it may move between threads); only ``cancel()`` is
/// safe to call concurrently. The corresponding C functions are `avformat_open_input`,
/// `avformat_find_stream_info`, `av_read_frame`, `av_seek_frame` and `avformat_close_input`.
package final class Demuxer: @unchecked Sendable {
    /// The path or URL as given, used in error messages.
    package let source: String
    /// The open context; valid until the demuxer is released.
    package let context: UnsafeMutablePointer<AVFormatContext>
    /// The longest time opening and probing may block.
    package let openTimeout: Duration
    /// The longest time one read or seek may block.
    package let readTimeout: Duration
    /// The cancel flag and deadline FFmpeg's interrupt callback polls.
    package let interruption: IOInterruption
    private var interrupt: UnsafeMutablePointer<VitrineIODeadline> { interruption.pointer }

    /// Opens `source` and (unless `findStreamInfo` is false) reads enough to know its streams.
    ///
    /// - Throws: ``MediaError`` naming `source` and the cause: missing or empty file,
    ///   unrecognised format, timeout, cancellation, network failure.
    package init(
        source: String,
        openTimeout: Duration = .seconds(15),
        readTimeout: Duration = .seconds(15),
        findStreamInfo: Bool = true,
        interruption: IOInterruption = IOInterruption()
    ) throws(MediaError) {
        FFmpegLibrary.configure()
        self.source = source
        self.openTimeout = openTimeout
        self.readTimeout = readTimeout
        self.interruption = interruption
        let isNetwork = source.contains("://") && !source.hasPrefix("file:")

        if !isNetwork {
            let path = source.hasPrefix("file:") ? String(source.dropFirst(source.hasPrefix("file://") ? 7 : 5)) : source
            var info = stat()
            if stat(path, &info) != 0 {
                throw MediaError(source: source, operation: "cannot open", reason: errno == ENOENT ? .notFound : .other,
                                 detail: errno == ENOENT ? nil : String(cString: strerror(errno)))
            }
            if (info.st_mode & S_IFMT) == S_IFREG && info.st_size == 0 {
                throw MediaError(source: source, operation: "cannot open", reason: .emptyFile)
            }
        }

        let interrupt = interruption.pointer
        if vitrine_io_is_cancelled(interrupt) != 0 {
            throw MediaError(source: source, operation: "cannot open", reason: .cancelled)
        }
        guard let allocated = avformat_alloc_context() else {
            throw MediaError(source: source, operation: "cannot open", reason: .outOfMemory)
        }
        vitrine_install_interrupt(allocated, interrupt)
        var options: OpaquePointer? = nil
        if isNetwork {
            // The protocol layer's own timeout (microseconds) backs up the interrupt deadline.
            av_dict_set(&options, "rw_timeout", String(Self.microseconds(readTimeout)), 0)
            av_dict_set(&options, "timeout", String(Self.microseconds(openTimeout)), 0)
        }
        defer { av_dict_free(&options) }

        vitrine_io_arm(interrupt, Self.nanoseconds(openTimeout))
        FFmpegLog.clear()
        var contextPointer: UnsafeMutablePointer<AVFormatContext>? = allocated
        var status = avformat_open_input(&contextPointer, source, nil, &options)
        guard status >= 0, let opened = contextPointer else {
            // avformat_open_input frees the context on failure.
            let error = MediaError.ffmpeg(status, source: source, operation: "cannot open", interrupt: interrupt)
            if error.reason == .unrecognizedFormat, !isNetwork, let format = Self.formatRecognised(inFileAt: source) {
                // The bytes look like a known container: it is damaged or cut short, not foreign.
                throw error.with(reason: .corruptData, detail: "(the bytes look like \(format))")
            }
            throw error
        }
        context = opened
        if findStreamInfo {
            status = avformat_find_stream_info(opened, nil)
            if status < 0 {
                // Every stored property is set: throwing runs deinit, which closes the input.
                throw MediaError.ffmpeg(status, source: source, operation: "cannot read stream information", interrupt: interrupt)
            }
        }
        vitrine_io_arm(interrupt, 0)
    }

    deinit {
        var closing: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&closing)
    }

    /// Aborts the blocking call in progress (and every later one). Safe from any thread.
    package func cancel() { interruption.cancel() }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { interruption.isCancelled }

    /// The number of streams.
    package var streamCount: Int { Int(context.pointee.nb_streams) }

    /// The stream at `index` (0 ..< ``streamCount``).
    package func stream(at index: Int) -> UnsafeMutablePointer<AVStream> {
        precondition(index >= 0 && index < streamCount, "stream index \(index) out of range")
        return context.pointee.streams[index]!
    }

    /// The short names of the container format, e.g. "mov,mp4,m4a,3gp,3g2,mj2".
    package var formatName: String { context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "" }

    /// The descriptive name of the container format, e.g. "QuickTime / MOV".
    package var formatLongName: String {
        context.pointee.iformat.flatMap { $0.pointee.long_name.map { String(cString: $0) } } ?? ""
    }

    /// The container's duration (microseconds), or ``MediaTime/indefinite`` when unknown (live streams).
    package var duration: MediaTime {
        let value = context.pointee.duration
        return value == vitrine_av_nopts_value() || value < 0 ? .indefinite : MediaTime(value: value, timescale: vitrine_av_time_base())
    }

    /// Where stream `index` ends in item time (the container's start time is 0): its start plus its
    /// duration as the container declares them; `nil` when either is unknown.
    package func streamEnd(_ index: Int) -> MediaTime? {
        let stream = stream(at: index)
        let none = vitrine_av_nopts_value()
        guard stream.pointee.duration != none, stream.pointee.duration > 0 else { return nil }
        let start = stream.pointee.start_time == none ? MediaTime.zero : Self.time(stream.pointee.start_time, timeBase: stream.pointee.time_base)
        let end = start + Self.time(stream.pointee.duration, timeBase: stream.pointee.time_base)
        let origin = startTime.isNumeric ? startTime : .zero
        guard end.isNumeric else { return nil }
        return end - origin
    }

    /// The container's start time (microseconds), or ``MediaTime/invalid`` when unknown.
    package var startTime: MediaTime {
        let value = context.pointee.start_time
        return value == vitrine_av_nopts_value() ? .invalid : MediaTime(value: value, timescale: vitrine_av_time_base())
    }

    /// The overall bit rate in bits per second, or 0 when unknown.
    package var bitRate: Int64 { context.pointee.bit_rate }

    /// The container-level metadata tags, in file order.
    package var metadata: [(key: String, value: String)] { Self.tags(context.pointee.metadata) }

    /// The best stream of a media type (libavformat's choice), or nil.
    ///
    /// The corresponding C function is `av_find_best_stream`.
    package func bestStream(of type: AVMediaType) -> Int? {
        let index = av_find_best_stream(context, type, -1, -1, nil, 0)
        return index >= 0 ? Int(index) : nil
    }

    /// Reads the next packet into `packet` (which is unreferenced first).
    ///
    /// - Returns: false at the end of the input.
    /// - Throws: ``MediaError`` on a read error, a timeout or cancellation.
    package func read(into packet: Packet) throws(MediaError) -> Bool {
        packet.unref()
        FFmpegLog.clear()
        vitrine_io_arm(interrupt, Self.nanoseconds(readTimeout))
        defer { vitrine_io_arm(interrupt, 0) }
        let status = av_read_frame(context, packet.pointer)
        if status == vitrine_averror_eof() { return false }
        if status < 0 {
            // A read error on a local file after the data ran out is the end of what can be read.
            throw MediaError.ffmpeg(status, source: source, operation: "cannot read", interrupt: interrupt)
        }
        return true
    }

    /// Reads the next packet, or nil at the end of the input.
    package func readPacket() throws(MediaError) -> Packet? {
        let packet = Packet()
        return try read(into: packet) ? packet : nil
    }

    /// Seeks so the next packets start at or before `time` (a keyframe) in stream `streamIndex`,
    /// or in the container's timeline when `streamIndex` is nil.
    ///
    /// The corresponding C function is `av_seek_frame` with `AVSEEK_FLAG_BACKWARD`.
    package func seek(to time: MediaTime, streamIndex: Int? = nil) throws(MediaError) {
        let target: Int64
        let index: Int32
        if let streamIndex {
            let timeBase = stream(at: streamIndex).pointee.time_base
            target = Self.timestamp(time, timeBase: timeBase)
            index = Int32(streamIndex)
        } else {
            target = Self.timestamp(time, timeBase: vitrine_av_time_base_q())
            index = -1
        }
        vitrine_io_arm(interrupt, Self.nanoseconds(readTimeout))
        defer { vitrine_io_arm(interrupt, 0) }
        let status = av_seek_frame(context, index, target, vitrine_avseek_flag_backward())
        if status < 0 {
            throw MediaError.ffmpeg(status, source: source, operation: "cannot seek to \(time.seconds) s", interrupt: interrupt)
        }
    }

    /// The container format the first bytes of a local file look like, judged by content alone
    /// (not the file name), or nil when nothing matches with confidence.
    ///
    /// The corresponding C function is `av_probe_input_format3`.
    static func formatRecognised(inFileAt path: String) -> String? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        let size = 4096
        // FFmpeg wants AVPROBE_PADDING_SIZE (64) zero bytes after the data.
        var buffer = [UInt8](repeating: 0, count: size + 64)
        let count = buffer.withUnsafeMutableBytes { fread($0.baseAddress, 1, size, file) }
        guard count > 0 else { return nil }
        var score: Int32 = 0
        let format = buffer.withUnsafeMutableBufferPointer { bytes -> UnsafePointer<AVInputFormat>? in
            var probe = AVProbeData()
            probe.buf = bytes.baseAddress
            probe.buf_size = Int32(count)
            probe.filename = nil
            return withUnsafePointer(to: &probe) { av_probe_input_format3($0, 1, &score) }
        }
        // AVPROBE_SCORE_EXTENSION is 50: anything above is a content match.
        guard let format, score > 50 else { return nil }
        return format.pointee.long_name.map { String(cString: $0) } ?? String(cString: format.pointee.name)
    }

    /// `time` in units of `timeBase`, rounded down (so a seek never lands after the time).
    package static func timestamp(_ time: MediaTime, timeBase: AVRational) -> Int64 {
        guard time.isNumeric, timeBase.num > 0, timeBase.den > 0 else { return 0 }
        let value = av_rescale_q_rnd(time.value, AVRational(num: 1, den: time.timescale), timeBase, AV_ROUND_DOWN)
        return value
    }

    /// A timestamp in `timeBase` units as a ``MediaTime`` (invalid for `AV_NOPTS_VALUE`).
    package static func time(_ timestamp: Int64, timeBase: AVRational) -> MediaTime {
        guard timestamp != vitrine_av_nopts_value(), timeBase.num > 0, timeBase.den > 0 else { return .invalid }
        if timeBase.num == 1 { return MediaTime(value: timestamp, timescale: timeBase.den) }
        let (product, overflow) = timestamp.multipliedReportingOverflow(by: Int64(timeBase.num))
        if !overflow { return MediaTime(value: product, timescale: timeBase.den) }
        return MediaTime(value: av_rescale_q(timestamp, timeBase, vitrine_av_time_base_q()), timescale: vitrine_av_time_base())
    }

    /// An `AVDictionary`'s entries in order.
    package static func tags(_ dictionary: OpaquePointer?) -> [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        var entry: UnsafeMutablePointer<AVDictionaryEntry>? = nil
        while let next = av_dict_get(dictionary, "", entry, vitrine_av_dict_ignore_suffix()) {
            result.append((String(cString: next.pointee.key), String(cString: next.pointee.value)))
            entry = next
        }
        return result
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    static func microseconds(_ duration: Duration) -> Int64 { nanoseconds(duration) / 1000 }
}

/// The flag and deadline that FFmpeg's interrupt callback polls during blocking I/O.
///
/// Create one before opening a ``Demuxer`` to be able to cancel the open itself from another
/// thread; one interruption serves one demuxer. The memory lives as long as this object.
package final class IOInterruption: @unchecked Sendable {
    /// The C struct handed to `vitrine_install_interrupt`.
    package let pointer: UnsafeMutablePointer<VitrineIODeadline>

    package init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: VitrineIODeadline(deadlineNanoseconds: 0, cancelled: 0))
    }

    deinit { pointer.deallocate() }

    /// Makes the blocking call in progress, and every later one, fail as cancelled. Safe from any thread.
    package func cancel() { vitrine_io_cancel(pointer) }

    /// Whether ``cancel()`` was called.
    package var isCancelled: Bool { vitrine_io_is_cancelled(pointer) != 0 }
}

/// Process-wide FFmpeg settings, applied once before the first FFmpeg call.
package enum FFmpegLibrary {
    private static let configured: Bool = {
        // FFmpeg's log would go to stderr; Vitrine keeps the last error line of each thread
        // for its error messages instead. VITRINE_FFMPEG_LOG=<level> (24 warnings, 48 debug)
        // also prints FFmpeg's lines at or below that level on stderr.
        if let level = getenv("VITRINE_FFMPEG_LOG").flatMap({ Int32(String(cString: $0)) }) {
            FFmpegLog.echoLevel.store(level, ordering: .relaxed)
        }
        av_log_set_level(max(vitrine_av_log_error(), FFmpegLog.echoLevel.load(ordering: .relaxed)))
        av_log_set_callback { _, level, format, arguments in
            guard level <= av_log_get_level(), let format, let arguments else { return }
            var line = [CChar](repeating: 0, count: 1024)
            _ = vsnprintf(&line, line.count, format, arguments)
            line.withUnsafeBufferPointer { FFmpegLog.handle(level: level, text: $0.baseAddress) }
        }
        avformat_network_init()
        return true
    }()

    /// Applies the settings (idempotent, thread-safe).
    package static func configure() { _ = configured }
}

/// The last error FFmpeg logged on each thread: FFmpeg says why in its log ("moov atom not
/// found") and only a generic code in its return value.
package enum FFmpegLog {
    static let echoLevel = Atomic<Int32>(-8)  // AV_LOG_QUIET
    private static let lastError = LockedValue<[UInt: String]>([:])

    static func handle(level: Int32, text: UnsafePointer<CChar>?) {
        let echo = level <= echoLevel.load(ordering: .relaxed)
        guard let text, level <= vitrine_av_log_error() || echo else { return }
        var line = String(cString: text)
        while line.last == "\n" || line.last == " " { line.removeLast() }
        if echo {
            let bytes = Array("ffmpeg: \(line)\n".utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        if level <= vitrine_av_log_error(), !line.isEmpty {
            let thread = UInt(pthread_self())
            lastError.withLock { $0[thread] = line }
        }
    }

    /// Forgets the calling thread's last error (call before an FFmpeg call whose failure you will report).
    package static func clear() {
        let thread = UInt(pthread_self())
        _ = lastError.withLock { $0.removeValue(forKey: thread) }
    }

    /// The calling thread's last logged error since ``clear()``, and forgets it.
    package static func take() -> String? {
        let thread = UInt(pthread_self())
        return lastError.withLock { $0.removeValue(forKey: thread) }
    }
}
