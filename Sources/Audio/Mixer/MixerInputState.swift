import MediaTime
import MediaSinks

/// A run of consecutive samples of one input that went to consecutive device frames:
/// how the input's media timeline maps onto the output's frame counter.
struct ClockSegment: Sendable {
    var deviceFrame: Int64
    var mediaTime: MediaTime
    var frameCount: Int

    func mediaTime(atDeviceFrame frame: Int64, sampleRate: Int) -> MediaTime {
        let offset = min(Int64(frameCount), max(0, frame - deviceFrame))
        return mediaTime + MediaTime(value: offset, timescale: Int32(sampleRate))
    }

    var endDeviceFrame: Int64 { deviceFrame + Int64(frameCount) }
}

/// Immutable decoded samples shared between an ``AudioPlayer`` and the audio thread.
final class SharedSamples: Sendable {
    let samples: [Float]
    let channelCount: Int
    var frameCount: Int { samples.count / channelCount }

    init(samples: [Float], channelCount: Int) {
        self.samples = samples
        self.channelCount = channelCount
    }
}

/// Where an input's samples come from.
enum MixerSource: Sendable {
    /// Buffers pushed by a producer (the engine's soundtrack).
    case stream(StreamQueue)
    /// A decoded clip the mixer reads directly, looping at sample precision (an AudioPlayer).
    case clip(ClipCursor)
}

/// The FIFO behind an ``AudioSink``.
struct StreamQueue: Sendable {
    var buffers: [AudioBuffer] = []
    var headIndex = 0
    /// Frames already consumed from `buffers[headIndex]`.
    var headOffset = 0
    var queuedFrames = 0

    mutating func append(_ buffer: AudioBuffer) {
        guard buffer.frameCount > 0 else { return }
        buffers.append(buffer)
        queuedFrames += buffer.frameCount
    }

    mutating func removeAll() {
        buffers.removeAll(keepingCapacity: true)
        headIndex = 0
        headOffset = 0
        queuedFrames = 0
    }

    /// The media time of the next sample to render, if any is queued.
    func headTime(sampleRate: Int) -> MediaTime? {
        guard headIndex < buffers.count else { return nil }
        return buffers[headIndex].presentationTime + MediaTime(value: Int64(headOffset), timescale: Int32(sampleRate))
    }

    /// Drops up to `frames` frames from the head; returns how many were dropped.
    mutating func drop(frames: Int) -> Int {
        var dropped = 0
        while dropped < frames, headIndex < buffers.count {
            let take = min(frames - dropped, buffers[headIndex].frameCount - headOffset)
            dropped += take
            headOffset += take
            queuedFrames -= take
            if headOffset == buffers[headIndex].frameCount {
                headIndex += 1
                headOffset = 0
            }
        }
        return dropped
    }

    /// Copies up to `frames` frames to `destination`, recording where each run's media time lands.
    mutating func render(
        into destination: UnsafeMutablePointer<Float>, frames: Int, channels: Int, firstDeviceFrame: Int64,
        sampleRate: Int, segments: inout [ClockSegment]
    ) -> Int {
        var rendered = 0
        while rendered < frames, headIndex < buffers.count {
            let head = buffers[headIndex]
            let take = min(frames - rendered, head.frameCount - headOffset)
            head.samples.withUnsafeBufferPointer { source in
                (destination + rendered * channels).update(from: source.baseAddress! + headOffset * channels, count: take * channels)
            }
            let mediaTime = head.presentationTime + MediaTime(value: Int64(headOffset), timescale: Int32(sampleRate))
            appendSegment(
                ClockSegment(deviceFrame: firstDeviceFrame + Int64(rendered), mediaTime: mediaTime, frameCount: take),
                to: &segments, sampleRate: sampleRate)
            rendered += take
            headOffset += take
            queuedFrames -= take
            if headOffset == head.frameCount {
                headIndex += 1
                headOffset = 0
            }
        }
        if headIndex > 32 || headIndex == buffers.count {
            buffers.removeFirst(headIndex)
            headIndex = 0
        }
        return rendered
    }
}

/// The read position in a looping clip.
struct ClipCursor: Sendable {
    var clip: SharedSamples
    var position = 0
    /// Further passes after this one: 0 plays once, −1 loops forever.
    var loopsRemaining = 0
    var finished = false

    mutating func render(
        into destination: UnsafeMutablePointer<Float>, frames: Int, channels: Int, firstDeviceFrame: Int64,
        sampleRate: Int, segments: inout [ClockSegment]
    ) -> Int {
        var rendered = 0
        let total = clip.frameCount
        guard total > 0, clip.channelCount == channels else {
            finished = true
            return 0
        }
        while rendered < frames, !finished {
            let take = min(frames - rendered, total - position)
            clip.samples.withUnsafeBufferPointer { source in
                (destination + rendered * channels).update(from: source.baseAddress! + position * channels, count: take * channels)
            }
            appendSegment(
                ClockSegment(
                    deviceFrame: firstDeviceFrame + Int64(rendered),
                    mediaTime: MediaTime(value: Int64(position), timescale: Int32(sampleRate)), frameCount: take),
                to: &segments, sampleRate: sampleRate)
            rendered += take
            position += take
            if position == total {
                if loopsRemaining == 0 {
                    finished = true
                } else {
                    if loopsRemaining > 0 { loopsRemaining -= 1 }
                    position = 0
                }
            }
        }
        return rendered
    }
}

/// Extends the last segment when the new run continues it in both device frames and media time.
private func appendSegment(_ segment: ClockSegment, to segments: inout [ClockSegment], sampleRate: Int) {
    if var last = segments.last, last.endDeviceFrame == segment.deviceFrame,
        last.mediaTime(atDeviceFrame: last.endDeviceFrame, sampleRate: sampleRate) == segment.mediaTime
    {
        last.frameCount += segment.frameCount
        segments[segments.count - 1] = last
    } else {
        segments.append(segment)
    }
}

/// Everything the mixer knows about one input, guarded by the output's lock.
struct MixerInputState: Sendable {
    let id: Int
    let label: String
    var source: MixerSource
    var isPaused = false
    var isClosed = false
    /// Bumped by every flush, so a producer blocked before the flush gives up its buffer.
    var flushGeneration = 0
    /// The first device frame this input may play at (``AudioPlayer/play(atTime:)``).
    var startDeviceFrame: Int64?
    /// A shift asked for by ``MixerInput/align(mediaTime:atHostTime:)``: media time `mediaTime`
    /// is to be heard at host time `hostNanos`; applied by the audio thread at its next period.
    var alignment: (mediaTime: MediaTime, hostNanos: Int64)?
    /// Silence still to play before the queued samples (an alignment found the sound ahead).
    var silenceFrames = 0
    /// Whether the input plays at all yet (a clip waits for `play`).
    var isStarted = true

    var volume: Float = 1
    var pan: Float = 0
    var isMuted = false
    /// The session's ducking factor now (1 = not ducked).
    var duckLevel: Float = 1
    /// The level this input ducks to while an announcement plays (`nil`: never ducked).
    var duckedLevel: Float?
    /// Whether this input is an announcement: while it plays, duckable inputs duck.
    var ducksOthers = false
    var gains: GainRamp
    var hasPlayed = false

    var isMeteringEnabled = false
    var meter: LevelMeter

    /// Where recent samples went on the device timeline, oldest first.
    var segments: [ClockSegment] = []
    /// The media time after the last pruned segment: what is heard once it has played out.
    var heardTail: MediaTime?

    init(id: Int, label: String, source: MixerSource, channelCount: Int, rampFrames: Int) {
        self.id = id
        self.label = label
        self.source = source
        gains = GainRamp(channelCount: channelCount, rampFrames: rampFrames, initial: Array(repeating: 1, count: channelCount))
        meter = LevelMeter(channelCount: channelCount)
    }

    var gainTargets: [Float] {
        GainRamp.targets(channelCount: gains.current.count, volume: volume * duckLevel, pan: pan, muted: isMuted)
    }

    /// Whether this is an announcement playing now.
    var isAnnouncing: Bool {
        guard ducksOthers, isStarted, !isPaused, !isClosed else { return false }
        if case .clip(let cursor) = source { return !cursor.finished }
        return queuedFrames > 0
    }

    var queuedFrames: Int {
        if case .stream(let queue) = source { return queue.queuedFrames }
        return 0
    }

    /// Whether a producer feeds this input through ``MixerInput/enqueue(_:)`` (not a clip).
    var isStream: Bool {
        if case .stream = source { return true }
        return false
    }

    /// The media time heard at device frame `frame`, or `nil` when nothing of this input has been heard.
    func mediaTime(atDeviceFrame frame: Int64, sampleRate: Int) -> MediaTime? {
        var heard = heardTail
        for segment in segments {
            if frame < segment.deviceFrame { break }
            heard = segment.mediaTime(atDeviceFrame: frame, sampleRate: sampleRate)
        }
        return heard
    }

    /// Forgets segments that have been heard completely (keeping what they imply).
    mutating func pruneSegments(before frame: Int64, sampleRate: Int) {
        var removable = 0
        while removable < segments.count - 1, segments[removable].endDeviceFrame <= frame {
            removable += 1
        }
        if removable > 0 {
            let last = segments[removable - 1]
            heardTail = last.mediaTime(atDeviceFrame: last.endDeviceFrame, sampleRate: sampleRate)
            segments.removeFirst(removable)
        }
        if segments.count > 512 { segments.removeFirst(segments.count - 512) }
    }
}
