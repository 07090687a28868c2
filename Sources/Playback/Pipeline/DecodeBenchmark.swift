import MediaAsset
import MediaTime
import Synchronization
public import MediaSinks
import Threading

/// Decodes a whole file through the engine's pipeline as fast as it goes, for `vitrine bench`:
/// the same demux thread, queues, decoders and audio resampling as playback, with no clock.
public enum DecodeBenchmark {
    /// What was decoded.
    public struct Result: Sendable {
        public var videoFrames: Int
        public var audioFrames: Int
    }

    /// Decodes every video frame and every audio sample of `source`.
    /// - Parameter videoThreads: decoding threads for video (0 = FFmpeg's choice).
    public static func run(source: String, videoThreads: Int = 0, audioFormat: AudioFormat = AudioFormat()) throws(MediaError) -> Result {
        let failure = LockedValue<MediaError?>(nil)
        let opened = Atomic<Bool>(false)
        let pipeline = ItemPipeline(source: source, audioFormat: audioFormat, audioEnabled: true, videoThreadCount: videoThreads) { event in
            switch event {
            case .failed(let error): failure.withLock { $0 = error }
            case .opened: opened.store(true, ordering: .releasing)
            default: break
            }
        }
        pipeline.start()
        defer { pipeline.stop() }
        var result = Result(videoFrames: 0, audioFrames: 0)
        while true {
            if let error = failure.withLock({ $0 }) { throw error }
            let taken = pipeline.takeAllDecoded(timeout: .milliseconds(50))
            result.videoFrames += taken.videoFrames
            result.audioFrames += taken.audioFrames
            if taken.finished && opened.load(ordering: .acquiring) { break }
        }
        if let error = pipeline.readFailure { throw error }
        return result
    }
}
