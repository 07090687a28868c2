package import CFFmpeg
package import MediaSinks

extension MediaError {
    /// Classifies an FFmpeg error code returned while doing `operation` on `source`.
    ///
    /// `interrupt` tells a timeout from a cancellation when FFmpeg says "exit requested".
    package static func ffmpeg(
        _ code: Int32, source: String, operation: String,
        interrupt: UnsafePointer<VitrineIODeadline>? = nil
    ) -> MediaError {
        let log = FFmpegLog.take()
        let reason: Reason
        switch code {
        case vitrine_averror_enoent(): reason = .notFound
        case vitrine_averror_invaliddata(): reason = operation.hasPrefix("cannot open") ? .unrecognizedFormat : .corruptData
        case vitrine_averror_eof(): reason = .corruptData
        case vitrine_averror_decoder_not_found(): reason = .unsupportedCodec
        case vitrine_averror_stream_not_found(): reason = .noSuchTrack
        case vitrine_averror_etimedout(): reason = .timedOut
        case vitrine_averror_enomem(): reason = .outOfMemory
        case vitrine_averror_econnrefused(): reason = .network
        case vitrine_averror_exit():
            if let interrupt, vitrine_io_is_cancelled(interrupt) != 0 { reason = .cancelled } else { reason = .timedOut }
        default:
            // Any other failure of a network URL (refused, unreachable, HTTP status, DNS) is a network failure.
            let isNetworkSource = source.contains("://") && !source.hasPrefix("file:")
            reason = isNetworkSource ? .network : .other
        }
        return MediaError(
            source: source, operation: operation, reason: reason, ffmpegCode: code, ffmpegLog: log,
            ffmpegMessage: FFmpegMessage.describe(code))
    }
}
