internal import CFFmpeg
import MediaTime
#if canImport(Glibc)
import Glibc
#endif

/// An opened input (`AVFormatContext`) with an I/O deadline: the demux thread's resource.
///
/// Every blocking FFmpeg call polls ``VitrineIODeadline`` through the interrupt callback,
/// so a stalled network source or a hung file system fails with a timeout instead of hanging.
// Unchecked: used only by the item's demux thread after opening (`cancel()` only flips a flag
// the C callback polls).
final class MediaInput: @unchecked Sendable {
    let source: String
    let context: UnsafeMutablePointer<AVFormatContext>
    private let deadline: UnsafeMutablePointer<VitrineIODeadline>
    let ioTimeoutNanoseconds: Int64

    /// The corresponding C functions are `avformat_open_input` and `avformat_find_stream_info`.
    init(url: String, ioTimeoutNanoseconds: Int64 = 10_000_000_000) throws(PlaybackError) {
        source = url
        self.ioTimeoutNanoseconds = ioTimeoutNanoseconds
        deadline = .allocate(capacity: 1)
        deadline.initialize(to: VitrineIODeadline(deadlineNanoseconds: 0, cancelled: 0))
        guard var context = avformat_alloc_context() else {
            deadline.deallocate()
            throw PlaybackError(.open, source: url, reason: "out of memory")
        }
        vitrine_install_interrupt(context, deadline)
        deadline.pointee.deadlineNanoseconds = MonotonicClock.nanosecondsNow() + ioTimeoutNanoseconds
        var optionalContext: UnsafeMutablePointer<AVFormatContext>? = context
        let opened = avformat_open_input(&optionalContext, url, nil, nil)
        guard opened >= 0, let openedContext = optionalContext else {
            deadline.deallocate()
            throw PlaybackError(.open, source: url, reason: "cannot open: \(describeAVError(opened))")
        }
        context = openedContext
        let probed = avformat_find_stream_info(context, nil)
        deadline.pointee.deadlineNanoseconds = 0
        guard probed >= 0 else {
            avformat_close_input(&optionalContext)
            deadline.deallocate()
            throw PlaybackError(.open, source: url, reason: "cannot read stream information: \(describeAVError(probed))")
        }
        self.context = context
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFormatContext>? = context
        avformat_close_input(&pointer)
        deadline.deallocate()
    }

    /// Makes a blocked read return at once (item removed, player released).
    func cancel() { deadline.pointee.cancelled = 1 }

    var streamCount: Int { Int(context.pointee.nb_streams) }

    func stream(_ index: Int) -> UnsafeMutablePointer<AVStream> { context.pointee.streams[index]! }

    /// The container's start time (first timestamp), which item time 0 maps to.
    var startTime: MediaTime {
        let start = context.pointee.start_time
        return start == vitrine_av_nopts_value() ? .zero : MediaTime(value: start, timescale: Int32(vitrine_av_time_base()))
    }

    /// The container's duration, or indefinite for live streams.
    var duration: MediaTime {
        let duration = context.pointee.duration
        return duration == vitrine_av_nopts_value() || duration <= 0
            ? .indefinite : MediaTime(value: duration, timescale: Int32(vitrine_av_time_base()))
    }

    /// Whether the input supports seeking (not a pipe or live stream).
    var isSeekable: Bool {
        guard let io = context.pointee.pb else { return true }
        return io.pointee.seekable != 0
    }

    enum ReadResult {
        case packet
        case endOfFile
        case failure(String)
    }

    /// Reads the next packet into `packet`. The corresponding C function is `av_read_frame`.
    func read(into packet: UnsafeMutablePointer<AVPacket>) -> ReadResult {
        while true {
            deadline.pointee.deadlineNanoseconds = MonotonicClock.nanosecondsNow() + ioTimeoutNanoseconds
            let result = av_read_frame(context, packet)
            deadline.pointee.deadlineNanoseconds = 0
            if result >= 0 { return .packet }
            if result == vitrine_averror_eof() { return .endOfFile }
            if result == vitrine_averror_eagain() { usleep(2_000); continue }
            if result == vitrine_averror_exit() { return .failure("I/O timed out or was cancelled") }
            return .failure(describeAVError(result))
        }
    }

    /// Seeks to the nearest keyframe at or before `itemTime`. The corresponding C function is
    /// `avformat_seek_file`.
    func seek(toItemTime itemTime: MediaTime) -> Bool {
        let target = (itemTime + startTime).convertScale(Int32(vitrine_av_time_base()), method: .roundTowardNegativeInfinity)
        deadline.pointee.deadlineNanoseconds = MonotonicClock.nanosecondsNow() + ioTimeoutNanoseconds
        defer { deadline.pointee.deadlineNanoseconds = 0 }
        return avformat_seek_file(context, -1, .min, target.value, target.value, 0) >= 0
    }
}
