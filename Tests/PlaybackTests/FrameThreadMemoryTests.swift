import ChildProcesses
import Foundation
import MediaSinks
import MediaTime
import Testing
@testable import Playback

/// A source whose video needed frame threads opens on them the next time it plays, so a heavy
/// item does not run late at every lap of a loop until its first keyframe.
@Suite("Frame-thread memory")
struct FrameThreadMemoryTests {
    @Test("a source is remembered until more than the capacity of others are remembered after it; remembering it again makes it the newest")
    func bounded() {
        let memory = FrameThreadMemory(capacity: 2)
        memory.remember("a")
        memory.remember("b")
        memory.remember("a")
        memory.remember("c")
        #expect(memory.needsFrameThreads("a"))
        #expect(!memory.needsFrameThreads("b"))
        #expect(memory.needsFrameThreads("c"))
        #expect(!memory.needsFrameThreads("d"))
    }

    @Test("a pipeline whose video moved to frame threads remembers its source; the next pipeline of that source starts on them, another source on one thread")
    func pipelinesRemember() throws {
        let clip = try makeClip("heavy")
        let other = try makeClip("light")
        defer {
            try? FileManager.default.removeItem(atPath: clip)
            try? FileManager.default.removeItem(atPath: other)
        }
        let memory = FrameThreadMemory()

        // A load limit of zero: any stream is too heavy, the move comes at the first keyframe
        // after the load has been measured (frame 12 of this 12-frame GOP).
        let first = ItemPipeline(source: clip, audioFormat: AudioFormat(), audioEnabled: false, frameThreadMemory: memory, videoLoadLimit: 0) { _ in }
        first.start()
        let moved = play(first, until: { first.isVideoFrameThreaded })
        first.stop()
        #expect(moved, "the first pipeline never moved to frame threads")
        #expect(memory.needsFrameThreads(clip))

        // The default limit: this small clip is light, but its source is remembered.
        let second = ItemPipeline(source: clip, audioFormat: AudioFormat(), audioEnabled: false, frameThreadMemory: memory) { _ in }
        second.start()
        #expect(play(second, frames: 1), "no frame from the second pipeline")
        #expect(second.isVideoFrameThreaded, "the remembered source started on one thread")
        second.stop()

        let third = ItemPipeline(source: other, audioFormat: AudioFormat(), audioEnabled: false, frameThreadMemory: memory) { _ in }
        third.start()
        // A move could only come at a keyframe after eight frames measured: the first frame is
        // a one-thread decoder's, whatever the machine's load.
        #expect(play(third, frames: 1), "no frame from the third pipeline")
        #expect(!third.isVideoFrameThreaded, "a source not remembered started on frame threads")
        #expect(play(third, frames: 30), "no frames from the third pipeline")
        third.stop()
        // Remembered only if it moved (a light stream on a machine so busy that it read as heavy).
        #expect(memory.needsFrameThreads(other) == third.isVideoFrameThreaded)
    }

    /// Takes decoded frames off `pipeline`'s queue (so it decodes on) until `condition` holds
    /// or the stream ends; 20 s at most.
    private func play(_ pipeline: ItemPipeline, until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            pipeline.withVideoFrames { $0.removeAll() }
            if pipeline.videoFinished { return condition() }
            usleep(2_000)
        }
        return condition()
    }

    /// Takes `frames` decoded frames off `pipeline`'s queue; false when they do not come within 20 s.
    private func play(_ pipeline: ItemPipeline, frames: Int) -> Bool {
        var taken = 0
        return play(pipeline, until: {
            taken += pipeline.withVideoFrames { queue in
                defer { queue.removeAll() }
                return queue.count
            }
            return taken >= frames
        })
    }

    private func makeClip(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-\(name)-\(UUID().uuidString).mkv").path
        let result = try ChildProcess.run(
            "ffmpeg",
            ["-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=3",
             "-c:v", "libx264", "-x264-params", "keyint=12:min-keyint=12:scenecut=0", "-pix_fmt", "yuv420p", path])
        try #require(result.status == 0, "ffmpeg: \(result.stderr)")
        return path
    }
}
