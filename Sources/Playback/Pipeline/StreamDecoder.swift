internal import CFFmpeg
import MediaTime

/// One stream's `AVCodecContext`: owned by that stream's decode thread.
// Unchecked: created on the demux thread, then used only by one decode thread.
final class StreamDecoder: @unchecked Sendable {
    let context: UnsafeMutablePointer<AVCodecContext>
    let timeBase: AVRational

    /// Opens a decoder for `stream`, with frame threading on `threadCount` threads (0 = auto).
    /// The corresponding C functions are `avcodec_find_decoder` and `avcodec_open2`.
    init(stream: UnsafeMutablePointer<AVStream>, threadCount: Int, source: String) throws(PlaybackError) {
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id) else {
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw PlaybackError(.decoderSetup, source: source, reason: "no decoder for codec \(name)")
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw PlaybackError(.decoderSetup, source: source, reason: "out of memory")
        }
        var optional: UnsafeMutablePointer<AVCodecContext>? = context
        let copied = avcodec_parameters_to_context(context, parameters)
        guard copied >= 0 else {
            avcodec_free_context(&optional)
            throw PlaybackError(.decoderSetup, source: source, reason: "bad codec parameters: \(describeAVError(copied))")
        }
        context.pointee.pkt_timebase = stream.pointee.time_base
        context.pointee.thread_count = Int32(threadCount)
        if (codec.pointee.capabilities & Int32(vitrine_av_codec_cap_frame_threads())) != 0 {
            context.pointee.thread_type = Int32(vitrine_ff_thread_frame())
        } else {
            context.pointee.thread_type = Int32(vitrine_ff_thread_slice())
        }
        let opened = avcodec_open2(context, codec, nil)
        guard opened >= 0 else {
            avcodec_free_context(&optional)
            let name = String(cString: avcodec_get_name(parameters.pointee.codec_id))
            throw PlaybackError(.decoderSetup, source: source, reason: "cannot open \(name) decoder: \(describeAVError(opened))")
        }
        self.context = context
        timeBase = stream.pointee.time_base
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    /// Sends a packet, or `nil` to drain. The corresponding C function is `avcodec_send_packet`.
    func send(_ packet: UnsafeMutablePointer<AVPacket>?) -> Int32 {
        avcodec_send_packet(context, packet)
    }

    enum Output {
        case frame(FrameBox)
        case needsInput
        case drained
        case failure(Int32)
    }

    /// The next decoded frame. The corresponding C function is `avcodec_receive_frame`.
    func receive() -> Output {
        guard let box = FrameBox() else { return .failure(vitrine_averror(ENOMEM)) }
        let result = avcodec_receive_frame(context, box.frame)
        if result >= 0 { return .frame(box) }
        if result == vitrine_averror_eagain() { return .needsInput }
        if result == vitrine_averror_eof() { return .drained }
        return .failure(result)
    }

    /// Forgets buffered state (after a seek or a drain). The corresponding C function is
    /// `avcodec_flush_buffers`.
    func flush() { avcodec_flush_buffers(context) }
}
