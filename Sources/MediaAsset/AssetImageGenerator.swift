internal import CFFmpeg
public import MediaTime
internal import Dispatch
internal import Synchronization
public import MediaSinks
import Threading

/// The outcome of one requested time in a batch.
public struct ImageGenerationResult: Sendable {
    public enum Outcome: Sendable {
        /// The picture and the time of the frame it shows.
        case succeeded(image: RGBAImage, actualTime: MediaTime)
        case failed(MediaError)
        case cancelled
    }
    /// The time that was asked for.
    public let requestedTime: MediaTime
    public let outcome: Outcome
}

/// Makes still images of an asset's video at chosen times (thumbnails, posters).
///
/// Times are in the asset's timeline: zero is the container's start time. With zero
/// tolerances the image is the exact frame whose presentation interval contains the time;
/// with the default (infinite) tolerances it is the keyframe at or before the time, which
/// needs the least decoding. The image is scaled down to fit ``maximumSize`` (keeping the
/// aspect ratio) and turned by the track's rotation.
///
/// Settings may be changed from any thread; a request uses the settings at the moment it is made.
public final class AssetImageGenerator: Sendable {
    private struct Settings {
        var toleranceBefore = MediaTime.positiveInfinity
        var toleranceAfter = MediaTime.positiveInfinity
        var maximumSize = PixelSize.zero
        var appliesPreferredTrackTransform = true
    }

    public let asset: Asset
    private let settings = LockedValue(Settings())
    /// Bumped by ``cancelAllImageGeneration()``; requests made before see the change.
    private let generation = Atomic<Int>(0)
    private let extractor = LockedValue<FrameExtractor?>(nil)
    private let queue = DispatchQueue(label: "vitrine.image-generator")

    public init(asset: Asset) { self.asset = asset }

    /// How far before the requested time the image's frame may lie (default: any distance).
    public var requestedTimeToleranceBefore: MediaTime {
        get { settings.withLock { $0.toleranceBefore } }
        set { settings.withLock { $0.toleranceBefore = newValue } }
    }

    /// How far after the requested time the image's frame may lie (default: any distance).
    public var requestedTimeToleranceAfter: MediaTime {
        get { settings.withLock { $0.toleranceAfter } }
        set { settings.withLock { $0.toleranceAfter = newValue } }
    }

    /// The largest image to return; a zero dimension is derived from the other one and the
    /// aspect ratio; ``PixelSize/zero`` (the default) keeps the video's own size. Images are never enlarged.
    public var maximumSize: PixelSize {
        get { settings.withLock { $0.maximumSize } }
        set { settings.withLock { $0.maximumSize = newValue } }
    }

    /// Whether images are turned by the track's display rotation (default true).
    public var appliesPreferredTrackTransform: Bool {
        get { settings.withLock { $0.appliesPreferredTrackTransform } }
        set { settings.withLock { $0.appliesPreferredTrackTransform = newValue } }
    }

    /// The image at `time` and the time of the frame it shows.
    public func image(at time: MediaTime) async throws(MediaError) -> (image: RGBAImage, actualTime: MediaTime) {
        var results: [ImageGenerationResult] = []
        for await result in images(at: [time]) { results.append(result) }
        switch results.first?.outcome {
        case .succeeded(let image, let actualTime): return (image, actualTime)
        case .failed(let error): throw error
        case .cancelled, nil: throw MediaError(source: asset.source, operation: "cannot make an image", reason: .cancelled)
        }
    }

    /// Images for many times, one result per time in the order asked. Ending the iteration
    /// early, or ``cancelAllImageGeneration()``, makes the remaining times `.cancelled`.
    public func images(at times: [MediaTime]) -> AsyncStream<ImageGenerationResult> {
        let request = settings.withLock { $0 }
        let startGeneration = generation.load(ordering: .acquiring)
        let (stream, continuation) = AsyncStream<ImageGenerationResult>.makeStream()
        let stopped = Atomic<Bool>(false)
        continuation.onTermination = { @Sendable termination in
            if case .cancelled = termination { stopped.store(true, ordering: .releasing) }
        }
        queue.async { [self] in
            // When the media cannot be opened or decoded, every time fails with that one error
            // instead of opening the media again for each.
            var openError: MediaError?
            for time in times {
                let cancelled = stopped.load(ordering: .acquiring) || generation.load(ordering: .acquiring) != startGeneration
                if cancelled {
                    continuation.yield(ImageGenerationResult(requestedTime: time, outcome: .cancelled))
                    continue
                }
                if let openError {
                    continuation.yield(ImageGenerationResult(requestedTime: time, outcome: .failed(openError)))
                    continue
                }
                let outcome: ImageGenerationResult.Outcome
                do throws(MediaError) {
                    let (image, actual) = try makeImage(at: time, settings: request, openError: &openError)
                    outcome = .succeeded(image: image, actualTime: actual)
                } catch where error.reason == .cancelled {
                    outcome = .cancelled
                } catch {
                    outcome = .failed(error)
                }
                continuation.yield(ImageGenerationResult(requestedTime: time, outcome: outcome))
            }
            continuation.finish()
        }
        return stream
    }

    /// Cancels every request made so far; their remaining times end as `.cancelled`.
    public func cancelAllImageGeneration() {
        generation.add(1, ordering: .releasing)
        extractor.withLock { extractor in
            extractor?.interruption.cancel()
            extractor = nil
        }
    }

    /// Runs on `queue`.
    private func makeImage(at time: MediaTime, settings: Settings, openError: inout MediaError?) throws(MediaError) -> (RGBAImage, MediaTime) {
        var current = extractor.withLock { $0 }
        if current == nil || current!.interruption.isCancelled {
            let interruption = IOInterruption()
            let made: FrameExtractor
            do throws(MediaError) {
                made = try FrameExtractor(asset: asset, interruption: interruption)
            } catch {
                if error.reason != .cancelled { openError = error }
                throw error
            }
            extractor.withLock { $0 = made }
            current = made
        }
        let frameExtractor = current!
        let (frame, actualTime) = try frameExtractor.frame(
            at: time, toleranceBefore: settings.toleranceBefore, toleranceAfter: settings.toleranceAfter)
        let track = frameExtractor.track
        let rotation = settings.appliesPreferredTrackTransform ? track.preferredRotation : 0
        let size = Self.outputSize(
            stored: PixelSize(width: frame.width, height: frame.height),
            sampleAspectRatio: frame.sampleAspectRatio.num > 0 && frame.sampleAspectRatio.den > 0
                ? Rational(frame.sampleAspectRatio) : track.sampleAspectRatio,
            rotation: rotation, maximumSize: settings.maximumSize)
        var image = try frameExtractor.scaler.image(from: frame, width: size.width, height: size.height, source: asset.source)
        if rotation != 0 { image = image.rotated(clockwise: rotation) }
        return (image, actualTime)
    }

    /// The size to scale a stored picture to, before rotation, so that after rotation it fits `maximumSize`.
    static func outputSize(stored: PixelSize, sampleAspectRatio: Rational, rotation: Int, maximumSize: PixelSize) -> PixelSize {
        var width = Double(stored.width)
        let height = Double(stored.height)
        if sampleAspectRatio.isPositive { width *= sampleAspectRatio.doubleValue }
        let turned = rotation % 180 != 0
        let displayWidth = turned ? height : width
        let displayHeight = turned ? width : height
        var scale = 1.0
        if maximumSize.width > 0 { scale = min(scale, Double(maximumSize.width) / displayWidth) }
        if maximumSize.height > 0 { scale = min(scale, Double(maximumSize.height) / displayHeight) }
        return PixelSize(width: max(1, Int((width * scale).rounded())), height: max(1, Int((height * scale).rounded())))
    }
}

/// The demuxer, decoder and scaler for an asset's main video track; used on one queue.
final class FrameExtractor: @unchecked Sendable {
    let demuxer: Demuxer
    let decoder: Decoder
    let scaler = RGBAScaler()
    let streamIndex: Int
    let track: AssetTrack
    let interruption: IOInterruption
    private let timeBase: AVRational
    /// The asset's time zero in the stream's timeline.
    private let origin: MediaTime
    private let duration: MediaTime
    private let source: String

    init(asset: Asset, interruption: IOInterruption) throws(MediaError) {
        source = asset.source
        self.interruption = interruption
        demuxer = try Demuxer(source: asset.source, openTimeout: asset.options.openTimeout,
                              readTimeout: asset.options.readTimeout, interruption: interruption)
        let description = AssetDescription(demuxer: demuxer)
        guard let track = description.tracks.first(where: { $0.mediaType == .video && !$0.isAttachedPicture }) else {
            throw MediaError(source: asset.source, operation: "cannot make an image", reason: .noSuchTrack, detail: "(the media has no video track)")
        }
        self.track = track
        streamIndex = track.trackID
        let stream = demuxer.stream(at: streamIndex)
        timeBase = stream.pointee.time_base
        origin = description.format.startTime.isNumeric ? description.format.startTime : .zero
        duration = description.duration
        decoder = try Decoder(stream: stream, source: asset.source, threadCount: 0)
        // Packets of other streams are dropped by the demuxer, not read and thrown away.
        for index in 0..<demuxer.streamCount where index != streamIndex {
            demuxer.stream(at: index).pointee.discard = AVDISCARD_ALL
        }
    }

    /// Decodes the frame for `time` (asset timeline) within the tolerances; returns it and its time.
    func frame(at time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime) throws(MediaError) -> (Frame, MediaTime) {
        guard time.isNumeric, time >= .zero else {
            throw MediaError(source: source, operation: "cannot make an image at \(time)", reason: .invalidRequest, detail: "(not a time in the media)")
        }
        if duration.isNumeric && time > duration {
            throw MediaError(source: source, operation: "cannot make an image at \(MediaTime.format(seconds: time.seconds, decimals: 3)) s",
                             reason: .invalidRequest, detail: "(the media lasts \(MediaTime.format(seconds: duration.seconds, decimals: 3)) s)")
        }
        let exact = toleranceBefore == .zero && toleranceAfter == .zero
        let lower = toleranceBefore.isPositiveInfinity ? MediaTime.negativeInfinity : time - toleranceBefore
        let upper = toleranceAfter.isPositiveInfinity ? MediaTime.positiveInfinity : time + toleranceAfter

        // Some demuxers (MPEG-TS) land after the asked-for time: seek further back until the
        // first frame decoded is at or before the time, or the start of the media is reached.
        var backoff = MediaTime.zero
        while true {
            let target = time - backoff
            try demuxer.seek(to: (target > .zero ? target : .zero) + origin, streamIndex: streamIndex)
            decoder.flush()
            let result = try decodeFrame(at: time, exact: exact, lower: lower, upper: upper)
            if result.1 <= time || target <= .zero || result.isFirstAfterTime == false {
                return (result.0, result.1)
            }
            backoff = backoff == .zero ? MediaTime(value: 1, timescale: 1) : backoff + backoff
        }
    }

    /// Decodes from the current position; `isFirstAfterTime` says the very first frame was already past `time`.
    private func decodeFrame(at time: MediaTime, exact: Bool, lower: MediaTime, upper: MediaTime) throws(MediaError)
        -> (Frame, MediaTime, isFirstAfterTime: Bool)
    {
        let packet = Packet()
        var previous: (Frame, MediaTime)?
        var draining = false
        while true {
            let frame = Frame()
            switch try decoder.receive(into: frame) {
            case .frame:
                let frameTime = Demuxer.time(frame.bestEffortTimestamp, timeBase: timeBase) - origin
                guard frameTime.isValid else { continue }
                if frameTime <= time {
                    if !exact && frameTime >= lower && frameTime <= upper { return (frame, frameTime, false) }
                    previous = (frame, frameTime)
                } else {
                    guard let previous else { return (frame, frameTime, true) }
                    if exact { return (previous.0, previous.1, false) }
                    if previous.1 >= lower { return (previous.0, previous.1, false) }
                    if frameTime <= upper { return (frame, frameTime, false) }
                    // Nothing lies within the tolerances: the frame showing at the time is the best answer.
                    return (previous.0, previous.1, false)
                }
            case .endOfStream:
                if let previous { return (previous.0, previous.1, false) }
                throw MediaError(source: source, operation: "cannot make an image at \(MediaTime.format(seconds: time.seconds, decimals: 3)) s",
                                 reason: .corruptData, detail: "(no frame could be decoded)")
            case .needsInput:
                if draining { continue }
                let more: Bool
                do throws(MediaError) {
                    more = try demuxer.read(into: packet)
                } catch where error.reason == .corruptData || error.reason == .other {
                    more = false  // what was read so far still decodes
                }
                if more {
                    if packet.streamIndex == streamIndex {
                        do throws(MediaError) {
                            _ = try decoder.send(packet)
                        } catch where error.reason == .corruptData {
                            continue  // a damaged packet: the decoder conceals it, keep going
                        }
                    }
                } else {
                    draining = true
                    try decoder.drain()
                }
            }
        }
    }
}
