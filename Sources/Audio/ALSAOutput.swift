internal import CALSA
public import MediaTime
import Logging
import Synchronization
import Threading
public import MediaSinks
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Sound through alsa-lib: one PCM, opened once in one fixed format and kept open across
/// items, fed by a mixer with any number of inputs (the engine's soundtrack, AudioPlayers).
///
/// A dedicated audio thread owns the PCM: every period it mixes the inputs (each with its
/// volume, pan, mute and ducking ramps), applies the master volume, converts to the device
/// format and writes. The position it reports is *frames written − `snd_pcm_delay`*,
/// stamped on the ``MonotonicClock``, so the engine can slave video to what is heard.
///
/// When the device fails (USB audio unplugged, HDMI audio gone, sound server died) the
/// thread closes it, posts an ``AudioRouteChange``, keeps consuming the inputs in real
/// time on the host clock (video does not freeze), and reopens the device, or the
/// configured fallback, once a second until one opens.
///
/// ```swift
/// let output = try ALSAOutput(configuration: .init(deviceName: "default"))
/// let soundtrack = output.makeInput(label: "soundtrack")   // an AudioSink for the engine
/// try output.start()
/// ```
public final class ALSAOutput: Sendable {
    /// How to open the device.
    public struct Configuration: Sendable, Hashable {
        /// Any ALSA PCM name: `default`, `hw:1,0`, `plughw:0,3`, `pulse`, or one defined in ``configurationText``.
        public var deviceName: String
        /// Tried after ``deviceName`` when the device fails and does not come back.
        public var fallbackDeviceName: String?
        /// ALSA configuration source merged over the system configuration before opening
        /// (for PCMs defined by the application, e.g. a file-plugin capture).
        public var configurationText: String?
        public var sampleRate: Int
        public var channelCount: Int
        /// The sample format tried first; the others are tried if the device refuses it.
        public var sampleFormat: DeviceSampleFormat
        /// The device buffer, at most 100 ms so controls and A/V sync stay responsive.
        public var latencyMicroseconds: Int
        /// How long volume, pan, mute and ducking changes take.
        public var rampMilliseconds: Int
        /// How many frames an input queues before ``AudioSink/enqueue(_:)`` blocks.
        public var inputQueueFrames: Int
        /// How often a lost device is tried again.
        public var reopenIntervalMilliseconds: Int
        /// How long a device may accept no samples before it counts as gone (a sound
        /// server can take a second or two to start consuming).
        public var stallTimeoutMilliseconds: Int
        /// How long a device just opened waits, not started, for its first sound before it starts
        /// with silence (so its clock runs): the first sample is then not queued behind a buffer
        /// of silence. A device with nothing to play starts this much later.
        public var firstSoundWaitMilliseconds: Int

        public init(
            deviceName: String = "default", fallbackDeviceName: String? = nil, configurationText: String? = nil,
            sampleRate: Int = 48_000, channelCount: Int = 2, sampleFormat: DeviceSampleFormat = .s16,
            latencyMicroseconds: Int = 100_000, rampMilliseconds: Int = 20, inputQueueFrames: Int? = nil,
            reopenIntervalMilliseconds: Int = 1_000, stallTimeoutMilliseconds: Int = 3_000,
            firstSoundWaitMilliseconds: Int = 500
        ) {
            self.deviceName = deviceName
            self.fallbackDeviceName = fallbackDeviceName
            self.configurationText = configurationText
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.sampleFormat = sampleFormat
            self.latencyMicroseconds = latencyMicroseconds
            self.rampMilliseconds = rampMilliseconds
            self.inputQueueFrames = inputQueueFrames ?? sampleRate / 4
            self.reopenIntervalMilliseconds = reopenIntervalMilliseconds
            self.stallTimeoutMilliseconds = stallTimeoutMilliseconds
            self.firstSoundWaitMilliseconds = firstSoundWaitMilliseconds
        }
    }

    public let configuration: Configuration
    /// The mixer's format: what every input's ``AudioSink/enqueue(_:)`` takes.
    public let format: AudioFormat
    let shared: ConditionLock<OutputState, StateChanged>
    private let thread: LockedValue<NamedThread?>
    private let initialDevice: LockedValue<PCMDevice?>
    /// For an output made with ``init(configuration:opensOnStart:)``: the audio thread opens the
    /// device and reports how that went here.
    private let openReport: (@Sendable (Result<DeviceFormat, AudioOutputError>) -> Void)?
    static let logger = Logger(label: "vitrine.audio")

    /// Opens the PCM and negotiates its format; call ``start()`` to begin playing.
    ///
    /// With `waitsForDevice`, a device that cannot be opened now (no sound card yet, HDMI audio that
    /// appears only once the screen is on, a USB speaker unplugged) is not an error: the output
    /// starts without it — its inputs are mixed and their clocks run on the host clock, in silence —
    /// tries the device again every ``Configuration/reopenIntervalMilliseconds``, and brings the
    /// sound in, in step with those clocks, when it opens (a route change says so). Why it could
    /// not be opened is in ``unavailableReason``. A configuration text that does not parse is an
    /// error either way.
    public convenience init(configuration: Configuration = Configuration(), waitsForDevice: Bool = false) throws(AudioOutputError) {
        let device: PCMDevice?
        var reason: AudioOutputError?
        do {
            device = try ALSAOutput.openDevice(named: configuration.deviceName, configuration: configuration)
        } catch {
            if case .invalidConfiguration = error { throw error }
            guard waitsForDevice else { throw error }
            device = nil
            reason = error
        }
        self.init(configuration: configuration, device: device, unavailableReason: reason, openReport: nil)
        if let device {
            ALSAOutput.logger.info("audio output \(device.name): \(device.format)")
        } else if let reason {
            ALSAOutput.logger.warning("no audio device yet, playing in silence and trying again: \(reason)")
        }
    }

    /// Makes the output without opening the device: the audio thread that ``start()`` starts opens
    /// it first, so the caller goes on at once — opening media, starting a display — instead of
    /// waiting for alsa-lib to read its configuration and load its plugins and for a sound server
    /// to answer (tens of milliseconds on the way to a player's first frame). Until the device is
    /// open the output's clock stands and its inputs queue, as for a device slow to start.
    ///
    /// `opened` is called on the audio thread with the outcome of that first open (the device's
    /// format, or why it could not be opened, an unknown name's error listing the PCMs there
    /// are). A device that cannot be opened is then handled as with `waitsForDevice`: the output
    /// plays in silence on the host clock and tries the device again every
    /// ``Configuration/reopenIntervalMilliseconds``. ``unavailableReason`` stays `nil`.
    public convenience init(
        configuration: Configuration = Configuration(), opensOnStart opened: @escaping @Sendable (Result<DeviceFormat, AudioOutputError>) -> Void
    ) {
        self.init(configuration: configuration, device: nil, unavailableReason: nil, openReport: opened)
    }

    private init(
        configuration: Configuration, device: PCMDevice?, unavailableReason: AudioOutputError?,
        openReport: (@Sendable (Result<DeviceFormat, AudioOutputError>) -> Void)?
    ) {
        self.configuration = configuration
        format = AudioFormat(sampleRate: configuration.sampleRate, channelCount: configuration.channelCount)
        let rampFrames = configuration.sampleRate * configuration.rampMilliseconds / 1000
        var state = OutputState(deviceFormat: device?.format ?? ALSAOutput.silentFormat(configuration), rampFrames: rampFrames)
        state.currentDevice = device?.name
        shared = ConditionLock(state)
        initialDevice = LockedValue(device)
        thread = LockedValue(nil)
        self.unavailableReason = unavailableReason
        self.openReport = openReport
    }

    /// Why the device could not be opened when the output was made (with `waitsForDevice`), or
    /// `nil` when it opened.
    public let unavailableReason: AudioOutputError?

    /// The format the silent clock runs in while no device is open: the one asked for, with a
    /// period of a quarter of the latency (what a device typically negotiates).
    static func silentFormat(_ configuration: Configuration) -> DeviceFormat {
        let buffer = max(64, configuration.sampleRate * configuration.latencyMicroseconds / 1_000_000)
        return DeviceFormat(sampleRate: configuration.sampleRate, channelCount: configuration.channelCount,
                            sampleFormat: configuration.sampleFormat, periodFrames: max(16, buffer / 4), bufferFrames: buffer)
    }

    deinit {
        stop()
        if let device = initialDevice.withLock({ $0.take() }) { device.close(drain: false) }
    }

    /// Opens `name`, translating alsa-lib's errors into ``AudioOutputError``. An unknown name's
    /// error lists the PCMs there are when `listsDevices` is set: that listing reads every
    /// configuration and plugin, far slower than the failed open, so the audio thread's retries
    /// (which only need to know whether the device is back) leave it out.
    static func openDevice(
        named name: String, configuration: Configuration, listsDevices: Bool = true
    ) throws(AudioOutputError) -> PCMDevice {
        do {
            return try PCMDevice.open(
                name: name, configurationText: configuration.configurationText, sampleRate: configuration.sampleRate,
                channelCount: configuration.channelCount, preferred: configuration.sampleFormat,
                latencyMicroseconds: configuration.latencyMicroseconds)
        } catch {
            switch error.function {
            case "snd_pcm_open" where [-ENOENT, -ENODEV, -ENXIO, -EINVAL].contains(error.code):
                throw .unknownDevice(
                    name: name, cause: error, availableDevices: listsDevices ? PCMDevice.availablePCMNames() : [])
            case "snd_pcm_open":
                throw .deviceUnavailable(name: name, cause: error)
            case "snd_pcm_set_params", "snd_pcm_get_params":
                throw .unsupportedFormat(
                    name: name, sampleRate: configuration.sampleRate, channelCount: configuration.channelCount, cause: error)
            default:
                throw .invalidConfiguration(cause: error)
            }
        }
    }

    /// The negotiated device format (of the device playing now, or the last one).
    public var deviceFormat: DeviceFormat { shared.withLock { $0.deviceFormat } }
    /// The ALSA device playing now, or `nil` while the device is gone and output is silent.
    public var currentDeviceName: String? { shared.withLock { $0.currentDevice } }
    /// Underruns (and suspends) recovered with `snd_pcm_recover` so far.
    public var xrunCount: Int { shared.withLock { $0.xrunCount } }

    /// Starts the audio thread, which owns the PCM from then on. Inputs may be created and filled
    /// before, so the first period already carries them. Starting a started output does nothing.
    public func start() throws(AudioOutputError) {
        let result: Result<Void, ThreadStartError> = thread.withLock { thread in
            guard thread == nil, !shared.withLock({ $0.isStopped }) else { return .success(()) }
            let device = initialDevice.withLock { $0 }
            let shared = self.shared
            let configuration = self.configuration
            let openReport = self.openReport
            shared.withLock { $0.isStarted = true }
            do throws(ThreadStartError) {
                thread = try NamedThread.start(name: "vitrine-audio-out") {
                    var audioThread = AudioThread(shared: shared, configuration: configuration, device: device, openReport: openReport)
                    audioThread.run()
                }
            } catch {
                shared.withLock { $0.isStarted = false }
                return .failure(error)
            }
            initialDevice.withLock { $0 = nil }
            return .success(())
        }
        if case .failure(let error) = result { throw .threadUnavailable(error) }
    }

    /// Stops the audio thread and closes the PCM; `drain` plays out what the device buffered.
    /// Blocked producers are released (their ``AudioSink/enqueue(_:)`` returns `false`).
    public func stop(drain: Bool = false) {
        guard let running = thread.withLock({ $0.take() }) else { return }
        shared.withLock {
            $0.stopRequested = true
            $0.drainOnStop = drain
        }
        shared.broadcast()
        running.join()
        let routes = shared.withLock { state in
            state.isStopped = true
            return state.routeStreams
        }
        shared.broadcast()
        routes.finish()
    }

    /// A new mixer input: an ``AudioSink`` in ``format`` that stays open across items.
    public func makeInput(label: String = "input") -> MixerInput {
        let id = addInput(label: label, source: .stream(StreamQueue()))
        return MixerInput(output: self, id: id)
    }

    func addInput(label: String, source: MixerSource, isStarted: Bool = true) -> Int {
        let id = shared.withLock { state in
            let id = state.nextInputID
            state.nextInputID += 1
            let rampFrames = configuration.sampleRate * configuration.rampMilliseconds / 1000
            var input = MixerInputState(
                id: id, label: label, source: source, channelCount: format.channelCount, rampFrames: rampFrames)
            input.isStarted = isStarted
            state.inputs.append(input)
            return id
        }
        return id
    }

    func removeInput(_ id: Int) {
        shared.withLock { state in
            state.inputs.removeAll { $0.id == id }
            state.finishHandlers[id] = nil
            state.pendingFinishes.removeAll { $0.inputID == id }
        }
        shared.broadcast()
    }

    /// Runs `body` on one input's state under the lock (`nil` once the input is removed),
    /// then wakes blocked producers so they see the change.
    @discardableResult
    func withInput<Result>(_ id: Int, _ body: (inout MixerInputState) -> Result) -> Result? {
        let result = shared.withLock { state -> Result? in
            guard let index = state.inputIndex(id) else { return nil }
            return body(&state.inputs[index])
        }
        shared.broadcast()
        return result
    }

    // MARK: Master stage

    /// The master volume, 0…1, ramped.
    public var masterVolume: Float {
        get { shared.withLock { $0.masterVolume } }
        set { shared.withLock { $0.masterVolume = min(1, max(0, newValue)) } }
    }

    /// Silences the whole output (ramped) without stopping the clock.
    public var isMuted: Bool {
        get { shared.withLock { $0.isMasterMuted } }
        set { shared.withLock { $0.isMasterMuted = newValue } }
    }

    /// Whether the mixed output is measured every period.
    public var isMeteringEnabled: Bool {
        get { shared.withLock { $0.isMeteringEnabled } }
        set { shared.withLock { $0.isMeteringEnabled = newValue } }
    }

    /// Makes the last period's levels visible to ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public func updateMeters() { shared.withLock { $0.meter.publish() } }
    /// RMS level of the mixed output's last measured period, in dBFS (−160 … 0).
    public func averagePower(forChannel channel: Int) -> Float {
        shared.withLock { $0.meter.averagePower.indices.contains(channel) ? $0.meter.averagePower[channel] : LevelMeter.floor }
    }
    /// Peak level of the mixed output's last measured period, in dBFS (−160 … 0).
    public func peakPower(forChannel channel: Int) -> Float {
        shared.withLock { $0.meter.peakPower.indices.contains(channel) ? $0.meter.peakPower[channel] : LevelMeter.floor }
    }

    // MARK: Silence

    /// Whether every mixed period is checked for sound, so ``heardSilenceStart()`` can tell since
    /// when the speaker has been silent. Turning it on counts everything mixed so far as sound.
    var tracksSilence: Bool {
        get { shared.withLock { $0.tracksSilence } }
        set {
            shared.withLock { state in
                if newValue, !state.tracksSilence { state.audibleEndFrame = state.framesWritten + Int64(state.deviceFormat.periodFrames) }
                state.tracksSilence = newValue
            }
        }
    }

    /// The host time (`MonotonicClock`) since which nothing audible has come out of the speaker —
    /// the gaps between items, silent passages, an empty mix — or `nil` while sound is coming out.
    /// Needs ``tracksSilence``.
    func heardSilenceStart() -> MediaTime? {
        let now = MonotonicClock.nanosecondsNow()
        return shared.withLock { $0.silenceStart(atHostNanos: now) }.map(MediaTime.nanoseconds)
    }

    // MARK: Clock and routes

    /// The device clock: frames heard so far as a time, advancing in real time while the
    /// output runs (AVAudioPlayer's `deviceCurrentTime`). ``AudioPlayer/play(atTime:)`` uses it.
    public var deviceTime: MediaTime {
        let now = MonotonicClock.nanosecondsNow()
        return shared.withLock { state in
            MediaTime(value: state.heardFrame(atHostNanos: now), timescale: Int32(state.deviceFormat.sampleRate))
        }
    }

    /// Route changes from now on, until the output stops.
    public var routeChanges: AsyncStream<AudioRouteChange> { shared.withLock { $0.routeStreams }.makeStream() }
}
