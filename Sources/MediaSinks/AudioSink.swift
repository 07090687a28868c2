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

    public init(samples: [Float], format: AudioFormat, presentationTime: MediaTime) {
        self.samples = samples
        self.format = format
        self.presentationTime = presentationTime
    }

    /// Samples per channel.
    public var frameCount: Int { format.channelCount == 0 ? 0 : samples.count / format.channelCount }
    /// `frameCount / sampleRate` as an exact time.
    public var duration: MediaTime { MediaTime(value: Int64(frameCount), timescale: Int32(format.sampleRate)) }
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
}

extension AudioSink {
    /// Ignores the handler: this sink never reports a fatal failure.
    public func setFailureHandler(_ handler: (@Sendable (MediaError) -> Void)?) {}
}

/// A sink that can tell how much audio it holds: lets the engine (and recording sinks in tests)
/// know whether the audio clock can run.
public protocol AudioSinkBufferLevel: AnyObject {
    /// Audio queued and not yet heard.
    var queuedDuration: MediaTime { get }
}

extension AudioBuffer {
    /// The samples that start before `time`: the buffer cut at the sample nearest `time` (all of
    /// it when it ends first, none when it starts at or after `time`).
    public func cut(at time: MediaTime) -> AudioBuffer {
        let kept = (time - presentationTime).convertScale(Int32(format.sampleRate)).value
        guard kept < Int64(frameCount) else { return self }
        let keptSamples = Int(max(0, kept)) * format.channelCount
        return AudioBuffer(samples: Array(samples.prefix(keptSamples)), format: format, presentationTime: presentationTime)
    }
}
