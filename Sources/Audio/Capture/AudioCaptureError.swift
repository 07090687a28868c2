public import MediaSinks
public import Threading

/// Why a recording or a level monitor could not start.
public enum AudioCaptureError: Error, Sendable, Hashable, CustomStringConvertible {
    /// ALSA knows no capture PCM by that name (or the card does not exist).
    case unknownDevice(name: String, cause: ALSAError, availableDevices: [String])
    /// The PCM exists but could not be opened (busy, permissions, sound server down).
    case deviceUnavailable(name: String, cause: ALSAError)
    /// The device does not offer what the settings ask for: each refused item, and what it offers.
    case unsupportedSettings(name: String, refused: [String], offers: DeviceCapabilities)
    /// The device refused the format while it was being set (after its parameters said it offers it).
    case formatRefused(name: String, cause: ALSAError)
    /// The settings themselves cannot be recorded (a bit depth or channel count out of range).
    case invalidSettings(String)
    /// The extra ALSA configuration text did not parse.
    case invalidConfiguration(cause: ALSAError)
    /// The file could not be created (its folder, its permissions, the encoder).
    case cannotCreateFile(MediaError)
    /// The capture thread could not be started (the process or system is out of threads).
    case threadUnavailable(ThreadStartError)

    public var description: String {
        switch self {
        case .unknownDevice(let name, let cause, let available):
            let list = available.isEmpty ? "none found" : available.joined(separator: ", ")
            return "unknown ALSA capture device \"\(name)\" (\(cause.message)); available PCMs: \(list)"
        case .deviceUnavailable(let name, let cause):
            return "cannot open ALSA capture device \"\(name)\": \(cause.message)"
        case .unsupportedSettings(let name, let refused, let offers):
            return "ALSA capture device \"\(name)\" refused \(refused.joined(separator: " and ")); it offers \(offers). "
                + "Ask for what it offers, or record through plughw:… (ALSA converts)"
        case .formatRefused(let name, let cause):
            return "ALSA capture device \"\(name)\" refused the format: \(cause)"
        case .invalidSettings(let reason):
            return "cannot record: \(reason)"
        case .invalidConfiguration(let cause):
            return "invalid ALSA configuration text: \(cause)"
        case .cannotCreateFile(let error):
            return "cannot record: \(error)"
        case .threadUnavailable(let cause):
            return "cannot start the capture thread: \(cause)"
        }
    }
}
