/// How to open a capture device, for an ``AudioRecorder`` or an ``AudioLevelMonitor``.
public struct AudioCaptureConfiguration: Sendable, Hashable {
    /// Any ALSA PCM name: `default`, `hw:1,0`, `plughw:CARD=Mic,DEV=0`, `pulse`, or one defined in
    /// ``configurationText``.
    public var deviceName: String
    /// ALSA configuration source merged over the system configuration before opening (for PCMs
    /// defined by the application, e.g. the file plugin reading capture data from a file).
    public var configurationText: String?
    /// The device buffer: how long the capture thread may be busy (encoding, a slow disk) before
    /// the device overruns. A quarter of it is the period, the unit the thread reads and meters.
    public var latencyMicroseconds: Int
    /// How long a device may deliver nothing before it counts as gone.
    public var stallTimeoutMilliseconds: Int
    /// How often a monitor tries a lost device again (a recorder ends its recording instead).
    public var reopenIntervalMilliseconds: Int

    public init(deviceName: String = "default", configurationText: String? = nil, latencyMicroseconds: Int = 200_000,
                stallTimeoutMilliseconds: Int = 3_000, reopenIntervalMilliseconds: Int = 1_000) {
        self.deviceName = deviceName
        self.configurationText = configurationText
        self.latencyMicroseconds = latencyMicroseconds
        self.stallTimeoutMilliseconds = stallTimeoutMilliseconds
        self.reopenIntervalMilliseconds = reopenIntervalMilliseconds
    }
}
