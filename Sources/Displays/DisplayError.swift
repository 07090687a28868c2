/// Why a display could not start, render or take a screenshot.
public enum DisplayError: Error, Sendable, Hashable, CustomStringConvertible {
    /// An EGL call failed: what was being done and EGL's error code.
    case egl(String, Int32)
    /// A GL call or shader failed: what and the driver's message.
    case gl(String)
    /// No usable display device: what was tried, each with its reason.
    case noDevice(tried: [String])
    /// Another process holds DRM master on the card.
    case drmMasterHeld(card: String)
    /// A DRM call failed: what was being done and `errno`'s text.
    case drm(String, String)
    /// The requested mode is not offered by the connector: the modes it offers.
    case modeUnavailable(requested: String, available: [String])
    /// A mode string that is not `WxH` or `WxH@Hz`.
    case invalidMode(String)
    /// The display was stopped (or never started) when asked to do something.
    case notRunning
    /// Nothing has been presented yet, so there is nothing to capture.
    case nothingPresented
    /// The screenshot could not be encoded.
    case encoding(String)

    public var description: String {
        switch self {
        case .egl(let what, let code): return "EGL: \(what) failed (error 0x\(String(code, radix: 16)))"
        case .gl(let message): return "GL: \(message)"
        case .noDevice(let tried):
            return "no usable display device (tried: \(tried.joined(separator: "; "))); use --display headless to render without a screen"
        case .drmMasterHeld(let card):
            return "\(card): another process holds DRM master (a display server or another player?); stop it or use --display headless"
        case .drm(let what, let reason): return "DRM: \(what) failed: \(reason)"
        case .modeUnavailable(let requested, let available):
            return "mode \(requested) is not available; available modes: \(available.joined(separator: ", "))"
        case .invalidMode(let text): return "invalid mode '\(text)': expected WxH or WxH@Hz, e.g. 1920x1080@60"
        case .notRunning: return "the display is not running"
        case .nothingPresented: return "nothing has been presented yet"
        case .encoding(let message): return "screenshot encoding failed: \(message)"
        }
    }
}
