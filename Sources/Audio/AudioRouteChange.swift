/// The audio device went away or came back (AVAudioSession's route change notification).
public struct AudioRouteChange: Sendable, Hashable, CustomStringConvertible {
    public enum Reason: Sendable, Hashable {
        /// The device failed (unplugged, HDMI audio gone, sound server died); playback
        /// continues silently on the host clock.
        case oldDeviceUnavailable
        /// A device opened again (the configured one or the fallback); sound resumes.
        case newDeviceAvailable
    }

    public var reason: Reason
    /// The ALSA device playing before the change, if any.
    public var previousDevice: String?
    /// The ALSA device playing after the change, or `nil` while silent.
    public var currentDevice: String?
    /// Why the device failed, from alsa-lib, for `oldDeviceUnavailable`.
    public var detail: String?

    public init(reason: Reason, previousDevice: String?, currentDevice: String?, detail: String? = nil) {
        self.reason = reason
        self.previousDevice = previousDevice
        self.currentDevice = currentDevice
        self.detail = detail
    }

    public var description: String {
        switch reason {
        case .oldDeviceUnavailable:
            "audio device \(previousDevice ?? "?") unavailable\(detail.map { ": \($0)" } ?? ""); playing silently"
        case .newDeviceAvailable:
            "audio device \(currentDevice ?? "?") available again"
        }
    }
}
