import Synchronization

/// The sources whose video needed FFmpeg's frame threads when they last played, remembered for
/// the life of the process.
///
/// A ``VideoStreamDecoder`` starts on one thread and moves to frame threads at a keyframe once
/// decoding takes too much of each frame's time; until that keyframe a stream too heavy for one
/// thread runs late. On a weak CPU that would happen at every start of the same item — every lap
/// of a looping playlist, every day's programme. A source remembered here opens on frame threads
/// at once. Only sources are remembered (at most ``capacity``, the least recently remembered
/// forgotten first); a source is never remembered as light, so the safe choice, frame threads, is
/// the one that sticks.
///
/// Safe from any thread.
final class FrameThreadMemory: Sendable {
    /// The memory the player's pipelines share.
    static let shared = FrameThreadMemory()

    /// How many sources are remembered at most.
    let capacity: Int
    /// Remembered sources, the least recently remembered first.
    private let sources: Mutex<[String]>

    init(capacity: Int = 256) {
        self.capacity = max(1, capacity)
        sources = Mutex([])
    }

    /// Remembers that `source`'s video needed frame threads.
    func remember(_ source: String) {
        sources.withLock { sources in
            sources.removeAll { $0 == source }
            sources.append(source)
            if sources.count > capacity { sources.removeFirst(sources.count - capacity) }
        }
    }

    /// Whether `source`'s video needed frame threads when it last played.
    func needsFrameThreads(_ source: String) -> Bool {
        sources.withLock { $0.contains(source) }
    }
}
