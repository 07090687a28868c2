package import CFFmpeg
package import MediaSinks

/// An audio encoder (`AVCodecContext`): send frames, receive packets, drain.
///
/// Owned by one thread (a recorder's capture thread), which makes and uses it.
/// The corresponding C functions are `avcodec_find_encoder_by_name`, `avcodec_open2`,
/// `avcodec_send_frame` and `avcodec_receive_packet`.
package final class Encoder {
    /// What ``receive(into:)`` produced.
    package enum ReceiveResult: Sendable, Equatable {
        /// A packet was written.
        case packet
        /// Send more frames first.
        case needsInput
        /// The encoder is drained: no more packets.
        case endOfStream
    }

    /// What an audio encoder is asked to make.
    package struct AudioParameters {
        /// FFmpeg's encoder name: `pcm_s16le`, `pcm_s24le`, `flac`, `aac`.
        package var encoderName: String
        package var sampleFormat: AVSampleFormat
        package var sampleRate: Int
        package var channelCount: Int
        /// Bits of each sample that carry information (24 for 24-bit audio in 32-bit words), or 0.
        package var bitsPerRawSample: Int = 0
        /// Bits per second for lossy encoders, or 0 for the encoder's default.
        package var bitRate: Int = 0
        /// The encoder's `compression_level` (FLAC: 0…12), or `nil` for its default.
        package var compressionLevel: Int?
        /// Whether the container wants the codec's headers out of band (`AVFMT_GLOBALHEADER`).
        package var globalHeader = false

        package init(encoderName: String, sampleFormat: AVSampleFormat, sampleRate: Int, channelCount: Int) {
            self.encoderName = encoderName
            self.sampleFormat = sampleFormat
            self.sampleRate = sampleRate
            self.channelCount = channelCount
        }
    }

    /// The open codec context.
    package let context: UnsafeMutablePointer<AVCodecContext>
    /// The destination, for error messages.
    package let destination: String
    /// The encoder's name, e.g. "flac".
    package let name: String

    /// Opens an encoder. Its time base is one sample (`1/sampleRate`).
    ///
    /// - Throws: ``MediaError`` with reason `.unsupportedCodec` when this FFmpeg has no such encoder,
    ///   or FFmpeg's reason when it refuses the parameters.
    package init(audio parameters: AudioParameters, destination: String) throws(MediaError) {
        FFmpegLibrary.configure()
        self.destination = destination
        name = parameters.encoderName
        guard let codec = avcodec_find_encoder_by_name(parameters.encoderName) else {
            throw MediaError(source: destination, operation: "cannot encode", reason: .unsupportedCodec,
                             detail: "\"\(parameters.encoderName)\" (this FFmpeg has no such encoder)")
        }
        guard let allocated = avcodec_alloc_context3(codec) else {
            throw MediaError(source: destination, operation: "cannot open encoder", reason: .outOfMemory)
        }
        allocated.pointee.sample_fmt = parameters.sampleFormat
        allocated.pointee.sample_rate = Int32(parameters.sampleRate)
        allocated.pointee.time_base = AVRational(num: 1, den: Int32(parameters.sampleRate))
        av_channel_layout_default(&allocated.pointee.ch_layout, Int32(parameters.channelCount))
        if parameters.bitsPerRawSample > 0 { allocated.pointee.bits_per_raw_sample = Int32(parameters.bitsPerRawSample) }
        if parameters.bitRate > 0 { allocated.pointee.bit_rate = Int64(parameters.bitRate) }
        if let level = parameters.compressionLevel { allocated.pointee.compression_level = Int32(level) }
        if parameters.globalHeader { allocated.pointee.flags |= vitrine_av_codec_flag_global_header() }
        allocated.pointee.thread_count = 1
        FFmpegLog.clear()
        let status = avcodec_open2(allocated, codec, nil)
        if status < 0 {
            var freeing: UnsafeMutablePointer<AVCodecContext>? = allocated
            avcodec_free_context(&freeing)
            throw MediaError.ffmpeg(status, source: destination, operation: "cannot open the \(parameters.encoderName) encoder")
        }
        context = allocated
    }

    deinit {
        var freeing: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&freeing)
    }

    /// Samples per frame the encoder takes (every frame but the last), or 0 when any count goes (PCM).
    package var frameSize: Int { Int(context.pointee.frame_size) }

    /// Whether the last frame may be shorter than ``frameSize``.
    package var acceptsShortLastFrame: Bool {
        context.pointee.codec.pointee.capabilities & vitrine_av_codec_cap_small_last_frame() != 0
    }

    /// Sends one frame, or `nil` to start draining. The encoder must have been emptied with
    /// ``receive(into:)`` first: an encoder that is full is a programming error reported as one.
    package func send(_ frame: Frame?) throws(MediaError) {
        let status = avcodec_send_frame(context, frame?.pointer)
        guard status >= 0 else { throw MediaError.ffmpeg(status, source: destination, operation: "cannot encode (\(name))") }
    }

    /// Receives the next encoded packet into `packet` (which is unreferenced first).
    package func receive(into packet: Packet) throws(MediaError) -> ReceiveResult {
        let status = avcodec_receive_packet(context, packet.pointer)
        if status >= 0 { return .packet }
        if status == vitrine_averror_eagain() { return .needsInput }
        if status == vitrine_averror_eof() { return .endOfStream }
        throw MediaError.ffmpeg(status, source: destination, operation: "cannot encode (\(name))")
    }
}
