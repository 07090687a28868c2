internal import CFFmpeg
import DequeModule
import MediaAsset
import MediaTime
import Synchronization

/// A decoded video frame with the seek serial it was decoded under.
struct DecodedVideoFrame: Sendable {
    let frame: VideoFrame
    let serial: Int
    var presentationTime: MediaTime { frame.presentationTime }
    var end: MediaTime { frame.presentationTime + frame.duration }
}

/// Decoded, resampled audio with the seek serial it was decoded under.
struct DecodedAudioBuffer: Sendable {
    let buffer: AudioBuffer
    let serial: Int
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

/// Demux and decode of one item: a demux thread with bounded packet queues, one decode thread
/// per played stream, and small decoded queues the engine consumes.
///
/// Seeks bump a serial number; every packet, frame and buffer carries the serial it was made
/// under, and anything whose serial is not the current one is dropped, so a stale frame can
/// never reach the screen.
// Unchecked: all mutable state is guarded by `lock`; the FFmpeg objects belong to one thread each.
final class ItemPipeline: @unchecked Sendable {
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
    /// The decoded audio queue, by duration.
    static let audioBufferedDuration = MediaTime(value: 1, timescale: 4)

    let source: String
    let audioFormat: AudioFormat
    private let onEvent: @Sendable (Event) -> Void
    /// Who waits on ``lock``: each has its own condition, so a hand-off wakes only the thread it
    /// concerns. State changes that concern several (seek, stop, end of input, track changes)
    /// wake them all.
    enum Waiter {
        /// The demux thread, for room in the packet queues.
        static let demux = 0
        /// The video decoder, for packets.
        static let videoWork = 1
        /// The audio decoder, for packets.
        static let audioWork = 2
        /// The video decoder, for room in the decoded frame queue.
        static let videoRoom = 3
        /// The audio decoder, for room in the decoded audio queue.
        static let audioRoom = 4
        /// The audio feeder (and the decode benchmark), for decoded data.
        static let consumer = 5
        static let count = 6
    }
    let lock = ConditionLock(conditionCount: Waiter.count)

    // Guarded by `lock`.
    private(set) var serial = 0
    private var stopping = false
    private var pendingSeek: MediaTime?
    private var discardBefore: MediaTime?
    private var videoPackets = Deque<QueuedPacket>()
    private var audioPackets = Deque<QueuedPacket>()
    private var queuedBytes = 0
    private var videoQueuedDuration = MediaTime.zero
    private var audioQueuedDuration = MediaTime.zero
    private var demuxFinishedSerial = -1
    private var videoFinishedSerial = -1
    private var audioFinishedSerial = -1
    private var videoFrames = Deque<DecodedVideoFrame>()
    private var audioBuffers = Deque<DecodedAudioBuffer>()
    private var audioBufferedDuration = MediaTime.zero
    private var readyReported = false
    private var info: PipelineInfo?
    private(set) var readFailure: MediaError?
    /// A played stream whose decoder rejected every packet from some point to the end of input.
    private var decodeFailure: MediaError?
    private var decodeThreads: [WorkerThread] = []
    private var input: Demuxer?
    private var demuxThread: WorkerThread?
    private let interruption = IOInterruption()
    private var audioWanted: Bool
    /// The audio stream played (the best one unless an audible option was selected).
    private var selectedAudioStream = -1
    /// The subtitle stream shown, if any.
    private var selectedSubtitleStream: Int?
    /// Every subtitle decoded so far, by start time (few and small: kept across seeks).
    private var subtitles: [TimedSubtitle] = []

    /// Video decoding threads (0 = FFmpeg's choice, frame threading).
    let videoThreadCount: Int
    /// The duration given to every video frame of a still image (``PlayerItem/stillImageDuration``).
    let stillImageDuration: MediaTime?

    init(
        source: String, audioFormat: AudioFormat, audioEnabled: Bool, videoThreadCount: Int = 0,
        stillImageDuration: MediaTime? = nil, onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.source = source
        self.stillImageDuration = stillImageDuration
        self.videoThreadCount = videoThreadCount
        self.audioFormat = audioFormat
        self.audioWanted = audioEnabled
        self.onEvent = onEvent
    }

    /// Starts the demux thread, which opens the input and then the decode threads.
    func start() {
        lock.withLock {
            guard demuxThread == nil, !stopping else { return }
            demuxThread = WorkerThread(name: "vitrine-demux") { [self] in demuxLoop() }
        }
    }

    /// Stops every thread of the item and waits for them. Idempotent.
    func stop() {
        let threads: [WorkerThread] = lock.withLock {
            stopping = true
            interruption.cancel()
            lock.broadcast()
            let demux = demuxThread
            demuxThread = nil
            return demux.map { [$0] } ?? []
        }
        threads.forEach { $0.join() }
        let decoders: [WorkerThread] = lock.withLock {
            let all = decodeThreads
            decodeThreads = []
            videoFrames.removeAll()
            audioBuffers.removeAll()
            videoPackets.removeAll()
            audioPackets.removeAll()
            return all
        }
        decoders.forEach { $0.join() }
        lock.withLock { input = nil }
    }

    // MARK: Consumer side (the engine)

    /// Starts a seek: every queue is flushed and the serial bumped. With `exact`, frames ending
    /// at or before `time` are decoded and discarded; otherwise playback resumes at the keyframe.
    @discardableResult
    func seek(to time: MediaTime, exact: Bool) -> Int {
        lock.withLock {
            serial += 1
            pendingSeek = time
            // Reading starts again: an earlier read or decode error may not happen this time.
            readFailure = nil
            decodeFailure = nil
            discardBefore = exact ? time : nil
            videoPackets.removeAll()
            audioPackets.removeAll()
            queuedBytes = 0
            videoQueuedDuration = .zero
            audioQueuedDuration = .zero
            videoFrames.removeAll()
            audioBuffers.removeAll()
            audioBufferedDuration = .zero
            lock.broadcast()
            return serial
        }
    }

    /// Runs `body` on the decoded video queue (only frames of the current serial are in it).
    func withVideoFrames<R>(_ body: (inout Deque<DecodedVideoFrame>) -> R) -> R {
        lock.withLock {
            let before = videoFrames.count
            let result = body(&videoFrames)
            if videoFrames.count != before { lock.broadcast(Waiter.videoRoom) }
            return result
        }
    }

    /// Why the item cannot play to its end, if it cannot: reading stopped on an error (not the end
    /// of the input), or a decoder rejected every packet from some point to the end (at least
    /// ``DecodeFailures/threshold`` in a row). See docs/playback-engine.md.
    var playbackFailure: MediaError? { lock.withLock { readFailure ?? decodeFailure } }

    /// Whether every video frame of the current serial has been decoded and taken.
    var videoFinished: Bool {
        lock.withLock { info.map { !$0.hasVideo } ?? false || (videoFinishedSerial == serial && videoFrames.isEmpty) }
    }

    /// Whether the decoder has delivered every frame of the current serial (some may be queued).
    var videoDecodeFinished: Bool { lock.withLock { videoFinishedSerial == serial } }

    /// Whether every audio buffer of the current serial has been decoded and taken.
    var audioFinished: Bool {
        lock.withLock { !audioWanted || info.map { !$0.hasAudio } ?? false || (audioFinishedSerial == serial && audioBuffers.isEmpty) }
    }

    /// Takes the next audio buffer, waiting up to `timeoutNanoseconds` for one.
    func takeAudio(timeoutNanoseconds: Int64) -> DecodedAudioBuffer? {
        lock.withLock {
            if audioBuffers.isEmpty && !stopping && audioFinishedSerial != serial {
                lock.wait(Waiter.consumer, timeoutNanoseconds: timeoutNanoseconds)
            }
            guard let first = audioBuffers.popFirst() else { return nil }
            audioBufferedDuration = audioBufferedDuration - first.buffer.duration
            lock.broadcast(Waiter.audioRoom)
            return first
        }
    }

    /// Takes every decoded frame and buffer, waiting (up to the timeout) while there is none:
    /// the consumer of ``DecodeBenchmark``. Returns the video frames and audio samples taken, and
    /// whether decoding has finished.
    func takeAllDecoded(timeoutNanoseconds: Int64) -> (videoFrames: Int, audioFrames: Int, finished: Bool) {
        lock.withLock {
            func finished() -> Bool {
                guard let info else { return false }
                let videoDone = !info.hasVideo || videoFinishedSerial == serial
                let audioDone = !info.hasAudio || !audioWanted || audioFinishedSerial == serial
                return videoDone && audioDone
            }
            if videoFrames.isEmpty && audioBuffers.isEmpty && !finished() && !stopping {
                lock.wait(Waiter.consumer, timeoutNanoseconds: timeoutNanoseconds)
            }
            let video = videoFrames.count
            let audio = audioBuffers.reduce(0) { $0 + $1.buffer.frameCount }
            videoFrames.removeAll(keepingCapacity: true)
            audioBuffers.removeAll(keepingCapacity: true)
            audioBufferedDuration = .zero
            if video > 0 || audio > 0 { lock.broadcast() }
            return (video, audio, finished() && videoFrames.isEmpty && audioBuffers.isEmpty)
        }
    }

    /// Looks at the next audio buffer without taking it.
    func peekAudio() -> DecodedAudioBuffer? { lock.withLock { audioBuffers.first } }

    /// Enables or disables the audio track (a disabled track is neither queued nor decoded).
    func setAudioEnabled(_ enabled: Bool) {
        lock.withLock {
            audioWanted = enabled
            if !enabled {
                audioPackets.removeAll()
                audioBuffers.removeAll()
                audioBufferedDuration = .zero
                audioQueuedDuration = .zero
            }
            lock.broadcast()
        }
        checkReady()
    }

    var audioEnabled: Bool { lock.withLock { audioWanted && (info?.hasAudio ?? false) } }

    /// Plays audio stream `index` instead (the caller seeks to flush what was queued).
    func selectAudioStream(_ index: Int) {
        lock.withLock {
            selectedAudioStream = index
            lock.broadcast()
        }
    }

    /// Shows subtitle stream `index`, or none.
    func selectSubtitleStream(_ index: Int?) {
        lock.withLock {
            if selectedSubtitleStream != index { subtitles.removeAll() }
            selectedSubtitleStream = index
        }
    }

    /// The subtitle shown at `time`, if any.
    func subtitle(at time: MediaTime) -> TimedSubtitle? {
        lock.withLock { subtitles.last { $0.start <= time && time < $0.end } }
    }

    /// Applies a selection made before the input was opened.
    func preselect(audioStream: Int?, subtitleStream: Int?) {
        lock.withLock {
            if let audioStream { selectedAudioStream = audioStream }
            selectedSubtitleStream = subtitleStream
        }
    }

    // MARK: Demux thread

    private func demuxLoop() {
        let opened: Demuxer
        do {
            opened = try Demuxer(source: source, openTimeout: .seconds(15), readTimeout: .seconds(10), interruption: interruption)
        } catch {
            onEvent(.failed(error))
            return
        }
        var videoIndex = Int32(opened.bestStream(of: AVMEDIA_TYPE_VIDEO) ?? -1)
        if videoIndex >= 0, (opened.stream(at: Int(videoIndex)).pointee.disposition & Int32(vitrine_av_disposition_attached_pic())) != 0 {
            videoIndex = -1
        }
        let audioIndex = av_find_best_stream(opened.context, AVMEDIA_TYPE_AUDIO, -1, videoIndex >= 0 ? videoIndex : -1, nil, 0)
        var videoDecoder: Decoder?
        var audioDecoder: Decoder?
        var setupError: MediaError?
        var audioError: MediaError?
        if videoIndex >= 0 {
            // Frame threading on as many threads as FFmpeg chooses.
            do { videoDecoder = try Decoder(stream: opened.stream(at: Int(videoIndex)), source: source, threadCount: videoThreadCount) } catch { setupError = error }
        }
        if audioIndex >= 0 {
            do { audioDecoder = try Decoder(stream: opened.stream(at: Int(audioIndex)), source: source, threadCount: 1) } catch {
                setupError = setupError ?? error
                audioError = error
            }
        }
        if videoDecoder == nil && audioDecoder == nil {
            onEvent(.failed(setupError ?? MediaError.playback(source, "cannot play", .noSuchTrack, detail: "(no video or audio track)")))
            return
        }
        var size = (width: 0, height: 0)
        var rotation = 0
        var aspect = 1.0
        if let videoDecoder {
            size = (Int(videoDecoder.context.pointee.width), Int(videoDecoder.context.pointee.height))
            let degrees = vitrine_stream_display_rotation(opened.stream(at: Int(videoIndex)))
            if !degrees.isNaN {
                rotation = ((Int((-degrees / 90).rounded()) * 90) % 360 + 360) % 360
            }
            let sar = opened.stream(at: Int(videoIndex)).pointee.sample_aspect_ratio
            if sar.num > 0 && sar.den > 0 { aspect = Double(sar.num) / Double(sar.den) }
        }
        var tracks: [TrackDescription] = []
        for index in 0..<opened.streamCount {
            let stream = opened.stream(at: index)
            let parameters = stream.pointee.codecpar.pointee
            let type: PlayerItemTrack.MediaType
            switch parameters.codec_type {
            case AVMEDIA_TYPE_VIDEO: type = .video
            case AVMEDIA_TYPE_AUDIO: type = .audio
            case AVMEDIA_TYPE_SUBTITLE: type = .subtitle
            default: type = .other
            }
            let language = av_dict_get(stream.pointee.metadata, "language", nil, 0).map { String(cString: $0.pointee.value) }
            tracks.append(TrackDescription(
                streamIndex: index, mediaType: type, codecName: String(cString: avcodec_get_name(parameters.codec_id)),
                languageCode: language,
                isPlayable: (index == Int(videoIndex) && videoDecoder != nil) || (index == Int(audioIndex) && audioDecoder != nil)))
        }
        let startTime = opened.startTime
        let pipelineInfo = PipelineInfo(
            duration: opened.duration.isNumeric && opened.duration > .zero ? opened.duration : .indefinite, hasVideo: videoDecoder != nil, hasAudio: audioDecoder != nil,
            presentationSize: size, isSeekable: opened.context.pointee.pb.map { $0.pointee.seekable != 0 } ?? true, tracks: tracks,
            audioTrackError: videoDecoder != nil ? audioError : nil)
        let proceed: Bool = lock.withLock {
            guard !stopping else { return false }
            input = opened
            if selectedAudioStream < 0 || opened.stream(at: min(selectedAudioStream, opened.streamCount - 1)).pointee.codecpar.pointee.codec_type != AVMEDIA_TYPE_AUDIO {
                selectedAudioStream = Int(audioIndex)
            }
            info = pipelineInfo
            if let videoDecoder {
                let stream = opened.stream(at: Int(videoIndex))
                let rate = stream.pointee.avg_frame_rate.num > 0 ? stream.pointee.avg_frame_rate : stream.pointee.r_frame_rate
                let converter = VideoFrameConverter(rotation: rotation, sampleAspectRatio: aspect)
                decodeThreads.append(WorkerThread(name: "vitrine-video") { [self] in
                    videoDecodeLoop(videoDecoder, converter: converter, startTime: startTime, frameRate: rate)
                })
            }
            if let audioDecoder {
                let resampler = AudioResampler(format: audioFormat)
                decodeThreads.append(WorkerThread(name: "vitrine-audio") { [self] in
                    audioDecodeLoop(audioDecoder, resampler: resampler, startTime: startTime)
                })
            }
            return true
        }
        guard proceed else { return }
        onEvent(.opened(pipelineInfo))
        checkReady()

        var loadedUntil = MediaTime.zero
        var lastReportedLoad = MediaTime.negativeInfinity
        var subtitleDecoder: SubtitleDecoder?
        while true {
            var seekTarget: MediaTime?
            let readSerial: Int? = lock.withLock {
                while !stopping && pendingSeek == nil && (demuxFinishedSerial == serial || queuesFull()) {
                    lock.wait(Waiter.demux)
                }
                if stopping { return nil }
                seekTarget = pendingSeek
                pendingSeek = nil
                return serial
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
                lock.withLock {
                    if serial == readSerial { demuxFinishedSerial = readSerial }
                    lock.broadcast()
                }
                // Everything is read: loaded to the end (the container's duration when it is known).
                let duration = pipelineInfo.duration
                onEvent(.loaded(until: duration.isNumeric ? max(duration, loadedUntil) : loadedUntil))
            case .failure(let error):
                lock.withLock {
                    if !stopping { readFailure = error }
                    if serial == readSerial { demuxFinishedSerial = readSerial }
                    lock.broadcast()
                }
            case .success(true):
                let box = QueuedPacket(packet: packet, serial: readSerial)
                let packet = packet.pointer.pointee
                let streamIndex = packet.stream_index
                let timeBase = opened.stream(at: Int(streamIndex)).pointee.time_base
                let duration = packet.duration > 0 ? MediaTime(ticks: packet.duration, timeBase: timeBase) : .zero
                if packet.pts != vitrine_av_nopts_value() {
                    let end = MediaTime(ticks: packet.pts, timeBase: timeBase) + duration - startTime
                    if end > loadedUntil { loadedUntil = end }
                }
                let (wantedSubtitle, audioStream) = lock.withLock { (selectedSubtitleStream, selectedAudioStream) }
                if let wantedSubtitle, Int(streamIndex) == wantedSubtitle {
                    if subtitleDecoder?.streamIndex != wantedSubtitle {
                        subtitleDecoder = SubtitleDecoder(stream: opened.stream(at: wantedSubtitle), index: wantedSubtitle, referenceSize: size)
                    }
                    if let decoded = subtitleDecoder?.decode(box.packet, startTime: startTime) {
                        lock.withLock {
                            guard selectedSubtitleStream == wantedSubtitle, !subtitles.contains(where: { $0.start == decoded.start }) else { return }
                            subtitles.append(decoded)
                            subtitles.sort { $0.start < $1.start }
                        }
                    }
                    continue
                }
                lock.withLock {
                    guard serial == readSerial else { return }
                    if streamIndex == videoIndex {
                        videoPackets.append(box)
                        videoQueuedDuration = videoQueuedDuration + duration
                    } else if Int(streamIndex) == audioStream && audioWanted {
                        audioPackets.append(box)
                        audioQueuedDuration = audioQueuedDuration + duration
                    } else {
                        return
                    }
                    queuedBytes += Int(packet.size)
                    lock.broadcast(streamIndex == videoIndex ? Waiter.videoWork : Waiter.audioWork)
                }
                if loadedUntil - lastReportedLoad >= MediaTime(value: 1, timescale: 2) {
                    lastReportedLoad = loadedUntil
                    onEvent(.loaded(until: loadedUntil))
                }
            }
        }
    }

    /// Whether the demuxer should wait: too many bytes queued, or every played stream has
    /// enough queued. Called with the lock held.
    private func queuesFull() -> Bool {
        if queuedBytes >= ItemPipeline.maxQueuedBytes { return true }
        guard let info else { return false }
        let videoFull = !info.hasVideo || videoQueuedDuration >= ItemPipeline.maxQueuedDuration || videoPackets.count >= 120
        let audioFull = !info.hasAudio || !audioWanted || audioQueuedDuration >= ItemPipeline.maxQueuedDuration || audioPackets.count >= 400
        return videoFull && audioFull
    }

    // MARK: Decode threads

    /// A stream timestamp in item time (the container's start time is item time 0), kept in the
    /// stream's own timescale so it reads like ffprobe's.
    private func itemTime(ticks: Int64, timeBase: AVRational, startTime: MediaTime) -> MediaTime {
        let time = MediaTime(ticks: ticks, timeBase: timeBase)
        guard startTime != .zero else { return time }
        return (time - startTime).convertScale(time.timescale)
    }

    private enum Work {
        case packet(QueuedPacket)
        case drain(serial: Int)
        case stop
    }

    /// Waits for the next packet of `queue`, or the end of input. Called on a decode thread.
    private func nextWork(video: Bool) -> Work {
        lock.withLock {
            while true {
                if stopping { return .stop }
                if video, let packet = videoPackets.popFirst() {
                    queuedBytes -= Int(packet.packet.pointer.pointee.size)
                    if packet.packet.pointer.pointee.duration > 0 { videoQueuedDuration = max(.zero, videoQueuedDuration - packetDuration(packet)) }
                    lock.broadcast(Waiter.demux)
                    if packet.serial == serial { return .packet(packet) }
                    continue
                }
                if !video, let packet = audioPackets.popFirst() {
                    queuedBytes -= Int(packet.packet.pointer.pointee.size)
                    if packet.packet.pointer.pointee.duration > 0 { audioQueuedDuration = max(.zero, audioQueuedDuration - packetDuration(packet)) }
                    lock.broadcast(Waiter.demux)
                    if packet.serial == serial { return .packet(packet) }
                    continue
                }
                let finished = video ? videoFinishedSerial : audioFinishedSerial
                if demuxFinishedSerial == serial && finished != serial { return .drain(serial: serial) }
                lock.wait(video ? Waiter.videoWork : Waiter.audioWork)
            }
        }
    }

    private func packetDuration(_ packet: QueuedPacket) -> MediaTime {
        guard let input else { return .zero }
        let timeBase = input.stream(at: packet.packet.streamIndex).pointee.time_base
        return MediaTime(ticks: packet.packet.pointer.pointee.duration, timeBase: timeBase)
    }

    private func videoDecodeLoop(_ decoder: Decoder, converter: VideoFrameConverter, startTime: MediaTime, frameRate: AVRational) {
        var cursor = DecoderCursor()
        // One frame box per decoded picture (it becomes the VideoFrame's storage), not per
        // receive call: the call that answers "needs input" reuses it.
        var box = Frame()
        let nominalDuration = frameRate.num > 0 ? MediaTime(value: Int64(frameRate.den), timescale: frameRate.num) : .invalid
        while true {
            var drainSerial: Int?
            switch nextWork(video: true) {
            case .stop: return
            case .packet(let packet): cursor.send(packet, to: decoder)
            case .drain(let serial):
                cursor.drain(decoder, serial: serial)
                drainSerial = serial
            }
            while cursor.receive(from: decoder, into: box) {
                let pts = presentationTime(of: box, decoder: decoder, cursor: cursor, startTime: startTime)
                let frameDuration = stillImageDuration
                    ?? (box.pointer.pointee.pkt_duration > 0
                        ? MediaTime(ticks: box.pointer.pointee.pkt_duration, timeBase: decoder.timeBase) : nominalDuration)
                cursor.nextPTS = pts + frameDuration
                let decoded = box
                box = Frame()
                guard let frame = converter.convert(decoded, presentationTime: pts, duration: frameDuration) else { continue }
                if !push(video: DecodedVideoFrame(frame: frame, serial: cursor.serial)) { return }
            }
            if let drainSerial { finishDrain(serial: drainSerial, failure: cursor.failures.failure, video: true) }
        }
    }

    /// The stream has been decoded to its end for `drainSerial`: records it (and a decode failure
    /// that lasted to the end) unless a seek started a newer serial meanwhile.
    private func finishDrain(serial drainSerial: Int, failure: MediaError?, video: Bool) {
        lock.withLock {
            if serial == drainSerial {
                if video { videoFinishedSerial = drainSerial } else { audioFinishedSerial = drainSerial }
                if let failure, decodeFailure == nil { decodeFailure = failure }
            }
            lock.broadcast()
        }
        checkReady()
    }

    /// A decoded frame's time in the item: its best-effort timestamp, else where the previous
    /// frame ended, else zero.
    private func presentationTime(of box: Frame, decoder: Decoder, cursor: DecoderCursor, startTime: MediaTime) -> MediaTime {
        let raw = box.pointer.pointee.best_effort_timestamp
        let pts = raw == vitrine_av_nopts_value() ? cursor.nextPTS : itemTime(ticks: raw, timeBase: decoder.timeBase, startTime: startTime)
        return pts.isNumeric ? pts : .zero
    }

    /// Queues a frame, waiting for room. Returns `false` when the pipeline stops.
    private func push(video frame: DecodedVideoFrame) -> Bool {
        let queued: Bool? = lock.withLock {
            while !stopping && serial == frame.serial && videoFrames.count >= ItemPipeline.videoFrameCapacity {
                lock.wait(Waiter.videoRoom)
            }
            if stopping { return nil }
            guard serial == frame.serial else { return false }
            if let discardBefore, frame.end <= discardBefore { return false }
            videoFrames.append(frame)
            lock.broadcast(Waiter.consumer)
            return true
        }
        guard let queued else { return false }
        if queued { checkReady() }
        return true
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
                    let stream = lock.withLock { input?.stream(at: packet.packet.streamIndex) }
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
                guard let buffer = resampler.convert(box, presentationTime: pts) else { continue }
                cursor.nextPTS = pts + buffer.duration
                if !push(audio: DecodedAudioBuffer(buffer: buffer, serial: cursor.serial)) { return }
            }
            if let drainSerial { finishDrain(serial: drainSerial, failure: cursor.failures.failure, video: false) }
        }
    }

    private func push(audio buffer: DecodedAudioBuffer) -> Bool {
        let queued: Bool? = lock.withLock {
            while !stopping && serial == buffer.serial && audioWanted
                && audioBufferedDuration >= ItemPipeline.audioBufferedDuration {
                lock.wait(Waiter.audioRoom)
            }
            if stopping { return nil }
            guard serial == buffer.serial, audioWanted else { return false }
            if let discardBefore, buffer.buffer.presentationTime + buffer.buffer.duration <= discardBefore { return false }
            audioBuffers.append(buffer)
            audioBufferedDuration = audioBufferedDuration + buffer.buffer.duration
            lock.broadcast(Waiter.consumer)
            return true
        }
        guard let queued else { return false }
        if queued { checkReady() }
        return true
    }

    /// Reports `.ready` once: first video frame decoded (or no video) and audio primed.
    private func checkReady() {
        let nowReady: Bool = lock.withLock {
            guard !readyReported, let info else { return false }
            let videoReady = !info.hasVideo || !videoFrames.isEmpty || videoFinishedSerial == serial
            let audioReady = !info.hasAudio || !audioWanted || !audioBuffers.isEmpty || audioFinishedSerial == serial
            guard videoReady && audioReady else { return false }
            readyReported = true
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
    mutating func send(_ packet: QueuedPacket, to decoder: Decoder) {
        if packet.serial != serial {
            decoder.flush()
            serial = packet.serial
            nextPTS = .invalid
            failures.reset()
        }
        do { _ = try decoder.send(packet.packet) } catch { failures.note(error) }
    }

    /// Puts the decoder in draining mode for the end of input at `drainSerial`.
    mutating func drain(_ decoder: Decoder, serial drainSerial: Int) {
        if serial != drainSerial {
            decoder.flush()
            serial = drainSerial
        }
        _ = try? decoder.send(nil)
    }

    /// Receives the next frame into `box`: `true` when there is one, `false` when the decoder
    /// needs input, has drained (it is then flushed for reuse) or failed (the error is noted).
    mutating func receive(from decoder: Decoder, into box: Frame) -> Bool {
        do {
            switch try decoder.receive(into: box) {
            case .frame:
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

/// The decode errors of one stream since its last decoded frame. A decoder that rejects every
/// packet from some point to the end of input leaves the item unable to play to its end; a
/// short run of damaged packets that the decoder gets past is only concealed or skipped.
struct DecodeFailures {
    /// Packets rejected in a row, up to the end of input, that make the stream a failure.
    static let threshold = 25

    private(set) var count = 0
    private(set) var last: MediaError?

    mutating func note(_ error: MediaError) {
        count += 1
        last = error
    }

    mutating func reset() {
        count = 0
        last = nil
    }

    /// The error to report when the input ends now.
    var failure: MediaError? { count >= Self.threshold ? last : nil }
}
