public import Threading

/// Why the audio output could not start.
public enum AudioOutputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// ALSA knows no PCM by that name (or the card does not exist).
    case unknownDevice(name: String, cause: ALSAError, availableDevices: [String])
    /// The PCM exists but could not be opened (busy, permissions, sound server down).
    case deviceUnavailable(name: String, cause: ALSAError)
    /// The PCM refused every sample format at the requested rate and channel count.
    case unsupportedFormat(name: String, sampleRate: Int, channelCount: Int, cause: ALSAError)
    /// The extra ALSA configuration text did not parse.
    case invalidConfiguration(cause: ALSAError)
    /// The audio thread could not be started (the process or system is out of threads).
    case threadUnavailable(ThreadStartError)

    public var description: String {
        switch self {
        case .unknownDevice(let name, let cause, let available):
            let list = available.isEmpty ? "none found" : available.joined(separator: ", ")
            return "unknown ALSA device \"\(name)\" (\(cause.message)); available PCMs: \(list). "
                + "Pass --audio-device NAME with one of them, or --no-audio to play without sound."
        case .deviceUnavailable(let name, let cause):
            return "cannot open ALSA device \"\(name)\": \(cause.message). Use --no-audio to play without sound."
        case .unsupportedFormat(let name, let rate, let channels, let cause):
            return "ALSA device \"\(name)\" accepts no S16/S32/float format at \(rate) Hz, \(channels) channels: \(cause.message)"
        case .invalidConfiguration(let cause):
            return "invalid ALSA configuration text: \(cause)"
        case .threadUnavailable(let cause):
            return "cannot start the audio thread: \(cause)"
        }
    }
}
