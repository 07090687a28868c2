import Synchronization
import Threading

/// AVAudioSession's role on the appliance: what each player and recorder is, and what happens to
/// the music (and the recordings) when an announcement plays.
///
/// While an announcement plays, players in ``Category/backgroundMusic`` (and the
/// soundtrack inputs registered with ``duck(_:)``) either duck to ``duckLevel`` with the
/// mixer's ramp or pause; when the last announcement ends they are restored. Recorders registered
/// with ``register(_:)-(AudioRecorder)`` hear of it on their ``AudioRecorder/events``; one in
/// ``Category/record`` pauses for it (so the screen's own announcement is not recorded) and resumes
/// after it, one in ``Category/playAndRecord`` records through it. Each change is posted on
/// ``interruptions``.
public final class AudioSession: Sendable {
    /// What a source is.
    public enum Category: Sendable, Hashable {
        /// A video's own sound.
        case soundtrack
        /// Music beds and loops: ducked or paused by announcements.
        case backgroundMusic
        /// Spoken messages and chimes that interrupt the music.
        case announcement
        /// A recorder that listens while nothing of its own plays: paused during interruptions.
        case record
        /// A recorder that keeps recording while the session plays (announcements included).
        case playAndRecord
    }

    /// What announcements do to the music.
    public enum InterruptionPolicy: Sendable, Hashable {
        /// Lower the music to ``AudioSession/duckLevel`` and keep it playing.
        case duck
        /// Pause the music; resume it afterwards.
        case pause
    }

    /// An interruption of the music (AVAudioSession's interruption notification).
    public enum Interruption: Sendable, Hashable {
        case began
        /// The interruption ended; `shouldResume` says whether the music was set going again.
        case ended(shouldResume: Bool)
    }

    public let policy: InterruptionPolicy
    /// The music's gain during announcements (0.2 ≈ −14 dB).
    public let duckLevel: Float
    /// Whether music paused by an announcement resumes when it ends.
    public let resumesAfterInterruption: Bool

    private struct State {
        var music: [AudioPlayer] = []
        var soundtracks: [MixerInput] = []
        var recorders: [AudioRecorder] = []
        var activeAnnouncements = 0
    }
    private let state = LockedValue(State())
    /// The subscribers of ``interruptions``.
    private let interruptionStreams = EventStreams<Interruption>(buffering: 16)

    public init(policy: InterruptionPolicy = .duck, duckLevel: Float = 0.2, resumesAfterInterruption: Bool = true) {
        self.policy = policy
        self.duckLevel = min(1, max(0, duckLevel))
        self.resumesAfterInterruption = resumesAfterInterruption
    }

    /// Puts a music player under the session's control.
    public func register(_ player: AudioPlayer) {
        guard player.category == .backgroundMusic else { return }
        state.withLock { $0.music.append(player) }
        if policy == .duck { player.setDuckedLevel(duckLevel) }
    }

    /// Tells a recorder of the session's interruptions (it pauses for them in ``Category/record``).
    public func register(_ recorder: AudioRecorder) {
        state.withLock { $0.recorders.append(recorder) }
    }

    /// Ducks a soundtrack input too during announcements.
    public func duck(_ soundtrack: MixerInput) {
        state.withLock { $0.soundtracks.append(soundtrack) }
        soundtrack.setDuckedLevel(duckLevel)
    }

    /// Plays an announcement: interrupts the music, and restores it when the announcement
    /// has played. With ``InterruptionPolicy/duck`` the mixer itself ducks and restores the
    /// music around the announcement's samples; the events follow what was heard.
    public func playAnnouncement(_ announcement: AudioPlayer) {
        begin()
        announcement.setDucksOthers(true)
        announcement.setFinishHandler { [weak self] _ in self?.end() }
        announcement.play()
    }

    /// Interrupts the music by hand (an external announcement); pair with ``endInterruption()``.
    public func beginInterruption() {
        if let output = state.withLock({ $0.music.first?.output ?? $0.soundtracks.first?.output }) {
            output.shared.withLock { $0.interruptionCount += 1 }
        }
        begin()
    }

    /// Ends an interruption begun with ``beginInterruption()``.
    public func endInterruption() {
        if let output = state.withLock({ $0.music.first?.output ?? $0.soundtracks.first?.output }) {
            output.shared.withLock { $0.interruptionCount = max(0, $0.interruptionCount - 1) }
        }
        end()
    }

    private func begin() {
        let (first, music, recorders) = state.withLock { state in
            state.activeAnnouncements += 1
            return (state.activeAnnouncements == 1, state.music, state.recorders)
        }
        guard first else { return }
        if policy == .pause {
            for player in music { player.setInterrupted(true) }
        }
        for recorder in recorders { recorder.interruptionBegan() }
        interruptionStreams.yield(.began)
    }

    private func end() {
        let (last, music, recorders) = state.withLock { state in
            state.activeAnnouncements = max(0, state.activeAnnouncements - 1)
            return (state.activeAnnouncements == 0, state.music, state.recorders)
        }
        guard last else { return }
        let resume = policy == .duck || resumesAfterInterruption
        if policy == .pause, resume {
            for player in music { player.setInterrupted(false) }
        }
        // A paused recording resumes with the music's rule: what the session would resume, it does.
        for recorder in recorders { recorder.interruptionEnded(shouldResume: resumesAfterInterruption) }
        interruptionStreams.yield(.ended(shouldResume: resume))
    }

    /// Interruption events from now on.
    public var interruptions: AsyncStream<Interruption> { interruptionStreams.makeStream() }
}
