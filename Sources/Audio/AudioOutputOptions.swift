
/// The command line's audio choices (`vitrine play [--audio-device NAME] [--volume V] [--no-audio]`)
/// and the factory that turns them into the soundtrack sink the engine plays into.
public struct AudioOutputOptions: Sendable, Hashable {
    /// `--audio-device NAME`: any ALSA PCM name.
    public var deviceName: String
    /// `--volume V`: the master volume, 0…1.
    public var volume: Float
    /// `--no-audio`: play video only, paced by the display clock.
    public var isDisabled: Bool
    /// A device tried when the main one fails and does not come back.
    public var fallbackDeviceName: String?
    /// Start without a device that cannot be opened now and bring the sound in when it appears
    /// (see ``ALSAOutput/init(configuration:waitsForDevice:)``), instead of failing.
    public var waitsForDevice: Bool

    public init(deviceName: String = "default", volume: Float = 1, isDisabled: Bool = false, fallbackDeviceName: String? = nil,
                waitsForDevice: Bool = false) {
        self.deviceName = deviceName
        self.volume = volume
        self.isDisabled = isDisabled
        self.fallbackDeviceName = fallbackDeviceName
        self.waitsForDevice = waitsForDevice
    }

    /// Checks the values a user typed.
    public func validate() throws(AudioOptionsError) {
        guard volume.isFinite, (0...1).contains(volume) else { throw .volumeOutOfRange(volume) }
        guard !deviceName.isEmpty else { throw .emptyDeviceName }
    }
}

/// A value on the command line that cannot be used.
public enum AudioOptionsError: Error, Sendable, Hashable, CustomStringConvertible {
    case volumeOutOfRange(Float)
    case emptyDeviceName

    public var description: String {
        switch self {
        case .volumeOutOfRange(let volume): "--volume must be between 0 and 1 (got \(volume))"
        case .emptyDeviceName: "--audio-device needs an ALSA device name (e.g. default, hw:1,0, pulse)"
        }
    }
}

/// What ``ALSAOutput/open(_:)`` hands the player: the running output (for AudioPlayers,
/// the session and route changes) and the soundtrack's sink for the engine.
public struct AudioOutputSession: Sendable {
    public let output: ALSAOutput
    public let soundtrack: MixerInput
}

extension ALSAOutput {
    /// Opens and starts the output the options describe, or returns `nil` for `--no-audio`.
    /// Errors name the device, list the available PCMs and suggest `--no-audio`; with
    /// ``AudioOutputOptions/waitsForDevice`` a device that is not there is not an error (the
    /// output's ``ALSAOutput/unavailableReason`` says why it plays in silence for now).
    public static func open(_ options: AudioOutputOptions) throws(AudioOutputError) -> AudioOutputSession? {
        guard !options.isDisabled else { return nil }
        let output = try ALSAOutput(configuration: .init(
            deviceName: options.deviceName, fallbackDeviceName: options.fallbackDeviceName), waitsForDevice: options.waitsForDevice)
        return try session(starting: output, volume: options.volume)
    }

    /// Makes and starts the output the options describe without waiting for its device, or returns
    /// `nil` for `--no-audio`: the audio thread opens the device
    /// (``ALSAOutput/init(configuration:opensOnStart:)``) and calls `opened` with the outcome,
    /// while the caller opens its media and its display. A device that cannot be opened is handled
    /// as with ``AudioOutputOptions/waitsForDevice``, whatever that option says.
    public static func start(
        _ options: AudioOutputOptions, opened: @escaping @Sendable (Result<DeviceFormat, AudioOutputError>) -> Void
    ) throws(AudioOutputError) -> AudioOutputSession? {
        guard !options.isDisabled else { return nil }
        let output = ALSAOutput(
            configuration: .init(deviceName: options.deviceName, fallbackDeviceName: options.fallbackDeviceName), opensOnStart: opened)
        return try session(starting: output, volume: options.volume)
    }

    /// Sets `output`'s master volume, gives it the soundtrack's input and starts it.
    private static func session(starting output: ALSAOutput, volume: Float) throws(AudioOutputError) -> AudioOutputSession {
        output.masterVolume = volume
        let soundtrack = output.makeInput(label: "soundtrack")
        try output.start()
        return AudioOutputSession(output: output, soundtrack: soundtrack)
    }
}
