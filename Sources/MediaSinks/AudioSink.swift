public import MediaTime

/// The fixed PCM format of an audio sink: interleaved 32-bit float.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var channelCount: Int

    public init(sampleRate: Int = 48_000, channelCount: Int = 2) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    public var description: String { "\(sampleRate) Hz, \(channelCount) ch, f32" }
}

/// Interleaved float samples with the media time of the first one.
public struct AudioBuffer: Sendable {
    public var samples: [Float]
    public var format: AudioFormat
    /// Presentation time of the first sample, in the item's timeline.
    public var presentationTime: MediaTime
    /// The stretch of media time the samples cover, when it is not what they play for: sound
    /// resampled a little faster or slower to follow another clock covers its decoded frame's
    /// time in more or fewer samples. `nil`: ``playDuration``.
    private var coveredDuration: MediaTime?

    public init(samples: [Float], format: AudioFormat, presentationTime: MediaTime, duration: MediaTime? = nil) {
        self.samples = samples
        self.format = format
        self.presentationTime = presentationTime
        self.coveredDuration = duration
    }

    /// Samples per channel.
    public var frameCount: Int { format.channelCount == 0 ? 0 : samples.count / format.channelCount }
    /// How long the samples play: `frameCount / sampleRate` as an exact time.
    public var playDuration: MediaTime { MediaTime(value: Int64(frameCount), timescale: Int32(format.sampleRate)) }
    /// The media time the samples cover: the next buffer of the stream starts at
    /// `presentationTime + duration`. The same as ``playDuration`` unless the sound is resampled
    /// to follow another clock.
    public var duration: MediaTime { coveredDuration ?? playDuration }
}

/// Which media time the listener hears at which host time: the master clock's reading.
public struct AudioClockReading: Sendable, Hashable {
    /// The media time of the sample leaving the speaker at ``hostTime``.
    public var mediaTime: MediaTime
    /// Host time (``MonotonicClock`` timeline) of the reading.
    public var hostTime: MediaTime

    public init(mediaTime: MediaTime, hostTime: MediaTime) {
        self.mediaTime = mediaTime
        self.hostTime = hostTime
    }
}

/// Where decoded audio goes: an ALSA output's input stream, or a test's recording sink.
///
/// One sink is one stream into the output's mixer; it stays open across items so
/// transitions are gapless. The engine's audio thread is the only writer.
public protocol AudioSink: AnyObject, Sendable {
    /// The format ``enqueue(_:)`` expects.
    var format: AudioFormat { get }
    /// Appends samples, blocking while the sink's queue is full. Returns `false` once
    /// the sink is closed or flushed while waiting (the buffer was not queued).
    func enqueue(_ buffer: AudioBuffer) -> Bool
    /// The media time being heard now, or `nil` before the first sample plays
    /// (or while the device is gone: the engine then falls back to the display clock).
    func currentReading() -> AudioClockReading?
    /// Drops queued samples (seek, item change that is not gapless).
    func flush()
    /// Pauses or resumes output without dropping queued samples.
    func setPaused(_ paused: Bool)
    /// The stream's volume, 0...1, ramped by the sink to avoid clicks.
    func setVolume(_ volume: Float)
    /// Sets (or clears) what the sink calls, at most once, when it can no longer play at all
    /// (the device cannot be reopened): the player then fails (``Player/Status/failed``).
    /// Not for an underrun or a device that comes back (``currentReading()`` covers those).
    ///
    /// Optional: the default implementation ignores the handler (a sink that cannot fail).
    func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?)
    /// Shifts the queued sound in time so that media time `mediaTime` (the sink's timeline, as
    /// enqueued) is heard at host time `hostTime`, and every later sample at its offset from it:
    /// from the next sample the sink hands its device on, queued samples are dropped (the sound
    /// was behind) or silence is inserted (it was ahead). Samples already in the device play as
    /// they are. The engine calls it once a device that started late (a sound server still
    /// starting, a clocked device waking up) consumes, so sound joins the picture in sync instead
    /// of holding it back, and after a seek to a time pinned on the wall clock.
    ///
    /// Returns whether the sink will do it. Optional: the default implementation returns `false`,
    /// and the engine then lets the sound lead where it stands.
    func align(mediaTime: MediaTime, atHostTime hostTime: MediaTime) -> Bool
}

extension AudioSink {
    /// Ignores the handler: this sink never reports a fatal failure.
    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {}

    /// Cannot shift its sound: returns `false`.
    public func align(mediaTime: MediaTime, atHostTime hostTime: MediaTime) -> Bool { false }
}

/// A sink that can tell how much audio it holds: lets the engine (and recording sinks in tests)
/// know whether the audio clock can run.
public protocol AudioSinkBufferLevel: AnyObject {
    /// Audio queued and not yet heard.
    var queuedDuration: MediaTime { get }
    /// How much audio may be queued before ``AudioSink/enqueue(_:)`` blocks.
    var capacity: MediaTime { get }
}

extension AudioBuffer {
    /// The samples that start before `time`: the buffer cut at the sample nearest `time` (all of
    /// it when it ends first, none when it starts at or after `time`).
    public func cut(at time: MediaTime) -> AudioBuffer {
        guard time < presentationTime + duration else { return self }
        // In the samples' own pace when they were resampled: the cut keeps the covered fraction.
        let fraction = duration == playDuration ? nil : max(0, min(1, (time - presentationTime).seconds / max(duration.seconds, 1e-9)))
        let kept = fraction.map { Int64((Double(frameCount) * $0).rounded()) }
            ?? (time - presentationTime).convertScale(Int32(format.sampleRate)).value
        guard kept < Int64(frameCount) else { return self }
        let keptSamples = Int(max(0, kept)) * format.channelCount
        return AudioBuffer(samples: Array(samples.prefix(keptSamples)), format: format, presentationTime: presentationTime,
                           duration: fraction == nil ? nil : max(.zero, time - presentationTime))
    }
}
