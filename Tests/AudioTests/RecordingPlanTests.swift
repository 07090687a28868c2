import Testing
@testable import Audio

/// Which captured frames a recorder writes, block by block (48 kHz: a frame every 20 833.3 ns).
@Suite("RecordingPlan")
struct RecordingPlanTests {
    /// Blocks `blocks` of `frames` frames each (block 0 starts at host time 0), taken in turn; the
    /// absolute frame indices written.
    func written(_ plan: inout RecordingPlan, blocks: Range<Int>, frames: Int = 1_200) -> [Int] {
        var result: [Int] = []
        for block in blocks {
            let start = Int64(block * frames) * 1_000_000_000 / 48_000
            for range in plan.take(blockStart: start, count: frames, sampleRate: 48_000) {
                result += range.map { block * frames + $0 }
            }
        }
        return result
    }

    /// Host nanoseconds of frame `frame`.
    func time(_ frame: Int) -> Int64 { Int64(frame) * 1_000_000_000 / 48_000 }

    @Test("frames from the start time on are written, cut inside a block")
    func startsAtItsTime() {
        var plan = RecordingPlan()
        plan.record(from: time(1_500))
        let frames = written(&plan, blocks: 0..<3)
        #expect(frames.first == 1_500)
        #expect(frames == Array(1_500..<3_600))
    }

    @Test("a pause and a resume leave out exactly the frames between them")
    func pauseAndResume() {
        var plan = RecordingPlan()
        plan.record(from: time(100))
        plan.pause(at: time(1_000))
        plan.record(from: time(2_000))
        let frames = written(&plan, blocks: 0..<3)
        #expect(frames == Array(100..<1_000) + Array(2_000..<3_600))
        #expect(Set(frames).count == frames.count)
    }

    @Test("a resume that asks for a time before the pause does not record a frame twice")
    func noOverlap() {
        var plan = RecordingPlan()
        plan.record(from: 0)
        plan.pause(at: time(1_000))
        plan.record(from: time(500))
        #expect(written(&plan, blocks: 0..<2) == Array(0..<2_400))
    }

    @Test("a duration counts recorded frames only, across a pause, and then completes")
    func durationBudget() {
        var plan = RecordingPlan()
        plan.record(from: 0, frames: 2_000)
        plan.pause(at: time(1_500))
        plan.record(from: time(3_000))
        let frames = written(&plan, blocks: 0..<5)
        #expect(frames == Array(0..<1_500) + Array(3_000..<3_500))
        #expect(plan.isComplete)
        #expect(!plan.isRecording(at: time(4_000)))
    }

    @Test("stop keeps the frames before it and completes once the capture has passed it")
    func stop() {
        var plan = RecordingPlan()
        plan.record(from: 0)
        plan.stop(at: time(1_300))
        #expect(!plan.isComplete)
        #expect(written(&plan, blocks: 0..<1) == Array(0..<1_200))
        #expect(!plan.isComplete)
        #expect(written(&plan, blocks: 1..<3).count == 100)
        #expect(plan.isComplete)
        plan.record(from: time(5_000))
        #expect(!plan.isOpen, "a stopped plan records nothing more")
    }

    @Test("a pause before a scheduled start cancels it")
    func pauseCancelsScheduledStart() {
        var plan = RecordingPlan()
        plan.record(from: time(2_000))
        #expect(plan.isOpen)
        #expect(!plan.isRecording(at: time(1_000)))
        plan.pause(at: time(1_000))
        #expect(!plan.isOpen)
        #expect(written(&plan, blocks: 0..<3).isEmpty)
    }
}
