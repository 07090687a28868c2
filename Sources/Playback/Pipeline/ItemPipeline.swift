import DequeModule
import MediaAsset
import MediaTime
import Synchronization
import Threading
import MediaSinks

/// A compressed packet with the seek serial it was read under.
struct QueuedPacket: Sendable {
    let packet: Packet
    let serial: Int
}

/// A decoded video frame with the seek serial it was decoded under.
struct DecodedVideoFrame: Sendable {
    let frame: VideoFrame
    let serial: Int
    /// Where the frame stops being shown: its own end, or the item's out point when that comes first.
    let end: MediaTime
    var presentationTime: MediaTime { frame.presentationTime }

    init(frame: VideoFrame, serial: Int, endTime: MediaTime? = nil) {
        self.frame = frame
        self.serial = serial
        let end = frame.presentationTime + frame.duration
        if let endTime, end.isNumeric, end > endTime { self.end = endTime } else { self.end = end }
    }
}

/// What became of a decoded frame or buffer offered to the pipeline's queue.
private enum PushOutcome: Equatable {
    /// Queued for the engine; `full` when the queue is at its capacity with it.
    case queued(full: Bool = false)
    /// Not queued: a seek made it stale, or it ends before an exact seek's target.
    case dropped
    /// At or past the item's out point: the stream is done for this serial.
    case pastEnd
    /// The pipeline is stopping.
    case stopping
}

/// What the pipeline learned when it opened its input.
struct PipelineInfo: Sendable {
    var duration: MediaTime
    var hasVideo: Bool
    var hasAudio: Bool
    var presentationSize: (width: Int, height: Int)
    var isSeekable: Bool
    var tracks: [TrackDescription]
    /// Why the item's audio track is not played although it has one (no decoder for its codec):
    /// the item plays video-only.
    var audioTrackError: MediaError? = nil
}

/// One stream of the input, as the item's `tracks` list shows it.
struct TrackDescription: Sendable {
    var streamIndex: Int
    var mediaType: PlayerItemTrack.MediaType
    var codecName: String
    var languageCode: String?
    var isPlayable: Bool
}

/// What a decode thread, started before the input opens, is given to decode.
enum DecodeStart<Setup: Sendable>: Sendable {
    /// The input is not open yet.
    case pending
    /// Nothing: the stream is absent or undecodable, or the input did not open.
    case none
    case decode(Setup)

    var isPending: Bool {
        if case .pending = self { return true }
        return false
    }
}

/// The video decode thread's decoder and what it needs to time and convert its frames.
struct VideoDecodeSetup: Sendable {
    let decoder: Decoder
    let adaptive: Bool
    let stream: Int
    let converter: VideoFrameConverter
    let startTime: MediaTime
    let frameDuration: MediaTime
}

/// The audio decode thread's decoder and resampler.
struct AudioDecodeSetup: Sendable {
    let decoder: Decoder
    let resampler: AudioResampler
    let startTime: MediaTime
}

/// Demux and decode of one item: a demux thread with bounded packet queues, one decode thread
/// per played stream, and small decoded queues the engine consumes.
///
/// Seeks bump a serial number; every packet, frame and buffer carries the serial it was made
/// under, and anything whose serial is not the current one is dropped, so a stale frame can
/// never reach the screen.
// The shared state is behind `lock`; the FFmpeg objects belong to one thread each.
final class ItemPipeline: Sendable {
    enum Event: Sendable {
        case opened(PipelineInfo)
        case ready
        case failed(MediaError)
        case loaded(until: MediaTime)
    }

    /// Bounds of the packet queues: by bytes, and by queued duration per stream.
    static let maxQueuedBytes = 16 << 20
    static let maxQueuedDuration = MediaTime(value: 2, timescale: 1)
    /// The decoded video queue: a few frames, enough to ride out a slow decode.
    static let videoFrameCapacity = 4
    /// A decoder on one thread that filled the decoded queue waits until what is left in it plays
    /// for no more than this (and at least one frame is left), then fills it again in one burst.
    static let videoRefillMargin = MediaTime(value: 40, timescale: 1000)
    /// The decoded audio queue, by duration.
    static let audioBufferedDuration = MediaTime(value: 1, timescale: 4)

    let source: String
    let audioFormat: AudioFormat
    private let onEvent: @Sendable (Event) -> Void

    /// Who waits on ``lock``: each has its own condition, so a hand-off wakes only the thread it
    /// concerns. State changes that concern several (seek, stop, end of input, track changes)
    /// wake them all.
    enum Waiter: Int, LockCondition {
        /// The demux thread, for room in the packet queues.
        case demux
        /// The video decoder, for packets.
        case videoWork
        /// The audio decoder, for packets.
        case audioWork
        /// The video decoder, for room in the decoded frame queue.
        case videoRoom
        /// The audio decoder, for room in the decoded audio queue.
        case audioRoom
        /// The audio feeder (and the decode benchmark), for decoded data.
        case consumer
    }

    /// Everything the demux thread, the decode threads and the engine share.
    struct Shared {
        var serial = 0
        var stopping = false
        var pendingSeek: MediaTime?
        var discardBefore: MediaTime?
        var videoPackets = Deque<QueuedPacket>()
        var audioPackets = Deque<QueuedPacket>()
        var queuedBytes = 0
        var videoQueuedDuration = MediaTime.zero
        var audioQueuedDuration = MediaTime.zero
        var demuxFinishedSerial = -1
        var videoFinishedSerial = -1
        var audioFinishedSerial = -1
        var videoFrames = Deque<DecodedVideoFrame>()
        /// The engine waits for the decoded queue to fill (manual pacing): a decoder refilling in
        /// bursts decodes now instead of waiting for the queue to run low. Cleared when it is full.
        var videoWanted = false
        /// Whether the video is decoded on FFmpeg's frame threads (from the start or since a move).
        var videoFrameThreaded = false
        /// Decoded, resampled audio, of the current serial only (a seek empties it, a stale buffer is never added).
        var audioBuffers = Deque<AudioBuffer>()
        var audioBufferedDuration = MediaTime.zero
        var readyReported = false
        var info: PipelineInfo?
        var readFailure: MediaError?
        /// A played stream whose decoder rejected every packet from some point to the end of input.
        var decodeFailure: MediaError?
        var decodeThreads: [NamedThread] = []
        /// What the video decode thread decodes, once the demux thread has opened the input.
        var videoStart = DecodeStart<VideoDecodeSetup>.pending
        /// What the audio decode thread decodes, once the demux thread has opened the input.
        var audioStart = DecodeStart<AudioDecodeSetup>.pending
        var input: Demuxer?
        var demuxThread: NamedThread?
        var audioWanted: Bool
        /// The audio stream played (the best one unless an audible option was selected).
        var selectedAudioStream = -1
        /// The subtitle stream shown, if any.
        var selectedSubtitleStream: Int?
        /// Every subtitle decoded so far, by start time (few and small: kept across seeks).
        var subtitles: [TimedSubtitle] = []
        /// The out point (``PlayerItem/forwardPlaybackEndTime``): nothing at or after it is queued.
        var endTime: MediaTime?
        /// Where the sound is cut when nothing else cuts it sooner: the video's end, for an item
        /// with both. The item ends with its last frame; sound past it (an AAC encoder's padding,
        /// a soundtrack longer than the picture) would otherwise be heard at the start of the next
        /// item and push that item's sound late by as much.
        var audioEndTime: MediaTime?
        /// How much faster (positive) or slower the sound is resampled to play (a player
        /// following another clock): applied to what is decoded from now on.
        var audioSpeedAdjustment: Double = 0

        /// Whether the demuxer should wait: too many bytes queued, or every played stream has
        /// enough queued.
        var queuesFull: Bool {
            if queuedBytes >= ItemPipeline.maxQueuedBytes { return true }
            guard let info else { return false }
            let videoFull = !info.hasVideo || videoQueuedDuration >= ItemPipeline.maxQueuedDuration || videoPackets.count >= 120
            let audioFull = !info.hasAudio || !audioWanted || audioQueuedDuration >= ItemPipeline.maxQueuedDuration || audioPackets.count >= 400
            return videoFull && audioFull
        }

        /// No decoder is coming for a decode thread still waiting for one.
        mutating func releasePendingDecoders() {
            if videoStart.isPending { videoStart = .none }
            if audioStart.isPending { audioStart = .none }
        }

        /// Whether every played stream has been decoded to its end for the current serial.
        var decodeFinished: Bool {
            guard let info else { return false }
            let videoDone = !info.hasVideo || videoFinishedSerial == serial
            let audioDone = !info.hasAudio || !audioWanted || audioFinishedSerial == serial
            return videoDone && audioDone
        }

        /// A queued packet's duration in its stream's time base.
        func duration(of packet: QueuedPacket) -> MediaTime {
            guard let input else { return .zero }
            let duration = input.time(packet.packet.duration, stream: packet.packet.streamIndex)
            return duration.isNumeric ? duration : .zero
        }
    }

    /// The shared state; read and written only through it (lock order: the engine's lock, then
    /// an item's, then this one; nothing is called out of the pipeline with it held).
    let lock: ConditionLock<Shared, Waiter>
    private let interruption = IOInterruption()

    /// Video decoding threads (0 = FFmpeg's choice, frame threading), or nil for one thread while
    /// it keeps up with ease and frame threads from a keyframe on once not (``VideoStreamDecoder``).
    let videoThreadCount: Int?
    /// Where the sources whose video needed frame threads are remembered: with an adaptive
    /// ``videoThreadCount``, a remembered source opens on frame threads, and one that moves to
    /// them is remembered.
    let frameThreadMemory: FrameThreadMemory
    /// The adaptive decoder's load limit (``VideoStreamDecoder/loadLimit``; tests lower it).
    let videoLoadLimit: Double
    /// How many nice steps below the thread that starts it the pipeline's threads run (0: the
    /// same). See ``playbackNiceSteps``.
    let niceSteps: Int32
    /// The player's pipelines run 5 nice steps below the render, audio and engine threads. The
    /// picture has a deadline every refresh; decoding runs ahead of it into queues (2 s of packets,
    /// four decoded frames) and can wait a little. At equal priority the scheduler shares a busy
    /// CPU evenly, so the burst of opening and decoding the next item of a queue at a seam (or a
    /// busy neighbour) took the time a software renderer (llvmpipe) needed to draw the refresh,
    /// and one was missed. Five steps weigh the two about 3 : 1 when both want the CPU and change
    /// nothing when it is idle. Every thread the demux thread starts inherits it: the decode
    /// threads and FFmpeg's own.
    static let playbackNiceSteps: Int32 = 5
    /// The duration given to every video frame of a still image (``PlayerItem/stillImageDuration``).
    let stillImageDuration: MediaTime?

    init(
        source: String, audioFormat: AudioFormat, audioEnabled: Bool, videoThreadCount: Int? = nil, niceSteps: Int32 = 0,
        stillImageDuration: MediaTime? = nil, endTime: MediaTime? = nil, frameThreadMemory: FrameThreadMemory = .shared,
        videoLoadLimit: Double = VideoStreamDecoder.loadLimit, onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.source = source
        self.frameThreadMemory = frameThreadMemory
        self.videoLoadLimit = videoLoadLimit
        self.niceSteps = niceSteps
        self.stillImageDuration = stillImageDuration
        self.videoThreadCount = videoThreadCount
        self.audioFormat = audioFormat
        self.lock = ConditionLock(Shared(audioWanted: audioEnabled, endTime: endTime))
        self.onEvent = onEvent
    }

    /// Starts the item's threads: the demux thread, which opens the input, and the video and audio
    /// decode threads, which wait for it to give them their decoders (``Shared/videoStart``,
    /// ``Shared/audioStart``). A thread that cannot start fails the item.
    ///
    /// All three exist when this returns. A thread created while another thread is inside
    /// `dlopen` waits for it (glibc takes one lock for a `dlopen` and for a new thread's TLS); at a
    /// player's start the display's renderer loads Mesa and LLVM for about 20 ms, so threads made
    /// later, once the input was open, started that much late (see docs/playback-engine.md).
    func start() {
        let failure: ThreadStartError? = lock.withLock { state in
            guard state.demuxThread == nil, !state.stopping else { return nil }
            do throws(ThreadStartError) {
                state.demuxThread = try NamedThread.start(name: "vitrine-demux") { [self] in
                    lowerPriority()
                    demuxLoop()
                }
                state.decodeThreads.append(try NamedThread.start(name: "vitrine-video") { [self] in
                    lowerPriority()
                    guard let setup = awaitDecoder(\.videoStart, as: .videoWork) else { return }
                    videoDecodeLoop(setup.decoder, adaptive: setup.adaptive, stream: setup.stream, converter: setup.converter,
                                    startTime: setup.startTime, frameDuration: setup.frameDuration)
                })
                state.decodeThreads.append(try NamedThread.start(name: "vitrine-audio") { [self] in
                    lowerPriority()
                    guard let setup = awaitDecoder(\.audioStart, as: .audioWork) else { return }
                    audioDecodeLoop(setup.decoder, resampler: setup.resampler, startTime: setup.startTime)
                })
                return nil
            } catch {
                // A decode thread already started waits for a decoder that will not come.
                state.releasePendingDecoders()
                return error
            }
        }
        if let failure {
            lock.broadcastAll()
            onEvent(.failed(.playback(source, "cannot play", .other, detail: "(\(failure))")))
        }
    }

    /// Runs the calling thread (one of the pipeline's) ``niceSteps`` below where it was started;
    /// the threads it starts (FFmpeg's own) inherit that.
    private func lowerPriority() {
        if niceSteps > 0 { ThreadPriority.lowerCurrent(by: niceSteps) }
    }

    /// Stops every thread of the item and waits for them. Idempotent.
    func stop() {
        let demux: NamedThread? = lock.withLock { state in
            state.stopping = true
            interruption.cancel()
            defer { state.demuxThread = nil }
            return state.demuxThread
        }
        lock.broadcastAll()
        demux?.join()
        let decoders: [NamedThread] = lock.withLock { state in
            defer { state.decodeThreads = [] }
            state.videoFrames.removeAll()
            state.audioBuffers.removeAll()
            state.videoPackets.removeAll()
            state.audioPackets.removeAll()
            return state.decodeThreads
        }
        decoders.forEach { $0.join() }
        lock.withLock { $0.input = nil }
    }

    // MARK: Consumer side (the engine)

    /// Starts a seek: every queue is flushed and the serial bumped. With `exact`, frames ending
    /// at or before `time` are decoded and discarded; otherwise playback resumes at the keyframe.
    @discardableResult
    func seek(to time: MediaTime, exact: Bool) -> Int {
        let serial = lock.withLock { state in
            state.serial += 1
            state.pendingSeek = time
            // Reading starts again: an earlier read or decode error may not happen this time.
            state.readFailure = nil
            state.decodeFailure = nil
            state.discardBefore = exact ? time : nil
            state.videoPackets.removeAll()
            state.audioPackets.removeAll()
            state.queuedBytes = 0
            state.videoQueuedDuration = .zero
            state.audioQueuedDuration = .zero
            state.videoFrames.removeAll()
            state.audioBuffers.removeAll()
            state.audioBufferedDuration = .zero
            return state.serial
        }
        lock.broadcastAll()
        return serial
    }

    /// The seek generation: what every frame and buffer handed out now carries.
    var serial: Int { lock.withLock { $0.serial } }

    /// Runs `body` on the decoded video queue (only frames of the current serial are in it).
    func withVideoFrames<R>(_ body: (inout Deque<DecodedVideoFrame>) -> R) -> R {
        let (result, changed) = lock.withLock { state in
            let before = state.videoFrames.count
            let result = body(&state.videoFrames)
            return (result, state.videoFrames.count != before)
        }
        if changed { lock.broadcast(.videoRoom) }
        return result
    }

    /// Whether the video is decoded on FFmpeg's frame threads now (see ``VideoStreamDecoder``).
    var isVideoFrameThreaded: Bool { lock.withLock { $0.videoFrameThreaded } }

    /// Someone waits for the decoded queue to fill (the engine under manual pacing, which shows a
    /// frame only once every frame that may be due is decoded): a decoder that refills in bursts
    /// fills it now rather than when it runs low.
    func wantVideoFrames() {
        let changed = lock.withLock { state in
            defer { state.videoWanted = true }
            return !state.videoWanted
        }
        if changed { lock.broadcast(.videoRoom) }
    }

    /// Why reading stopped before the end of the input, if it did.
    var readFailure: MediaError? { lock.withLock { $0.readFailure } }

    /// Why the item cannot play to its end, if it cannot: reading stopped on an error (not the end
    /// of the input), or a decoder rejected every packet from some point to the end (at least
    /// ``DecodeFailures/threshold`` in a row). See docs/playback-engine.md.
    var playbackFailure: MediaError? { lock.withLock { $0.readFailure ?? $0.decodeFailure } }

    /// Whether every video frame of the current serial has been decoded and taken.
    var videoFinished: Bool {
        lock.withLock { state in
            state.info.map { !$0.hasVideo } ?? false || (state.videoFinishedSerial == state.serial && state.videoFrames.isEmpty)
        }
    }

    /// Whether the decoder has delivered every frame of the current serial (some may be queued).
    var videoDecodeFinished: Bool { lock.withLock { $0.videoFinishedSerial == $0.serial } }

    /// Whether every audio buffer of the current serial has been decoded and taken.
    var audioFinished: Bool {
        lock.withLock { state in
            !state.audioWanted || state.info.map { !$0.hasAudio } ?? false
                || (state.audioFinishedSerial == state.serial && state.audioBuffers.isEmpty)
        }
    }

    /// Takes the next audio buffer, waiting for one until the stream is decoded to its end, the
    /// pipeline stops, or `interrupted()` holds (checked again after each ``wakeConsumer()``).
    func takeAudio(unless interrupted: () -> Bool) -> AudioBuffer? {
        let taken: AudioBuffer? = lock.withLock(waitingFor: .consumer, until: { state in
            !state.audioBuffers.isEmpty || state.stopping || state.audioFinishedSerial == state.serial || interrupted()
        }) { state in
            guard let first = state.audioBuffers.popFirst() else { return nil }
            state.audioBufferedDuration = state.audioBufferedDuration - first.duration
            return first
        }
        if taken != nil { lock.broadcast(.audioRoom) }
        return taken
    }

    /// Makes a consumer waiting in ``takeAudio(unless:)`` check its interruption again.
    func wakeConsumer() {
        // An empty critical section: a consumer that found itself not interrupted is asleep once
        // we hold the lock, so the broadcast reaches it.
        lock.withLock { _ in }
        lock.broadcast(.consumer)
    }

    /// Takes every decoded frame and buffer, waiting (up to the timeout) while there is none:
    /// the consumer of ``DecodeBenchmark``. Returns the video frames and audio samples taken, and
    /// whether decoding has finished.
    func takeAllDecoded(timeout: Duration) -> (videoFrames: Int, audioFrames: Int, finished: Bool) {
        let taken = lock.withLock(waitingFor: .consumer, until: { state in
            !state.videoFrames.isEmpty || !state.audioBuffers.isEmpty || state.decodeFinished || state.stopping
        }, timeout: timeout) { state in
            let video = state.videoFrames.count
            let audio = state.audioBuffers.reduce(0) { $0 + $1.frameCount }
            state.videoFrames.removeAll(keepingCapacity: true)
            state.audioBuffers.removeAll(keepingCapacity: true)
            state.audioBufferedDuration = .zero
            return (video, audio, state.decodeFinished)
        }
        if taken.0 > 0 || taken.1 > 0 {
            lock.broadcast(.videoRoom)
            lock.broadcast(.audioRoom)
        }
        return taken
    }

    /// Enables or disables the audio track (a disabled track is neither queued nor decoded).
    func setAudioEnabled(_ enabled: Bool) {
        lock.withLock { state in
            state.audioWanted = enabled
            if !enabled {
                state.audioPackets.removeAll()
                state.audioBuffers.removeAll()
                state.audioBufferedDuration = .zero
                state.audioQueuedDuration = .zero
            }
        }
        lock.broadcastAll()
        checkReady()
    }

    var audioEnabled: Bool { lock.withLock { $0.audioWanted && ($0.info?.hasAudio ?? false) } }

    /// Resamples the sound decoded from now on to play `1 + adjustment` times as fast (at most
    /// ±0.005 is asked for). What is already decoded (a quarter of a second) plays as it is.
    func setAudioCompensation(_ adjustment: Double) {
        lock.withLock { $0.audioSpeedAdjustment = max(-0.05, min(0.05, adjustment)) }
    }

    /// Plays audio stream `index` instead (the caller seeks to flush what was queued).
    func selectAudioStream(_ index: Int) {
        lock.withLock { $0.selectedAudioStream = index }
        lock.broadcastAll()
    }

    /// Shows subtitle stream `index`, or none.
    func selectSubtitleStream(_ index: Int?) {
        lock.withLock { state in
            if state.selectedSubtitleStream != index { state.subtitles.removeAll() }
            state.selectedSubtitleStream = index
        }
    }

    /// The subtitle shown at `time`, if any.
    func subtitle(at time: MediaTime) -> TimedSubtitle? {
        lock.withLock { $0.subtitles.last { $0.start <= time && time < $0.end } }
    }

    /// Moves the out point. What is already queued past it is dropped; a stream that already
    /// stopped at an earlier out point goes on only after a seek.
    func setEndTime(_ end: MediaTime?) {
        lock.withLock { state in
            state.endTime = end
            guard let end else { return }
            state.videoFrames.removeAll { $0.presentationTime >= end }
            state.audioBuffers.removeAll { $0.presentationTime >= end }
            state.audioBufferedDuration = state.audioBuffers.reduce(.zero) { $0 + $1.duration }
        }
        lock.broadcastAll()
    }

    /// Applies a selection made before the input was opened.
    func preselect(audioStream: Int?, subtitleStream: Int?) {
        lock.withLock { state in
            if let audioStream { state.selectedAudioStream = audioStream }
            state.selectedSubtitleStream = subtitleStream
        }
    }

    // MARK: Demux thread

    private func demuxLoop() {
        // Whatever ends the demux thread early (an input that does not open, a stop) lets a
        // decode thread still waiting for its decoder go.
        defer { releaseWaitingDecodeThreads() }
        let opened: Demuxer
        do {
            opened = try Demuxer(source: source, openTimeout: .seconds(15), readTimeout: .seconds(10), interruption: interruption)
        } catch {
            onEvent(.failed(error))
            return
        }
        let streams = opened.playbackStreams()
        var videoDecoder: Decoder?
        var audioDecoder: Decoder?
        var setupError: MediaError?
        var audioError: MediaError?
        // One thread to start with, free to move to frame threads, unless told otherwise or the
        // source needed frame threads when it last played.
        let videoAdaptive = videoThreadCount == nil && !frameThreadMemory.needsFrameThreads(source)
        if let index = streams.videoStream {
            let threads = videoThreadCount ?? (videoAdaptive ? 1 : 0)
            do { videoDecoder = try Decoder(demuxer: opened, stream: index, threadCount: threads) } catch { setupError = error }
        }
        if let index = streams.audioStream {
            do { audioDecoder = try Decoder(demuxer: opened, stream: index, threadCount: 1) } catch {
                setupError = setupError ?? error
                audioError = error
            }
        }
        if videoDecoder == nil && audioDecoder == nil {
            onEvent(.failed(setupError ?? MediaError.playback(source, "cannot play", .noSuchTrack, detail: "(no video or audio track)")))
            return
        }
        let size = videoDecoder?.pictureSize ?? (0, 0)
        let tracks = streams.tracks.map { track in
            TrackDescription(
                streamIndex: track.trackID, mediaType: PlayerItemTrack.MediaType(track.mediaType), codecName: track.codecName,
                languageCode: track.languageCode,
                isPlayable: (track.trackID == streams.videoStream && videoDecoder != nil)
                    || (track.trackID == streams.audioStream && audioDecoder != nil))
        }
        let startTime = opened.startTime
        let pipelineInfo = PipelineInfo(
            duration: opened.duration.isNumeric && opened.duration > .zero ? opened.duration : .indefinite, hasVideo: videoDecoder != nil, hasAudio: audioDecoder != nil,
            presentationSize: size, isSeekable: opened.isSeekable, tracks: tracks,
            audioTrackError: videoDecoder != nil ? audioError : nil)
        let proceed: Bool = lock.withLock { state in
            guard !state.stopping else { return false }
            state.input = opened
            if !streams.tracks.indices.contains(state.selectedAudioStream) || streams.tracks[state.selectedAudioStream].mediaType != .audio {
                state.selectedAudioStream = streams.audioStream ?? -1
            }
            state.info = pipelineInfo
            if videoDecoder != nil, audioDecoder != nil, let video = streams.videoStream { state.audioEndTime = opened.streamEnd(video) }
            if let videoDecoder, let index = streams.videoStream {
                state.videoStart = .decode(VideoDecodeSetup(
                    decoder: videoDecoder, adaptive: videoAdaptive, stream: index,
                    converter: VideoFrameConverter(rotation: streams.rotation, sampleAspectRatio: streams.sampleAspectRatio),
                    startTime: startTime, frameDuration: streams.nominalFrameDuration))
            } else {
                state.videoStart = .none
            }
            if let audioDecoder {
                state.audioStart = .decode(AudioDecodeSetup(
                    decoder: audioDecoder, resampler: AudioResampler(format: audioFormat), startTime: startTime))
            } else {
                state.audioStart = .none
            }
            return true
        }
        lock.broadcastAll()
        guard proceed else { return }
        onEvent(.opened(pipelineInfo))
        checkReady()

        var loadedUntil = MediaTime.zero
        var lastReportedLoad = MediaTime.negativeInfinity
        var subtitleDecoder: SubtitleDecoder?
        while true {
            var seekTarget: MediaTime?
            let readSerial: Int? = lock.withLock(waitingFor: .demux, until: { state in
                state.stopping || state.pendingSeek != nil
                    || !(state.demuxFinishedSerial == state.serial || state.queuesFull || state.decodeFinished)
            }) { state in
                if state.stopping { return nil }
                seekTarget = state.pendingSeek
                state.pendingSeek = nil
                return state.serial
            }
            guard let readSerial else { return }
            if let seekTarget {
                try? opened.seek(to: seekTarget + startTime)
                continue
            }
            let packet = Packet()
            let result: Result<Bool, MediaError>
            do { result = .success(try opened.read(into: packet)) } catch { result = .failure(error) }
            switch result {
            case .success(false):
                lock.withLock { state in
                    if state.serial == readSerial { state.demuxFinishedSerial = readSerial }
                }
                lock.broadcastAll()
                // Everything is read: loaded to the end (the container's duration when it is known).
                let duration = pipelineInfo.duration
                onEvent(.loaded(until: duration.isNumeric ? max(duration, loadedUntil) : loadedUntil))
            case .failure(let error):
                lock.withLock { state in
                    if !state.stopping { state.readFailure = error }
                    if state.serial == readSerial { state.demuxFinishedSerial = readSerial }
                }
                lock.broadcastAll()
            case .success(true):
                let box = QueuedPacket(packet: packet, serial: readSerial)
                let streamIndex = packet.streamIndex
                var duration = packet.duration > 0 ? opened.time(packet.duration, stream: streamIndex) : .zero
                if !duration.isNumeric { duration = .zero }
                let pts = opened.time(packet.pts, stream: streamIndex)
                if pts.isNumeric {
                    let end = pts + duration - startTime
                    if end > loadedUntil { loadedUntil = end }
                }
                let (wantedSubtitle, audioStream) = lock.withLock { ($0.selectedSubtitleStream, $0.selectedAudioStream) }
                if let wantedSubtitle, streamIndex == wantedSubtitle {
                    if subtitleDecoder?.streamIndex != wantedSubtitle {
                        subtitleDecoder = SubtitleDecoder(demuxer: opened, index: wantedSubtitle, referenceSize: size)
                    }
                    if let decoded = subtitleDecoder?.decode(box.packet, startTime: startTime) {
                        lock.withLock { state in
                            guard state.selectedSubtitleStream == wantedSubtitle,
                                  !state.subtitles.contains(where: { $0.start == decoded.start }) else { return }
                            state.subtitles.append(decoded)
                            state.subtitles.sort { $0.start < $1.start }
                        }
                    }
                    continue
                }
                let queued: Waiter? = lock.withLock { state in
                    guard state.serial == readSerial else { return nil }
                    if streamIndex == streams.videoStream {
                        state.videoPackets.append(box)
                        state.videoQueuedDuration = state.videoQueuedDuration + duration
                    } else if streamIndex == audioStream && state.audioWanted {
                        state.audioPackets.append(box)
                        state.audioQueuedDuration = state.audioQueuedDuration + duration
                    } else {
                        return nil
                    }
                    state.queuedBytes += packet.size
                    return streamIndex == streams.videoStream ? .videoWork : .audioWork
                }
                if let queued { lock.broadcast(queued) }
                if loadedUntil - lastReportedLoad >= MediaTime(value: 1, timescale: 2) {
                    lastReportedLoad = loadedUntil
                    onEvent(.loaded(until: loadedUntil))
                }
            }
        }
    }

    // MARK: Decode threads

    /// Waits (on a decode thread) until the demux thread says what it decodes; `nil`: nothing (no
    /// such stream, no input, or the pipeline stops).
    private func awaitDecoder<Setup>(_ start: KeyPath<Shared, DecodeStart<Setup>>, as waiter: Waiter) -> Setup? {
        lock.withLock(waitingFor: waiter, until: { $0.stopping || !$0[keyPath: start].isPending }) { state in
            guard !state.stopping, case .decode(let setup) = state[keyPath: start] else { return nil }
            return setup
        }
    }

    /// Tells a decode thread still waiting for its decoder that none is coming.
    private func releaseWaitingDecodeThreads() {
        lock.withLock { $0.releasePendingDecoders() }
        lock.broadcastAll()
    }

    /// A stream timestamp in item time (the container's start time is item time 0), kept in the
    /// stream's own timescale so it reads like ffprobe's.
    private func itemTime(_ time: MediaTime, startTime: MediaTime) -> MediaTime {
        guard startTime != .zero else { return time }
        return (time - startTime).convertScale(time.timescale)
    }

    private enum Work {
        case packet(QueuedPacket)
        case drain(serial: Int)
        case stop
    }

    /// Waits for the next packet of the video or audio queue, or the end of input. Called on a
    /// decode thread; packets of an older serial (queued before a seek) are dropped on the way.
    private func nextWork(video: Bool) -> Work {
        while true {
            let (work, tookPacket): (Work?, Bool) = lock.withLock(waitingFor: video ? .videoWork : .audioWork, until: { state in
                let finished = video ? state.videoFinishedSerial : state.audioFinishedSerial
                return state.stopping || !(video ? state.videoPackets : state.audioPackets).isEmpty
                    || (state.demuxFinishedSerial == state.serial && finished != state.serial)
            }) { state in
                if state.stopping { return (.stop, false) }
                if let packet = video ? state.videoPackets.popFirst() : state.audioPackets.popFirst() {
                    state.queuedBytes -= packet.packet.size
                    if packet.packet.duration > 0 {
                        let duration = state.duration(of: packet)
                        if video {
                            state.videoQueuedDuration = max(.zero, state.videoQueuedDuration - duration)
                        } else {
                            state.audioQueuedDuration = max(.zero, state.audioQueuedDuration - duration)
                        }
                    }
                    // Packets of an older serial, or of a stream that reached the out point, are dropped.
                    let finished = video ? state.videoFinishedSerial : state.audioFinishedSerial
                    return (packet.serial == state.serial && finished != state.serial ? .packet(packet) : nil, true)
                }
                return (.drain(serial: state.serial), false)
            }
            if tookPacket { lock.broadcast(.demux) }
            if let work { return work }
        }
    }

    private func videoDecodeLoop(
        _ opened: Decoder, adaptive: Bool, stream index: Int, converter: VideoFrameConverter, startTime: MediaTime,
        frameDuration nominalDuration: MediaTime
    ) {
        lock.withLock { $0.videoFrameThreaded = !adaptive }
        let decoder = VideoStreamDecoder(opened, adaptive: adaptive, loadLimit: videoLoadLimit) { [self] threads throws(MediaError) in
            guard let stream = lock.withLock({ $0.input?.stream(at: index) }) else {
                throw MediaError.playback(source, "cannot decode", .other, detail: "(the input is closed)")
            }
            return try Decoder(stream: stream, source: source, threadCount: threads)
        }
        var cursor = DecoderCursor()
        // Whether the last frame filled the decoded queue: a decoder on one thread (a stream it
        // decodes in well under a frame's time) then waits until the queue is down to
        // ``videoRefillMargin`` of frames and decodes the next ones in one burst, with its caches
        // warm, instead of waking for each frame shown. A frame-threaded decoder keeps it full.
        var filled = false
        // One frame box per decoded picture (it becomes the VideoFrame's storage), not per
        // receive call: the call that answers "needs input" reuses it.
        var box = Frame()
        // Decoder time since the last frame came out, with the frame's conversion
        // (PlaybackStatistics, and the decoder's choice of threads).
        let clock = MonotonicClock()
        var busy = MediaTime.zero
        // The thread's CPU time when its last frame was out (the load the decoder judges).
        var cpuBefore = ThreadCPUClock.now()
        // What `Shared.videoFrameThreaded` says: a move is remembered and published once.
        var publishedFrameThreaded = !adaptive
        while true {
            var drainSerial: Int?
            switch nextWork(video: true) {
            case .stop: return
            case .packet(let packet):
                let began = clock.now()
                cursor.send(packet, to: decoder)
                busy = busy + (clock.now() - began)
            case .drain(let serial):
                cursor.drain(decoder, serial: serial)
                drainSerial = serial
            }
            while true {
                let began = clock.now()
                guard cursor.receive(from: decoder, into: box) else {
                    busy = busy + (clock.now() - began)
                    break
                }
                defer { busy = .zero }
                let pts = presentationTime(of: box, decoder: decoder, cursor: cursor, startTime: startTime)
                let frameDuration = stillImageDuration
                    ?? (box.duration > 0 ? decoder.time(box.duration) : nominalDuration)
                cursor.nextPTS = pts + frameDuration
                let decoded = box
                box = Frame()
                let converted = converter.convert(decoded, presentationTime: pts, duration: frameDuration)
                let took = busy + (clock.now() - began)
                PlaybackStatistics.videoFrameDecoded(in: took)
                // The load is the thread's own CPU time: time other threads or processes held the
                // core is not a reason for frame threads (they would only add CPU and memory).
                let cpuNow = ThreadCPUClock.now()
                decoder.noteDecoded(in: cpuNow - cpuBefore, frameDuration: frameDuration)
                cpuBefore = cpuNow
                if decoder.isFrameThreaded, !publishedFrameThreaded {
                    publishedFrameThreaded = true
                    frameThreadMemory.remember(source)
                    lock.withLock { $0.videoFrameThreaded = true }
                }
                guard let frame = converted else { continue }
                let resumeBelow = filled && !decoder.isFrameThreaded
                    ? ItemPipeline.refillLevel(frameDuration: frameDuration) + 1 : ItemPipeline.videoFrameCapacity
                switch push(video: frame, serial: cursor.serial, resumeBelow: resumeBelow) {
                case .queued(let full):
                    filled = full
                    continue
                case .dropped: continue
                case .stopping: return
                case .pastEnd:
                    // The out point: this stream ends here, as at the end of the input.
                    finishDrain(serial: cursor.serial, failure: nil, video: true)
                }
                break
            }
            if let drainSerial { finishDrain(serial: drainSerial, failure: cursor.failures.failure, video: true) }
        }
    }

    /// The stream has been decoded to its end for `drainSerial`: records it (and a decode failure
    /// that lasted to the end) unless a seek started a newer serial meanwhile.
    private func finishDrain(serial drainSerial: Int, failure: MediaError?, video: Bool) {
        lock.withLock { state in
            guard state.serial == drainSerial else { return }
            if video { state.videoFinishedSerial = drainSerial } else { state.audioFinishedSerial = drainSerial }
            if let failure, state.decodeFailure == nil { state.decodeFailure = failure }
        }
        lock.broadcastAll()
        checkReady()
    }

    /// A decoded frame's time in the item: its best-effort timestamp, else where the previous
    /// frame ended, else zero.
    private func presentationTime(of box: Frame, decoder: some StreamDecoding, cursor: DecoderCursor, startTime: MediaTime) -> MediaTime {
        let stamped = decoder.time(box.bestEffortTimestamp)
        let pts = stamped.isValid ? itemTime(stamped, startTime: startTime) : cursor.nextPTS
        return pts.isNumeric ? pts : .zero
    }

    /// How many frames of `frameDuration` may be left in a full queue before a decoder on one
    /// thread fills it again: what plays for ``videoRefillMargin``, at least one and fewer than the capacity.
    static func refillLevel(frameDuration: MediaTime) -> Int {
        guard frameDuration.isNumeric, frameDuration > .zero else { return videoFrameCapacity - 1 }
        let frames = Int((videoRefillMargin.seconds / frameDuration.seconds).rounded(.down))
        return min(max(frames, 1), videoFrameCapacity - 1)
    }

    /// Queues a frame decoded under `serial`, waiting until fewer than `resumeBelow` frames are queued.
    private func push(video frame: VideoFrame, serial: Int, resumeBelow: Int) -> PushOutcome {
        let outcome: PushOutcome = lock.withLock(waitingFor: .videoRoom, until: { state in
            state.stopping || state.serial != serial || state.videoFrames.count < resumeBelow
                || (state.videoWanted && state.videoFrames.count < ItemPipeline.videoFrameCapacity)
        }) { state in
            if state.stopping { return .stopping }
            guard state.serial == serial else { return .dropped }
            if let end = state.endTime, frame.presentationTime >= end { return .pastEnd }
            let decoded = DecodedVideoFrame(frame: frame, serial: serial, endTime: state.endTime)
            if let discardBefore = state.discardBefore, decoded.end <= discardBefore { return .dropped }
            state.videoFrames.append(decoded)
            let full = state.videoFrames.count >= ItemPipeline.videoFrameCapacity
            if full { state.videoWanted = false }
            return .queued(full: full)
        }
        if case .queued = outcome {
            lock.broadcast(.consumer)
            checkReady()
        }
        return outcome
    }

    private func audioDecodeLoop(_ initialDecoder: Decoder, resampler: AudioResampler, startTime: MediaTime) {
        var decoder = initialDecoder
        var decoderStream = -1
        var cursor = DecoderCursor()
        // The samples are copied out by the resampler: one frame box serves every receive.
        let box = Frame()
        while true {
            var drainSerial: Int?
            switch nextWork(video: false) {
            case .stop: return
            case .packet(let packet):
                if decoderStream < 0 { decoderStream = packet.packet.streamIndex }
                if packet.packet.streamIndex != decoderStream {
                    // Another audio stream was selected: a fresh decoder for it, already at this serial.
                    let stream = lock.withLock { $0.input?.stream(at: packet.packet.streamIndex) }
                    guard let stream, let replacement = try? Decoder(stream: stream, source: source, threadCount: 1) else { continue }
                    decoder = replacement
                    decoderStream = packet.packet.streamIndex
                    cursor = DecoderCursor(serial: packet.serial)
                }
                cursor.send(packet, to: decoder)
            case .drain(let serial):
                cursor.drain(decoder, serial: serial)
                drainSerial = serial
            }
            while cursor.receive(from: decoder, into: box) {
                let pts = presentationTime(of: box, decoder: decoder, cursor: cursor, startTime: startTime)
                let adjustment = lock.withLock { $0.audioSpeedAdjustment }
                guard let buffer = resampler.convert(box, presentationTime: pts, speedAdjustment: adjustment) else { continue }
                cursor.nextPTS = pts + buffer.duration
                switch push(audio: buffer, serial: cursor.serial) {
                case .queued, .dropped: continue
                case .stopping: return
                case .pastEnd:
                    finishDrain(serial: cursor.serial, failure: nil, video: false)
                }
                break
            }
            if let drainSerial { finishDrain(serial: drainSerial, failure: cursor.failures.failure, video: false) }
        }
    }

    /// Queues audio decoded under `serial`, waiting for room; cut at the out point to the sample.
    private func push(audio decoded: AudioBuffer, serial: Int) -> PushOutcome {
        let outcome: PushOutcome = lock.withLock(waitingFor: .audioRoom, until: { state in
            state.stopping || state.serial != serial || !state.audioWanted
                || state.audioBufferedDuration < ItemPipeline.audioBufferedDuration
        }) { state in
            if state.stopping { return .stopping }
            guard state.serial == serial, state.audioWanted else { return .dropped }
            var buffer = decoded
            let cut = [state.endTime, state.audioEndTime].compactMap { $0 }.min()
            if let end = cut {
                guard buffer.presentationTime < end else { return .pastEnd }
                buffer = buffer.cut(at: end)
            }
            if let discardBefore = state.discardBefore, buffer.presentationTime + buffer.duration <= discardBefore {
                return .dropped
            }
            state.audioBuffers.append(buffer)
            state.audioBufferedDuration = state.audioBufferedDuration + buffer.duration
            // The buffer that reaches the out point (or the video's end) is the stream's last.
            if let end = cut, buffer.presentationTime + buffer.duration >= end { return .pastEnd }
            return .queued()
        }
        if outcome == .queued() || outcome == .pastEnd {
            lock.broadcast(.consumer)
            checkReady()
        }
        return outcome
    }

    /// Reports `.ready` once: first video frame decoded (or no video) and audio primed.
    private func checkReady() {
        let nowReady: Bool = lock.withLock { state in
            guard !state.readyReported, let info = state.info else { return false }
            let videoReady = !info.hasVideo || !state.videoFrames.isEmpty || state.videoFinishedSerial == state.serial
            let audioReady = !info.hasAudio || !state.audioWanted || !state.audioBuffers.isEmpty
                || state.audioFinishedSerial == state.serial
            guard videoReady && audioReady else { return false }
            state.readyReported = true
            return true
        }
        if nowReady { onEvent(.ready) }
    }
}

/// Where a decode thread's decoder stands in the pipeline's serial sequence: the seek generation
/// it is decoding, where the next frame starts when a frame carries no timestamp, and its run of
/// failures. Packets of a newer serial flush the decoder first, so no frame from before a seek
/// survives it. Owned by one decode thread.
struct DecoderCursor {
    private(set) var serial: Int
    var nextPTS = MediaTime.invalid
    private(set) var failures = DecodeFailures()

    init(serial: Int = -1) {
        self.serial = serial
    }

    /// Sends a packet, first flushing the decoder when the packet starts a newer serial.
    mutating func send(_ packet: QueuedPacket, to decoder: some StreamDecoding) {
        if packet.serial != serial {
            decoder.flush()
            serial = packet.serial
            nextPTS = .invalid
            failures.reset()
        }
        do { _ = try decoder.send(packet.packet) } catch { failures.note(error, at: decoder.time(packet.packet.pts)) }
    }

    /// Puts the decoder in draining mode for the end of input at `drainSerial`.
    mutating func drain(_ decoder: some StreamDecoding, serial drainSerial: Int) {
        if serial != drainSerial {
            decoder.flush()
            serial = drainSerial
        }
        _ = try? decoder.send(nil)
    }

    /// Receives the next frame into `box`: `true` when there is one, `false` when the decoder
    /// needs input, has drained (it is then flushed for reuse) or failed (the error is noted).
    mutating func receive(from decoder: some StreamDecoding, into box: Frame) -> Bool {
        do {
            switch try decoder.receive(into: box) {
            case .frame:
                // A frame decoded from a packet sent before the run of failures began (a decoder
                // holds a few for reordering, and gives them when drained) does not end the run.
                if let since = failures.since, case let pts = decoder.time(box.bestEffortTimestamp), pts.isValid, pts < since {
                    return true
                }
                failures.reset()
                return true
            case .needsInput:
                return false
            case .endOfStream:
                decoder.flush()
                serial = -1
                return false
            }
        } catch {
            failures.note(error)
            return false
        }
    }
}

/// The decode errors of one stream since its last decoded frame (of a packet at or after the
/// first of them). A decoder that rejects every packet from some point to the end of input
/// leaves the item unable to play to its end; a short run of damaged packets that the decoder
/// gets past is only concealed or skipped.
struct DecodeFailures {
    /// Packets rejected in a row, up to the end of input, that make the stream a failure.
    static let threshold = 25

    private(set) var count = 0
    private(set) var last: MediaError?
    /// The timestamp of the run's first rejected packet, when it had one.
    private(set) var since: MediaTime?

    mutating func note(_ error: MediaError, at pts: MediaTime = .invalid) {
        if count == 0 && pts.isValid { since = pts }
        count += 1
        last = error
    }

    mutating func reset() {
        count = 0
        last = nil
        since = nil
    }

    /// The error to report when the input ends now.
    var failure: MediaError? { count >= Self.threshold ? last : nil }
}
