public import MediaTime
import Threading

/// Process-wide measurements of the engine's work, for whoever exports them (the inspector's
/// `/metrics`). Handlers run on the engine's decode threads: they must only record and return.
public enum PlaybackStatistics {
    /// Set once by the command line, read by every decode thread for every frame.
    private static let decodeHandler = LockedValue<(@Sendable (MediaTime) -> Void)?>(nil)

    /// Receives, for each decoded video frame, the time the decoder spent on it (sending its
    /// packets and receiving it, conversion included; waits excluded). `nil` stops it.
    public static func setVideoDecodeTimeHandler(_ handler: (@Sendable (MediaTime) -> Void)?) {
        decodeHandler.withLock { $0 = handler }
    }

    static func videoFrameDecoded(in time: MediaTime) {
        decodeHandler.withLock { $0 }?(time)
    }
}
