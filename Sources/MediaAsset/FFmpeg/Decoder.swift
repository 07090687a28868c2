package import CFFmpeg
package import MediaSinks

/// A decoder for one stream (`AVCodecContext`): send packets, receive frames, flush, drain.
///
/// Used by one thread at a time (it may move between threads).
/// The corresponding C functions are `avcodec_find_decoder`, `avcodec_parameters_to_context`,
/// `avcodec_open2`, `avcodec_send_packet`, `avcodec_receive_frame`, `avcodec_flush_buffers`.
package final class Decoder: @unchecked Sendable {
    /// What ``send(_:)`` did with a packet.
    package enum SendResult: Sendable, Equatable {
        /// The decoder took the packet.
        case accepted
        /// The decoder is full: receive frames, then send the same packet again.
        case full
        /// The decoder was drained and takes no more packets until ``flush()``.
        case ended
    }

    /// What ``receive(into:)`` produced.
    package enum ReceiveResult: Sendable, Equatable {
        /// A frame was written.
        case frame
        /// Send more packets first.
        case needsInput
        /// The decoder is drained: no more frames.
        case endOfStream
    }

    /// The open codec context.
    package let context: UnsafeMutablePointer<AVCodecContext>
    /// The time base of the stream's timestamps (packets in, frames out).
    package let timeBase: AVRational
    /// The source, for error messages.
    package let source: String
    /// The codec's short name, e.g. "h264".
    package let codecName: String

    /// Opens a decoder for `stream` of the media at `source`.
    ///
    /// - Parameter threadCount: decoding threads; 0 lets FFmpeg choose, 1 decodes on the caller's thread only.
    /// - Throws: ``MediaError`` with reason `.unsupportedCodec` when FFmpeg has no decoder for it.
    package init(stream: UnsafeMutablePointer<AVStream>, source: String, threadCount: Int = 0) throws(MediaError) {
        FFmpegLibrary.configure()
        self.source = source
        let parameters = stream.pointee.codecpar!
        let codecID = parameters.pointee.codec_id
        let name = String(cString: avcodec_get_name(codecID))
        codecName = name
        guard let codec = avcodec_find_decoder(codecID) else {
            throw MediaError(source: source, operation: "cannot decode stream \(stream.pointee.index)",
                             reason: .unsupportedCodec, detail: "\"\(name)\"", ffmpegCode: vitrine_averror_decoder_not_found(),
                             ffmpegMessage: FFmpegMessage.describe(vitrine_averror_decoder_not_found()))
        }
        guard let allocated = avcodec_alloc_context3(codec) else {
            throw MediaError(source: source, operation: "cannot open decoder", reason: .outOfMemory)
        }
        var status = avcodec_parameters_to_context(allocated, parameters)
        if status >= 0 {
            allocated.pointee.pkt_timebase = stream.pointee.time_base
            allocated.pointee.thread_count = Int32(threadCount)
            status = avcodec_open2(allocated, codec, nil)
        }
        if status < 0 {
            var freeing: UnsafeMutablePointer<AVCodecContext>? = allocated
            avcodec_free_context(&freeing)
            throw MediaError.ffmpeg(status, source: source, operation: "cannot open the \(name) decoder")
        }
        context = allocated
        timeBase = stream.pointee.time_base
    }

    deinit {
        var freeing: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&freeing)
    }

    /// Sends one packet, or nil to start draining at the end of the stream.
    package func send(_ packet: Packet?) throws(MediaError) -> SendResult {
        let status = avcodec_send_packet(context, packet?.pointer)
        if status >= 0 { return .accepted }
        if status == vitrine_averror_eagain() { return .full }
        if status == vitrine_averror_eof() { return .ended }
        throw MediaError.ffmpeg(status, source: source, operation: "cannot decode (\(codecName))")
    }

    /// Receives the next decoded frame into `frame` (which is unreferenced first).
    package func receive(into frame: Frame) throws(MediaError) -> ReceiveResult {
        let status = avcodec_receive_frame(context, frame.pointer)
        if status >= 0 { return .frame }
        if status == vitrine_averror_eagain() { return .needsInput }
        if status == vitrine_averror_eof() { return .endOfStream }
        throw MediaError.ffmpeg(status, source: source, operation: "cannot decode (\(codecName))")
    }

    /// Starts draining: the decoder returns its buffered frames, then ``ReceiveResult/endOfStream``.
    package func drain() throws(MediaError) { _ = try send(nil) }

    /// Drops buffered frames (after a seek) and accepts packets again after a drain.
    package func flush() { avcodec_flush_buffers(context) }
}
