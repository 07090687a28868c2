import MediaAsset
public import MediaTime
import Synchronization
public import MediaSinks
import Threading

/// Why an ``AudioPlayer`` could not be made.
public enum AudioPlayerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file or data could not be decoded (FFmpeg's reason included).
    case undecodable(MediaError)

    public var description: String {
        switch self {
        case .undecodable(let error): "cannot play audio: \(error)"
        }
    }
}

/// Plays a sound file through an ``ALSAOutput`` (AVAudioPlayer's role: background music,
/// jingles, announcements), mixed with the video's soundtrack and other players.
///
/// The track is decoded once, in full, to the output's format; the audio thread reads it
/// directly, so loops are seamless at sample precision and ``play(atTime:)`` starts several
/// players on the same device frame.
public final class AudioPlayer: Sendable {
    /// The output this player mixes into.
    public let output: ALSAOutput
    /// The track's length.
    public let duration: MediaTime
    /// What the player is, for the ``AudioSession`` (ducking and interruptions).
    public let category: AudioSession.Category
    private let clip: SharedSamples
    /// The decoded track at its own tempo, kept for ``rate`` changes.
    private let original: DecodedAudio
    private let state: LockedValue<PlayerState>

    private struct PlayerState {
        var inputID: Int?
        var numberOfLoops = 0
        var rate: Float = 1
        var isPlaying = false
        var finishHandler: (@Sendable (_ successfully: Bool) -> Void)?
    }

    /// Decodes the file at `path` for `output`.
    public convenience init(contentsOf path: String, output: ALSAOutput, category: AudioSession.Category = .backgroundMusic) throws(AudioPlayerError) {
        do {
            let decoded = try AudioFileDecoder.decode(
                path: path, sampleRate: output.format.sampleRate, channelCount: output.format.channelCount)
            self.init(decoded: decoded, output: output, category: category)
        } catch {
            throw .undecodable(error)
        }
    }

    /// Decodes a file held in memory for `output`.
    public convenience init(data: [UInt8], output: ALSAOutput, category: AudioSession.Category = .backgroundMusic) throws(AudioPlayerError) {
        do {
            let decoded = try AudioFileDecoder.decode(
                data: data, sampleRate: output.format.sampleRate, channelCount: output.format.channelCount)
            self.init(decoded: decoded, output: output, category: category)
        } catch {
            throw .undecodable(error)
        }
    }

    init(decoded: DecodedAudio, output: ALSAOutput, category: AudioSession.Category) {
        self.output = output
        self.category = category
        original = decoded
        clip = SharedSamples(samples: decoded.samples, channelCount: decoded.channelCount)
        duration = MediaTime(value: Int64(decoded.frameCount), timescale: Int32(decoded.sampleRate))
        state = LockedValue(PlayerState())
    }

    deinit {
        if let id = state.withLock({ $0.inputID }) { output.removeInput(id) }
    }

    /// Joins the output's mixer (paused) so ``play()`` starts without delay. Returns `true`.
    @discardableResult
    public func prepareToPlay() -> Bool {
        _ = ensureInput()
        return true
    }

    private func ensureInput() -> Int {
        state.withLock { state in
            if let id = state.inputID { return id }
            var cursor = ClipCursor(clip: clip)
            cursor.loopsRemaining = state.numberOfLoops
            let id = output.addInput(label: "player", source: .clip(cursor), isStarted: false)
            state.inputID = id
            output.shared.withLock { shared in
                shared.finishHandlers[id] = { [weak self] in self?.didFinish() }
            }
            return id
        }
    }

    private func didFinish() {
        let handler = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            state.isPlaying = false
            return state.finishHandler
        }
        if let id = state.withLock({ $0.inputID }) {
            output.withInput(id) { input in
                input.isStarted = false
                if case .clip(var cursor) = input.source {
                    cursor.position = 0
                    cursor.finished = false
                    input.source = .clip(cursor)
                }
            }
        }
        handler?(true)
    }

    /// Starts (or resumes) playing now.
    @discardableResult
    public func play() -> Bool { start(atDeviceFrame: nil) }

    /// Starts playing when the output's ``ALSAOutput/deviceTime`` reaches `time`: players
    /// given the same time start on the same sample.
    @discardableResult
    public func play(atTime time: MediaTime) -> Bool {
        let frame = time.convertScale(Int32(output.format.sampleRate), method: .roundHalfAwayFromZero).value
        return start(atDeviceFrame: frame)
    }

    private func start(atDeviceFrame frame: Int64?) -> Bool {
        let id = ensureInput()
        let loops = state.withLock { state in
            state.isPlaying = true
            return state.numberOfLoops
        }
        let started: Bool? = output.withInput(id) { input in
            if case .clip(var cursor) = input.source {
                if cursor.finished {
                    cursor.position = 0
                    cursor.finished = false
                }
                cursor.loopsRemaining = loops
                input.source = .clip(cursor)
            }
            input.startDeviceFrame = frame
            input.isStarted = true
            input.isPaused = false
            return true
        }
        return started ?? false
    }

    /// Pauses; ``play()`` resumes from the same sample.
    public func pause() {
        guard let id = state.withLock({ state -> Int? in
            state.isPlaying = false
            return state.inputID
        }) else { return }
        output.withInput(id) { $0.isPaused = true }
    }

    /// Stops playing and leaves the mixer; ``currentTime`` is kept, as with AVAudioPlayer.
    public func stop() {
        pause()
    }

    /// Whether the player is playing (or scheduled to).
    public var isPlaying: Bool { state.withLock { $0.isPlaying } }

    /// The position heard now (or the position playback will start from).
    public var currentTime: MediaTime {
        get {
            let rate = output.format.sampleRate
            guard let id = state.withLock({ $0.inputID }) else { return .zero }
            let now = MonotonicClock.nanosecondsNow()
            let tempo = Double(self.rate)  // read before the output's lock: the player's lock comes first
            return output.shared.withLock { shared in
                guard let index = shared.inputIndex(id) else { return .zero }
                let heard = shared.heardFrame(atHostNanos: now)
                if let time = shared.inputs[index].mediaTime(atDeviceFrame: heard, sampleRate: rate) {
                    return tempo == 1 ? time : time.multiplied(by: tempo)
                }
                if case .clip(let cursor) = shared.inputs[index].source {
                    return MediaTime(value: Int64((Double(cursor.position) * tempo).rounded()), timescale: Int32(rate))
                }
                return .zero
            }
        }
        set {
            let rate = output.format.sampleRate
            let id = ensureInput()
            let frame = Int(Double(max(0, newValue.convertScale(Int32(rate)).value)) / Double(self.rate))
            output.withInput(id) { input in
                if case .clip(var cursor) = input.source {
                    cursor.position = min(frame, max(0, cursor.clip.frameCount - 1))
                    cursor.finished = false
                    input.source = .clip(cursor)
                }
                input.segments.removeAll()
                input.heardTail = nil
            }
        }
    }

    /// The output's device clock, for ``play(atTime:)`` (AVAudioPlayer's `deviceCurrentTime`).
    public var deviceCurrentTime: MediaTime { output.deviceTime }

    /// Further passes after the first: 0 plays once, n plays n + 1 times, −1 loops until stopped.
    public var numberOfLoops: Int {
        get { state.withLock { $0.numberOfLoops } }
        set {
            let id = state.withLock { state -> Int? in
                state.numberOfLoops = max(-1, newValue)
                return state.inputID
            }
            if let id {
                output.withInput(id) { input in
                    if case .clip(var cursor) = input.source {
                        cursor.loopsRemaining = max(-1, newValue)
                        input.source = .clip(cursor)
                    }
                }
            }
        }
    }

    /// Playback speed, 0.5 … 2.0, with the pitch kept (libavfilter's atempo). The track is
    /// re-rendered at the new tempo when this changes; the position carries over.
    public var rate: Float {
        get { state.withLock { $0.rate } }
        set {
            let newRate = min(2, max(0.5, newValue))
            let oldRate = state.withLock { $0.rate }
            guard newRate != oldRate else { return }
            let stretched: DecodedAudio
            do {
                stretched = try original.changingTempo(by: Double(newRate))
            } catch {
                ALSAOutput.logger.warning("cannot change the playback rate to \(newRate): \(error)")
                return
            }
            let newClip = SharedSamples(samples: stretched.samples, channelCount: stretched.channelCount)
            let id = ensureInput()
            state.withLock { $0.rate = newRate }
            output.withInput(id) { input in
                if case .clip(var cursor) = input.source {
                    let mediaFrame = Double(cursor.position) * Double(oldRate)
                    cursor.clip = newClip
                    cursor.position = min(max(0, newClip.frameCount - 1), Int(mediaFrame / Double(newRate)))
                    input.source = .clip(cursor)
                }
                input.segments.removeAll()
                input.heardTail = nil
            }
        }
    }

    /// Called when the last sample has been heard (not when stopped).
    public func setFinishHandler(_ handler: (@Sendable (_ successfully: Bool) -> Void)?) {
        state.withLock { $0.finishHandler = handler }
    }

    /// Volume 0…1, ramped.
    public var volume: Float {
        get { output.withInput(ensureInput()) { $0.volume } ?? 0 }
        set { output.withInput(ensureInput()) { $0.volume = min(1, max(0, newValue)) } }
    }

    /// Balance −1 … 1, ramped.
    public var pan: Float {
        get { output.withInput(ensureInput()) { $0.pan } ?? 0 }
        set { output.withInput(ensureInput()) { $0.pan = min(1, max(-1, newValue)) } }
    }

    /// Whether levels are measured every period.
    public var isMeteringEnabled: Bool {
        get { output.withInput(ensureInput()) { $0.isMeteringEnabled } ?? false }
        set { output.withInput(ensureInput()) { $0.isMeteringEnabled = newValue } }
    }

    /// Makes the last period's levels visible.
    public func updateMeters() { output.withInput(ensureInput()) { $0.meter.publish() } }
    /// RMS level of the last measured period, in dBFS (−160 … 0).
    public func averagePower(forChannel channel: Int) -> Float {
        output.withInput(ensureInput()) { $0.meter.averagePower.indices.contains(channel) ? $0.meter.averagePower[channel] : LevelMeter.floor }
            ?? LevelMeter.floor
    }
    /// Peak level of the last measured period, in dBFS (−160 … 0).
    public func peakPower(forChannel channel: Int) -> Float {
        output.withInput(ensureInput()) { $0.meter.peakPower.indices.contains(channel) ? $0.meter.peakPower[channel] : LevelMeter.floor }
            ?? LevelMeter.floor
    }

    /// Makes this player duck to `level` while announcements play (`nil`: never).
    func setDuckedLevel(_ level: Float?) {
        output.withInput(ensureInput()) {
            $0.duckedLevel = level
            if level == nil { $0.duckLevel = 1 }
        }
    }

    /// Marks this player as an announcement that ducks the others while it plays.
    func setDucksOthers(_ ducks: Bool) {
        output.withInput(ensureInput()) { $0.ducksOthers = ducks }
    }

    /// Pauses or resumes for an interruption without changing ``isPlaying``'s intent.
    func setInterrupted(_ interrupted: Bool) {
        output.withInput(ensureInput()) { $0.isPaused = interrupted }
    }
}
