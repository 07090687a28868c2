public import MediaAsset
import MediaSinks
public import MediaTime
import Logging
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Records from an ALSA capture device to a WAV, FLAC or M4A (AAC) file (AVAudioRecorder's role):
/// a screen that listens to its room, a test that checks what a microphone hears.
///
/// ``prepareToRecord()`` opens the device in the ``settings``' rate and channel count (the sample
/// format is whichever of S16, S32 or float the device offers, converted to the file's bit depth),
/// creates the file and starts the capture thread (`vitrine-audio-in`), which owns the PCM and the
/// file from then on; ``record()`` starts writing. A device that does not offer the settings is an
/// error saying what it refused and what it offers.
///
/// Times are host times on the `MonotonicClock` (``deviceCurrentTime``), the timeline the rest of
/// the engine uses: ``record(atTime:)`` writes the frames captured from that moment on, each frame
/// stamped with when it reached the device (from `snd_pcm_delay`, or from real time for plugins
/// that deliver at once). ``pause()`` and ``record()`` cut at the frames captured at those moments,
/// so the file has neither a gap nor a repeated frame at a pause.
///
/// When the device goes away (a USB microphone unplugged, a sound server gone) the recording ends:
/// the file is finished with what was captured and is playable, and ``events`` reports the route
/// change, then ``AudioRecorderEvent/finished(successfully:)`` with `false`.
///
/// ```swift
/// let recorder = try AudioRecorder(path: "/tmp/room.flac", settings: .init(format: .flac))
/// try recorder.record(forDuration: MediaTime(value: 60, timescale: 1))
/// for await event in recorder.events { if case .finished = event { break } }
/// ```
public final class AudioRecorder: Sendable {
    /// What to record: the file's format, rate, channels, bit depth and quality (AVAudioRecorder's settings).
    public struct Settings: Sendable, Hashable {
        public var format: AudioFileFormat
        public var sampleRate: Int
        public var channelCount: Int
        /// 16 or 24 bits per sample (WAV and FLAC keep them exactly; AAC encodes from them).
        public var bitDepth: Int
        public var quality: AudioQuality

        public init(format: AudioFileFormat = .wav, sampleRate: Int = 48_000, channelCount: Int = 2, bitDepth: Int = 16,
                    quality: AudioQuality = .medium) {
            self.format = format
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.bitDepth = bitDepth
            self.quality = quality
        }

        /// Checks values no device is asked about.
        public func validate() throws(AudioCaptureError) {
            guard [16, 24].contains(bitDepth) else { throw .invalidSettings("the bit depth must be 16 or 24, not \(bitDepth)") }
            guard (1...8).contains(channelCount) else { throw .invalidSettings("the channel count must be 1 to 8, not \(channelCount)") }
            guard (8_000...384_000).contains(sampleRate) else {
                throw .invalidSettings("the sample rate must be 8000 to 384000 Hz, not \(sampleRate)")
            }
            if format == .m4a, sampleRate > 96_000 {
                throw .invalidSettings("AAC records at most 96000 Hz, not \(sampleRate)")
            }
        }

        /// Device sample formats in the order tried: the one that holds the bit depth without loss first.
        var deviceFormats: [DeviceSampleFormat] { bitDepth == 16 ? [.s16, .s32, .float32] : [.s32, .float32, .s16] }
    }

    static let logger = Logger(label: "vitrine.audio.capture")

    /// The file, replaced by each new recording.
    public let path: String
    public let settings: Settings
    public let configuration: AudioCaptureConfiguration
    /// ``AudioSession/Category/record`` (paused by the session's interruptions) or
    /// ``AudioSession/Category/playAndRecord`` (records through them).
    public let category: AudioSession.Category

    private struct State {
        var session: CaptureSession?
        var isMeteringEnabled = false
        /// Paused by an interruption (not by ``pause()``): resumed when it ends.
        var isPausedByInterruption = false
    }
    private let state: LockedValue<State>
    /// The subscribers of ``events``.
    private let eventStreams = EventStreams<AudioRecorderEvent>(buffering: 32)

    /// A recorder for `path` (nothing is opened or created until ``prepareToRecord()`` or ``record()``).
    ///
    /// - Throws: ``AudioCaptureError/invalidSettings(_:)`` for settings no file can hold.
    public init(path: String, settings: Settings = Settings(), configuration: AudioCaptureConfiguration = AudioCaptureConfiguration(),
                category: AudioSession.Category = .record) throws(AudioCaptureError) {
        try settings.validate()
        self.path = path
        self.settings = settings
        self.configuration = configuration
        self.category = category == .playAndRecord ? .playAndRecord : .record
        state = LockedValue(State())
    }

    deinit {
        // The file is finished with what was captured; nobody is left to tell.
        state.withLock { $0.session }?.end()
    }

    // MARK: Recording

    /// Opens the device, creates the file and starts capturing (nothing is written until
    /// ``record()``). A recording that ended (stopped, its duration reached, its device gone) is
    /// replaced by a new one. Does nothing while one is prepared or recording.
    public func prepareToRecord() throws(AudioCaptureError) {
        _ = try activeSession()
    }

    private func activeSession() throws(AudioCaptureError) -> CaptureSession {
        let previous = state.withLock { $0.session }
        if let previous, !previous.isFinished { return previous }
        previous?.join()
        let settings = self.settings
        let path = self.path
        let session = try CaptureSession(
            configuration: configuration, sampleRate: settings.sampleRate, channelCounts: [settings.channelCount],
            candidates: settings.deviceFormats, exactRate: true, waitsForDevice: false, reopensDevice: false,
            makeWriter: { format throws(MediaError) in
                try AudioFileWriter(path: path, format: settings.format, sampleRate: format.sampleRate,
                                    channelCount: format.channelCount, bitDepth: settings.bitDepth, quality: settings.quality)
            },
            post: { [weak self] event in self?.deliver(event) })
        let metering = state.withLock { state in
            state.session = session
            state.isPausedByInterruption = false
            return state.isMeteringEnabled
        }
        session.shared.withLock { $0.isMeteringEnabled = metering }
        Self.logger.info("recording \(path) from \(configuration.deviceName): \(session.shared.withLock { $0.deviceFormat })")
        return session
    }

    /// Starts (or resumes) recording now: the frames captured from this moment on go into the file.
    public func record() throws(AudioCaptureError) {
        try record(from: MonotonicClock.nanosecondsNow(), frames: nil)
    }

    /// Starts recording the frames captured from host time `time` (``deviceCurrentTime``'s clock)
    /// on; until then the device is captured but nothing is written. A time already past starts now.
    public func record(atTime time: MediaTime) throws(AudioCaptureError) {
        try record(from: max(time.nanoseconds, MonotonicClock.nanosecondsNow()), frames: nil)
    }

    /// Records `duration` of audio from now, then stops by itself (``events`` says
    /// ``AudioRecorderEvent/finished(successfully:)``). The file holds exactly that many frames;
    /// a pause in between does not count.
    public func record(forDuration duration: MediaTime) throws(AudioCaptureError) {
        try record(from: MonotonicClock.nanosecondsNow(), frames: frames(in: duration))
    }

    /// Records `duration` of audio captured from host time `time` on, then stops by itself.
    public func record(atTime time: MediaTime, forDuration duration: MediaTime) throws(AudioCaptureError) {
        try record(from: max(time.nanoseconds, MonotonicClock.nanosecondsNow()), frames: frames(in: duration))
    }

    private func frames(in duration: MediaTime) -> Int64 {
        max(0, duration.convertScale(Int32(settings.sampleRate), method: .roundHalfAwayFromZero).value)
    }

    private func record(from time: Int64, frames: Int64?) throws(AudioCaptureError) {
        let session = try activeSession()
        session.shared.withLock { $0.plan.record(from: time, frames: frames) }
        state.withLock { $0.isPausedByInterruption = false }
    }

    /// Stops writing: frames captured from now on are left out until ``record()``, and the file
    /// stays open. The device keeps capturing (and metering).
    public func pause() {
        guard let session = state.withLock({ $0.session }) else { return }
        let now = MonotonicClock.nanosecondsNow()
        session.shared.withLock { $0.plan.pause(at: now) }
    }

    /// Ends the recording: the frames captured until now are written, the file is finished and
    /// closed, the device is closed. Returns when the file is complete (about one period later).
    /// The next ``record()`` starts a new file.
    public func stop() {
        guard let session = state.withLock({ $0.session }) else { return }
        let now = MonotonicClock.nanosecondsNow()
        session.shared.withLock { $0.plan.stop(at: now) }
        session.shared.broadcast()
        session.join()
    }

    /// Removes the file, when no recording is running (AVAudioRecorder's `deleteRecording()`).
    /// Returns whether a file was removed.
    @discardableResult
    public func deleteRecording() -> Bool {
        if let session = state.withLock({ $0.session }), !session.isFinished { return false }
        return unlink(path) == 0
    }

    /// Whether frames are being written now: recording has begun (its start time reached) and is
    /// neither paused, stopped nor over.
    public var isRecording: Bool {
        guard let session = state.withLock({ $0.session }) else { return false }
        let now = MonotonicClock.nanosecondsNow()
        return session.shared.withLock { !$0.isFinished && $0.plan.isRecording(at: now) }
    }

    /// How much audio the file holds so far (written within one period of its capture); after the
    /// recording ended, the file's length.
    public var currentTime: MediaTime {
        guard let session = state.withLock({ $0.session }) else { return .zero }
        return session.shared.withLock { MediaTime(value: $0.framesRecorded, timescale: Int32($0.deviceFormat.sampleRate)) }
    }

    /// The host clock ``record(atTime:)`` is on: `MonotonicClock` now (AVAudioRecorder's `deviceCurrentTime`).
    public var deviceCurrentTime: MediaTime { MonotonicClock().now() }

    /// The device's format while a recording is prepared or running (the last one's after it ended).
    public var deviceFormat: DeviceFormat? { state.withLock { $0.session }?.shared.withLock { $0.deviceFormat } }

    /// Overruns recovered in the current recording: each lost the frames the device could not hold
    /// while the capture thread was late.
    public var overrunCount: Int { state.withLock { $0.session }?.shared.withLock { $0.overrunCount } ?? 0 }

    // MARK: Metering

    /// Whether each captured period is measured (also while prepared or paused, not recording).
    public var isMeteringEnabled: Bool {
        get { state.withLock { $0.isMeteringEnabled } }
        set {
            let session = state.withLock { state in
                state.isMeteringEnabled = newValue
                return state.session
            }
            session?.shared.withLock { $0.isMeteringEnabled = newValue }
        }
    }

    /// Makes the last measured period's levels visible to ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public func updateMeters() { state.withLock { $0.session }?.shared.withLock { $0.meter.publish() } }

    /// RMS level of the last measured period, in dBFS (−160 … 0): a full-scale sine is −3 dBFS.
    public func averagePower(forChannel channel: Int) -> Float {
        state.withLock { $0.session }?.shared.withLock { state in
            state.meter.averagePower.indices.contains(channel) ? state.meter.averagePower[channel] : LevelMeter.floor
        } ?? LevelMeter.floor
    }

    /// Peak level of the last measured period, in dBFS (−160 … 0).
    public func peakPower(forChannel channel: Int) -> Float {
        state.withLock { $0.session }?.shared.withLock { state in
            state.meter.peakPower.indices.contains(channel) ? state.meter.peakPower[channel] : LevelMeter.floor
        } ?? LevelMeter.floor
    }

    // MARK: Events

    /// What happens to the recording from now on: its end, encoding errors, the device going
    /// away, the session's interruptions. Ends when the recorder is released.
    public var events: AsyncStream<AudioRecorderEvent> { eventStreams.makeStream() }

    private func deliver(_ event: CaptureEvent) {
        let published: AudioRecorderEvent
        switch event {
        case .deviceLost(let change), .deviceAvailable(let change): published = .routeChange(change)
        case .encodeError(let error): published = .encodeError(error)
        case .finished(let successfully):
            published = .finished(successfully: successfully)
            Self.logger.info("recording \(path) \(successfully ? "finished" : "ended early"): \(currentTime.seconds) s")
        }
        post(published)
    }

    private func post(_ event: AudioRecorderEvent) {
        eventStreams.yield(event)
    }

    // MARK: The session's interruptions

    /// An interruption began: a ``AudioSession/Category/record`` recorder that is recording pauses.
    func interruptionBegan() {
        if category == .record, isRecording {
            pause()
            state.withLock { $0.isPausedByInterruption = true }
        }
        post(.interruption(.began))
    }

    /// The interruption ended: a recorder it paused resumes when `shouldResume`.
    func interruptionEnded(shouldResume: Bool) {
        let wasPaused = state.withLock { state in
            defer { state.isPausedByInterruption = false }
            return state.isPausedByInterruption
        }
        if wasPaused, shouldResume {
            do { try record() } catch { Self.logger.warning("recording \(path) cannot resume after an interruption: \(error)") }
        }
        post(.interruption(.ended(shouldResume: shouldResume)))
    }
}
