import Threading

/// Listens to a capture device without recording: how loud the room is, for the ambient volume
/// (``AmbientVolume``) and for anything else that only needs levels.
///
/// It opens the device in one channel if it offers that (else two) at the rate nearest 48 kHz, and
/// its capture thread (`vitrine-audio-in`) adds every period to a running sum that
/// ``takeLevel()`` hands out with the host times it covers. A device that goes away is tried
/// again every ``AudioCaptureConfiguration/reopenIntervalMilliseconds`` (``routeChanges`` says so);
/// with `waitsForDevice` one that is not there at the start is no error either: a missing
/// microphone never stops the show.
public final class AudioLevelMonitor: Sendable {
    public let configuration: AudioCaptureConfiguration
    private let session: CaptureSession
    private let routes = EventStreams<AudioRouteChange>(buffering: 16)

    /// Opens the device and starts listening.
    ///
    /// - Throws: ``AudioCaptureError`` naming the device (unless `waitsForDevice`: then only a
    ///   configuration text that does not parse, or a thread that cannot start).
    public init(configuration: AudioCaptureConfiguration, sampleRate: Int = 48_000, waitsForDevice: Bool = false) throws(AudioCaptureError) {
        self.configuration = configuration
        let routes = self.routes
        session = try CaptureSession(
            configuration: configuration, sampleRate: sampleRate, channelCounts: [1, 2], candidates: [.s16, .s32, .float32],
            exactRate: false, waitsForDevice: waitsForDevice, reopensDevice: true, makeWriter: { _ in nil },
            post: { event in
                let change: AudioRouteChange
                switch event {
                case .deviceLost(let lost): change = lost
                case .deviceAvailable(let available): change = available
                case .encodeError, .finished: return
                }
                routes.yield(change)
            })
        session.shared.withLock { $0.accumulatesLevel = true }
        if let reason = session.unavailableReason {
            AudioRecorder.logger.warning("no capture device yet, trying again every second: \(reason)")
        }
    }

    deinit { stop() }

    /// Why the device could not be opened at the start (with `waitsForDevice`), or `nil`.
    public var unavailableReason: AudioCaptureError? { session.unavailableReason }

    /// The device listened to now, or `nil` while it is gone.
    public var currentDeviceName: String? { session.shared.withLock { $0.currentDevice } }

    /// The device's format (or the one asked for while no device is open).
    public var deviceFormat: DeviceFormat { session.shared.withLock { $0.deviceFormat } }

    /// The level of everything captured since the last call (or the start), with the host times
    /// it covers; `nil` when nothing was captured (the device is gone, or the last call was less
    /// than a period ago).
    public func takeLevel() -> CapturedLevel? {
        session.shared.withLock { $0.accumulated.take() }
    }

    /// Stops listening and closes the device. Later calls do nothing.
    public func stop() {
        session.end()
        routes.finish()
    }

    /// The device going away and coming back, from now on until ``stop()``.
    public var routeChanges: AsyncStream<AudioRouteChange> { routes.makeStream() }

    // MARK: Metering

    /// Whether each period is also measured for ``averagePower(forChannel:)`` and ``peakPower(forChannel:)``.
    public var isMeteringEnabled: Bool {
        get { session.shared.withLock { $0.isMeteringEnabled } }
        set { session.shared.withLock { $0.isMeteringEnabled = newValue } }
    }

    /// Makes the last measured period's levels visible.
    public func updateMeters() { session.shared.withLock { $0.meter.publish() } }

    /// RMS level of the last measured period, in dBFS (−160 … 0).
    public func averagePower(forChannel channel: Int) -> Float {
        session.shared.withLock { $0.meter.averagePower.indices.contains(channel) ? $0.meter.averagePower[channel] : LevelMeter.floor }
    }

    /// Peak level of the last measured period, in dBFS (−160 … 0).
    public func peakPower(forChannel channel: Int) -> Float {
        session.shared.withLock { $0.meter.peakPower.indices.contains(channel) ? $0.meter.peakPower[channel] : LevelMeter.floor }
    }
}
