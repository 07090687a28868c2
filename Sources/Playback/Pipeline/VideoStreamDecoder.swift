import MediaAsset
import MediaSinks
import MediaTime

/// What a decode thread's ``DecoderCursor`` drives: a stream decoder's send, receive and flush.
protocol StreamDecoding: AnyObject {
    func send(_ packet: Packet?) throws(MediaError) -> Decoder.SendResult
    func receive(into frame: Frame) throws(MediaError) -> Decoder.ReceiveResult
    func flush()
    /// A timestamp of the stream (packets in, frames out) as a time.
    func time(_ ticks: Int64) -> MediaTime
}

extension Decoder: StreamDecoding {}

/// Decodes one video stream on the decode thread alone while that keeps up with ease, and moves
/// to FFmpeg's frame threads, at a keyframe, once it does not.
///
/// One thread costs less CPU for the same frames than frame threading (no per-thread copies of
/// the codec's state, no hand-offs between threads, and with the pipeline's burst refill fewer
/// wake-ups): for a stream a core decodes many times faster than real time, which is most of
/// what a player shows, that is the cheaper way. A stream that takes a large share of the core's
/// time per frame (``loadLimit``, averaged over the last ``loadWindow`` frames, as the decode
/// thread reports them with ``noteDecoded(in:frameDuration:)``) needs the other cores: frame
/// threads are then used for the rest of the item.
///
/// The move is exact, for open groups of pictures too. At the first keyframe after the choice, a
/// decoder with frame threads starts at that keyframe, and the single-threaded one (the
/// *retiring* decoder) decodes on through the pictures shown before the keyframe that follow it
/// in decode order (an open GOP's leading pictures, which may refer to pictures before the
/// keyframe that the new decoder never saw). At the first packet shown after the keyframe, the
/// retiring decoder is drained: it gives every frame up to and including the keyframe, and the
/// new decoder's frames up to that point are discarded. A flush (a seek) with the move pending
/// makes it at once: nothing from before a flush is kept anyway.
///
/// Owned by one decode thread.
final class VideoStreamDecoder: StreamDecoding {
    /// Opens a decoder for the stream with a thread count (0: FFmpeg's choice, frame threading).
    typealias Opener = (_ threadCount: Int) throws(MediaError) -> Decoder

    /// The share of a frame's duration that decoding it on one thread may take, on average over
    /// the last ``loadWindow`` frames, before frame threads are used. The decode thread runs
    /// below the render thread (``ItemPipeline/playbackNiceSteps``) and shares the cores with
    /// it, so the margin is wide.
    static let loadLimit = 0.4
    /// How many frames the load is averaged over (an exponential average of this span), and how
    /// many are decoded before it is judged.
    static let loadWindow = 8

    private let open: Opener
    /// The load past which frame threads are asked for (``loadLimit`` unless a test says otherwise).
    private let limit: Double
    private var decoder: Decoder
    /// Whether the stream is decoded on FFmpeg's frame threads (from the start, or since a move).
    private(set) var isFrameThreaded: Bool
    /// Whether frame threads are wanted from the next keyframe (or flush) on.
    private var movePending = false
    /// The single-threaded decoder finishing the frames up to the keyframe where the move happened.
    private var retiring: Decoder?
    /// Whether the retiring decoder has been told to drain.
    private var retiringDraining = false
    /// The move's keyframe: the new decoder's frames at or before it are the retiring decoder's.
    private var handOver: MediaTime?
    /// Average of decode time / frame duration over the last frames, and how many were measured.
    private var load = 0.0
    private var measured = 0

    /// - Parameters:
    ///   - opened: the stream's decoder, open on one thread when `adaptive`.
    ///   - adaptive: move to frame threads when the load asks for it; otherwise keep `opened`.
    ///   - loadLimit: the load past which frame threads are asked for.
    ///   - open: opens another decoder of the stream, for the move.
    init(_ opened: Decoder, adaptive: Bool, loadLimit: Double = VideoStreamDecoder.loadLimit, open: @escaping Opener) {
        self.open = open
        limit = loadLimit
        decoder = opened
        isFrameThreaded = !adaptive
    }

    /// Asks for frame threads from the next keyframe on (as a load past ``loadLimit`` does).
    func requestFrameThreads() {
        if !isFrameThreaded { movePending = true }
    }

    func time(_ ticks: Int64) -> MediaTime { decoder.time(ticks) }

    func send(_ packet: Packet?) throws(MediaError) -> Decoder.SendResult {
        guard let packet else {
            if let retiring, !retiringDraining {
                retiringDraining = true
                _ = try? retiring.send(nil)
            }
            return try decoder.send(nil)
        }
        let pts = decoder.time(packet.pts)
        if let retiring, !retiringDraining, let handOver {
            if pts.isValid && pts < handOver {
                // Shown before the keyframe: the retiring decoder has what it refers to.
                _ = try? retiring.send(packet)
            } else {
                retiringDraining = true
                _ = try? retiring.send(nil)
            }
        } else if movePending, retiring == nil, packet.isKeyframe, pts.isValid {
            move(at: pts, keyframe: packet)
        }
        return try decoder.send(packet)
    }

    /// The next frame in presentation order: the retiring decoder's while it has any, then the
    /// current decoder's past the move's keyframe.
    func receive(into frame: Frame) throws(MediaError) -> Decoder.ReceiveResult {
        if let retiring {
            switch (try? retiring.receive(into: frame)) ?? .endOfStream {
            case .frame: return .frame
            case .needsInput: break
            case .endOfStream: self.retiring = nil
            }
        }
        while true {
            let result = try decoder.receive(into: frame)
            guard result == .frame, let handOver else { return result }
            let pts = decoder.time(frame.bestEffortTimestamp)
            if pts.isValid && pts <= handOver {
                frame.unref()  // the retiring decoder's frame (or an undecodable leading picture)
                continue
            }
            if retiring == nil { self.handOver = nil }
            return .frame
        }
    }

    /// Counts what a frame cost the decode thread (`time`: the thread's own CPU time since the
    /// last frame came out, so time other threads held the core does not count) against its
    /// duration; past ``loadLimit`` on average, frame threads are asked for.
    func noteDecoded(in time: MediaTime, frameDuration: MediaTime) {
        guard !isFrameThreaded, !movePending, frameDuration.isNumeric, frameDuration > .zero else { return }
        measured += 1
        load += (time.seconds / frameDuration.seconds - load) / Double(min(measured, Self.loadWindow))
        if measured >= Self.loadWindow && load > limit { movePending = true }
    }

    func flush() {
        retiring = nil
        retiringDraining = false
        handOver = nil
        if movePending, let threaded = try? open(0) {
            decoder = threaded
            isFrameThreaded = true
            movePending = false
        } else {
            decoder.flush()
        }
    }

    /// Starts the move at `keyframe` (time `pts`): a frame-threaded decoder takes over from it;
    /// the single-threaded one decodes it too and retires after the pictures shown before it.
    private func move(at pts: MediaTime, keyframe: Packet) {
        guard let threaded = try? open(0) else {
            movePending = false  // no second decoder: stay on one thread
            return
        }
        _ = try? decoder.send(keyframe)
        retiring = decoder
        retiringDraining = false
        decoder = threaded
        handOver = pts
        isFrameThreaded = true
        movePending = false
    }
}
