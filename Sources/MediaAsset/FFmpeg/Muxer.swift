internal import CFFmpeg
package import MediaSinks

/// A container being written (`AVFormatContext` for output) with one stream: header, packets,
/// trailer. The file is created by ``init(path:formatName:encoder:options:)``; ``finish()``
/// writes the trailer (the WAV sizes, the MP4 index) and closes it, after which it is playable.
///
/// Owned by one thread (a recorder's capture thread), which makes and uses it.
/// The corresponding C functions are `avformat_alloc_output_context2`, `avformat_new_stream`,
/// `avio_open`, `avformat_write_header`, `av_write_frame`, `av_write_trailer` and `avio_closep`.
package final class Muxer {
    /// The path, for error messages.
    package let path: String
    private let context: UnsafeMutablePointer<AVFormatContext>
    private let stream: UnsafeMutablePointer<AVStream>
    private let encoderTimeBase: AVRational
    private var isFinished = false

    /// Whether the container keeps codec headers out of band (the encoder must be told before it opens).
    package static func wantsGlobalHeader(formatName: String) -> Bool {
        guard let format = av_guess_format(formatName, nil, nil) else { return false }
        return format.pointee.flags & vitrine_avfmt_globalheader() != 0
    }

    /// Creates `path` as a `formatName` container (`wav`, `flac`, `ipod`) holding `encoder`'s stream,
    /// and writes its header. `options` are the muxer's private options (`rf64=auto`).
    package init(path: String, formatName: String, encoder: Encoder, options: [String: String] = [:]) throws(MediaError) {
        FFmpegLibrary.configure()
        self.path = path
        encoderTimeBase = encoder.context.pointee.time_base
        FFmpegLog.clear()
        var allocated: UnsafeMutablePointer<AVFormatContext>?
        var status = avformat_alloc_output_context2(&allocated, nil, formatName, path)
        guard status >= 0, let allocated else {
            throw MediaError.ffmpeg(status, source: path, operation: "cannot create a \(formatName) file")
        }
        guard let created = avformat_new_stream(allocated, nil) else {
            avformat_free_context(allocated)
            throw MediaError(source: path, operation: "cannot create a \(formatName) file", reason: .outOfMemory)
        }
        status = avcodec_parameters_from_context(created.pointee.codecpar, encoder.context)
        if status >= 0 {
            created.pointee.time_base = encoderTimeBase
            status = avio_open(&allocated.pointee.pb, path, vitrine_avio_flag_write())
        }
        guard status >= 0 else {
            avformat_free_context(allocated)
            throw MediaError.ffmpeg(status, source: path, operation: "cannot create the file")
        }
        var dictionary: OpaquePointer?
        for (key, value) in options { av_dict_set(&dictionary, key, value, 0) }
        defer { av_dict_free(&dictionary) }
        status = avformat_write_header(allocated, &dictionary)
        guard status >= 0 else {
            avio_closep(&allocated.pointee.pb)
            avformat_free_context(allocated)
            throw MediaError.ffmpeg(status, source: path, operation: "cannot write the \(formatName) header")
        }
        context = allocated
        stream = created
    }

    deinit {
        if !isFinished { avio_closep(&context.pointee.pb) }
        avformat_free_context(context)
    }

    /// Writes one encoded packet (timestamps in the encoder's time base).
    package func write(_ packet: Packet) throws(MediaError) {
        packet.pointer.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(packet.pointer, encoderTimeBase, stream.pointee.time_base)
        FFmpegLog.clear()
        let status = av_write_frame(context, packet.pointer)
        guard status >= 0 else { throw MediaError.ffmpeg(status, source: path, operation: "cannot write") }
    }

    /// Writes the trailer and closes the file. Later calls do nothing.
    package func finish() throws(MediaError) {
        guard !isFinished else { return }
        isFinished = true
        FFmpegLog.clear()
        let status = av_write_trailer(context)
        let closed = avio_closep(&context.pointee.pb)
        guard status >= 0 else { throw MediaError.ffmpeg(status, source: path, operation: "cannot finish the file") }
        guard closed >= 0 else { throw MediaError.ffmpeg(closed, source: path, operation: "cannot close the file") }
    }
}
