public import MediaTime
import Threading

/// Process-wide measurements of the engine's work, for whoever exports them (the inspector's
/// `/metrics`). Handlers run on the engine's decode threads: they must only record and return.
public enum PlaybackStatistics {
    /// The handler in a box: a class reference comes out of the lock as it is. A bare function
    /// value taken out through the generic `withLock` was re-wrapped on every call, and heaptrack
    /// showed one 32-byte object per decoded frame that was never freed (a slow leak over days).
    private final class Handler: Sendable {
        let receive: @Sendable (MediaTime) -> Void
        init(_ receive: @escaping @Sendable (MediaTime) -> Void) { self.receive = receive }
    }

    /// Set once by the command line, read by every decode thread for every frame.
    private static let decodeHandler = LockedValue<Handler?>(nil)

    /// Receives, for each decoded video frame, the time the decoder spent on it (sending its
    /// packets and receiving it, conversion included; waits excluded). `nil` stops it.
    public static func setVideoDecodeTimeHandler(_ handler: (@Sendable (MediaTime) -> Void)?) {
        let box = handler.map(Handler.init)
        decodeHandler.withLock { $0 = box }
    }

    static func videoFrameDecoded(in time: MediaTime) {
        decodeHandler.withLock { $0 }?.receive(time)
    }
}
