/// What the capture thread and the public API share, guarded by one lock (a leaf lock: nothing
/// else is taken while it is held).
struct CaptureState: Sendable {
    /// The format the device was opened in (the last device's while it is gone).
    var deviceFormat: DeviceFormat
    /// The device capturing now, or `nil` while it is gone.
    var currentDevice: String?

    /// Frames read from the device so far.
    var framesCaptured: Int64 = 0
    /// The host time (`MonotonicClock` nanoseconds) frame ``stampFrame`` was captured at.
    var stampFrame: Int64 = 0
    var stampHostNanos: Int64 = 0
    /// Whether the thread has read its first block (the clock above means something).
    var hasStamp = false
    /// Overruns (and suspends) recovered so far: each lost the frames the device could not hold.
    var overrunCount = 0

    /// Which frames go into the file (a recorder's take).
    var plan = RecordingPlan()
    /// Frames written to the file so far.
    var framesRecorded: Int64 = 0

    var isMeteringEnabled = false
    var meter: LevelMeter
    /// Whether every block is added to ``accumulated`` (an ``AudioLevelMonitor``).
    var accumulatesLevel = false
    var accumulated = LevelAccumulator()

    /// Asks the thread to end now (a monitor, or a recorder whose owner goes away).
    var stopRequested = false
    /// Set by the thread when it has ended: the file is finished (or failed) and the device closed.
    var isFinished = false

    init(deviceFormat: DeviceFormat, currentDevice: String?) {
        self.deviceFormat = deviceFormat
        self.currentDevice = currentDevice
        meter = LevelMeter(channelCount: deviceFormat.channelCount)
    }

    /// The host time of captured frame `frame`, from the latest stamp.
    func hostNanos(ofFrame frame: Int64) -> Int64 {
        stampHostNanos + (frame - stampFrame) * 1_000_000_000 / Int64(deviceFormat.sampleRate)
    }
}
