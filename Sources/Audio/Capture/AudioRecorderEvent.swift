public import MediaSinks

/// What an ``AudioRecorder`` reports on ``AudioRecorder/events`` (AVAudioRecorder's delegate calls
/// and the session's notifications that concern it).
public enum AudioRecorderEvent: Sendable, Hashable, CustomStringConvertible {
    /// The recording ended by itself or was stopped, and the file is closed. `successfully` is
    /// false when it ended early: the device went away or writing failed (the file holds what was
    /// captured until then, finished and playable when the writing itself did not fail).
    case finished(successfully: Bool)
    /// Encoding or writing the file failed (a full disk, an I/O error); the recording ends.
    case encodeError(MediaError)
    /// The capture device went away (unplugged, sound server gone): the recording ends, with what
    /// was captured until then.
    case routeChange(AudioRouteChange)
    /// The ``AudioSession`` began or ended an interruption (an announcement). A recorder in
    /// ``AudioSession/Category/record`` pauses for it and, when told to, resumes after it.
    case interruption(AudioSession.Interruption)

    public var description: String {
        switch self {
        case .finished(let successfully): successfully ? "recording finished" : "recording ended early"
        case .encodeError(let error): "cannot write the recording: \(error)"
        case .routeChange(let change) where change.reason == .oldDeviceUnavailable:
            "capture device \(change.previousDevice ?? "?") unavailable\(change.detail.map { ": \($0)" } ?? "")"
        case .routeChange(let change): "capture device \(change.currentDevice ?? "?") available again"
        case .interruption(.began): "interruption began"
        case .interruption(.ended(let resume)): "interruption ended\(resume ? ", recording resumes" : "")"
        }
    }
}
