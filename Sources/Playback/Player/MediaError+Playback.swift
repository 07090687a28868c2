import MediaSinks

extension MediaError {
    /// An engine-side failure of `source` (read error mid-stream, removal while loading).
    static func playback(_ source: String, _ operation: String, _ reason: Reason, detail: String? = nil) -> MediaError {
        MediaError(source: source, operation: operation, reason: reason, detail: detail)
    }
}
