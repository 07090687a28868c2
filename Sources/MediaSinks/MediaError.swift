/// Why media could not be opened, read, decoded or played: the file or URL, what was being done,
/// the cause, and FFmpeg's own message for the error code when FFmpeg reported one.
///
/// It lives beside the sink protocols because outputs report their own failures with it (a
/// display gone for good, an audio device that cannot be reopened); MediaAsset fills the FFmpeg
/// fields when FFmpeg reported the failure.
///
/// The ``description`` is one line meant for people, for example
/// `Fixtures/bad/text.mp4: cannot open: the data is not a media format FFmpeg recognises (FFmpeg: Invalid data found when processing input)`.
public struct MediaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The class of a failure, for code that reacts to it.
    public enum Reason: Sendable, Hashable {
        /// The file does not exist.
        case notFound
        /// The file exists but has no bytes.
        case emptyFile
        /// The bytes are not a container FFmpeg recognises.
        case unrecognizedFormat
        /// The container was recognised but its data is damaged or cut short.
        case corruptData
        /// No decoder for this codec is available.
        case unsupportedCodec
        /// The media has no track of the kind asked for.
        case noSuchTrack
        /// A network or file operation took longer than its timeout.
        case timedOut
        /// The operation was cancelled.
        case cancelled
        /// The network refused or could not reach the server, or the server answered with an error.
        case network
        /// Out of memory.
        case outOfMemory
        /// The request itself was not valid (for example a time outside the asset).
        case invalidRequest
        /// Any other FFmpeg failure; ``MediaError/ffmpegMessage`` says more.
        case other
    }

    /// The file path or URL the error is about.
    public let source: String
    /// What was being done, e.g. "cannot open" or "cannot decode".
    public let operation: String
    /// The class of the failure.
    public let reason: Reason
    /// Extra words about the cause, e.g. the codec's name.
    public let detail: String?
    /// FFmpeg's error code, when FFmpeg reported the failure.
    public let ffmpegCode: Int32?
    /// The last error line FFmpeg logged before the failure, e.g. "moov atom not found".
    public let ffmpegLog: String?
    /// FFmpeg's text for ``ffmpegCode`` (`av_strerror`), if there is a code.
    public let ffmpegMessage: String?

    public init(
        source: String, operation: String, reason: Reason, detail: String? = nil, ffmpegCode: Int32? = nil,
        ffmpegLog: String? = nil, ffmpegMessage: String? = nil
    ) {
        self.source = source
        self.operation = operation
        self.reason = reason
        self.detail = detail
        self.ffmpegCode = ffmpegCode
        self.ffmpegLog = ffmpegLog
        self.ffmpegMessage = ffmpegMessage
    }

    /// The cause in words.
    public var cause: String {
        var text: String
        switch reason {
        case .notFound: text = "no such file"
        case .emptyFile: text = "the file is empty"
        case .unrecognizedFormat: text = "the data is not a media format FFmpeg recognises"
        case .corruptData: text = "the media data is damaged or truncated"
        case .unsupportedCodec: text = "no decoder for the codec"
        case .noSuchTrack: text = "no such track"
        case .timedOut: text = "timed out"
        case .cancelled: text = "cancelled"
        case .network: text = "network error"
        case .outOfMemory: text = "out of memory"
        case .invalidRequest: text = "invalid request"
        case .other: text = ffmpegCode == nil ? "failed" : "FFmpeg error"
        }
        if let detail { text += " \(detail)" }
        return text
    }

    public var description: String {
        var line = "\(source): \(operation): \(cause)"
        let ffmpegWords = [ffmpegLog, ffmpegMessage].compactMap { $0 }
        if !ffmpegWords.isEmpty { line += " (FFmpeg: \(ffmpegWords.joined(separator: "; ")))" }
        return line
    }

    /// The same error with another reason and detail.
    package func with(reason: Reason, detail: String?) -> MediaError {
        MediaError(
            source: source, operation: operation, reason: reason, detail: detail, ffmpegCode: ffmpegCode, ffmpegLog: ffmpegLog,
            ffmpegMessage: ffmpegMessage)
    }
}
