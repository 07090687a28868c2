/// Which captured frames go into the file: spans of host time (``record()`` opens one,
/// ``pause()`` closes it), an optional budget of frames (``record(forDuration:)``), and the moment
/// ``stop()`` was asked for. The capture thread hands it each block of frames with the host time of
/// the block's first frame and writes the ranges it gets back, so a pause and a resume leave
/// neither a gap nor a repeated frame in the file: every frame captured while recording is
/// written once, every other frame never.
///
/// All times are `MonotonicClock` nanoseconds, the timeline of ``AudioRecorder/deviceCurrentTime``.
struct RecordingPlan: Sendable, Hashable {
    /// Frames captured from `start` (inclusive) until `end` (exclusive; open while recording).
    struct Span: Sendable, Hashable {
        var start: Int64
        var end: Int64?
    }

    private(set) var spans: [Span] = []
    /// Frames still to record before the recording ends by itself, if it was given a duration.
    private(set) var remainingFrames: Int64?
    /// Frames at or after this host time are not recorded, and the recording ends once the capture
    /// has passed it.
    private(set) var stopTime: Int64?
    /// Whether the recording is over (stopped, or its duration recorded).
    private(set) var isComplete = false

    /// Records from `time` on; with `frames`, only that many frames more, then the recording ends.
    /// While recording (an open span that has begun or will) it changes nothing but the budget.
    mutating func record(from time: Int64, frames: Int64? = nil) {
        guard !isComplete, stopTime == nil else { return }
        if frames != nil { remainingFrames = frames }
        if let last = spans.last, last.end == nil { return }
        // Never before the end of the last span: no frame is written twice.
        spans.append(Span(start: max(time, spans.last?.end ?? time), end: nil))
    }

    /// Stops recording frames captured at or after `time`; a span that would only begin later is dropped.
    mutating func pause(at time: Int64) {
        guard let index = spans.indices.last, spans[index].end == nil else { return }
        if spans[index].start >= time {
            spans.removeLast()
        } else {
            spans[index].end = time
        }
    }

    /// Ends the recording at `time`: later frames are not recorded.
    mutating func stop(at time: Int64) {
        pause(at: time)
        if stopTime == nil { stopTime = time }
    }

    /// Whether a frame captured at `time` is recorded (the budget aside).
    func isRecording(at time: Int64) -> Bool {
        guard !isComplete else { return false }
        if let stopTime, time >= stopTime { return false }
        return spans.contains { $0.start <= time && $0.end.map { time < $0 } ?? true }
    }

    /// Whether a span is open (recording now or from a later start).
    var isOpen: Bool { !isComplete && spans.last.map { $0.end == nil } ?? false }

    /// The start of the open span, if any.
    var openStart: Int64? { isOpen ? spans.last?.start : nil }

    /// The frames of a block to write: `count` frames, the first captured at `firstHostNanos`, one
    /// every `1/sampleRate` s. Spent budget is taken off; spans wholly before the block are forgotten.
    /// The ranges are block-relative and in order; the recording is complete when the budget runs out
    /// or the block reaches ``stopTime``.
    mutating func take(blockStart firstHostNanos: Int64, count: Int, sampleRate: Int) -> [Range<Int>] {
        guard !isComplete, count > 0 else { return [] }
        /// The index of the first frame of the block captured at or after `time`.
        func index(_ time: Int64) -> Int {
            let offset = time - firstHostNanos
            guard offset > 0 else { return 0 }
            // ceil(offset * rate / 1e9), in 128-bit-safe steps.
            let (whole, rest) = offset.quotientAndRemainder(dividingBy: 1_000_000_000)
            let frames = whole * Int64(sampleRate) + (rest * Int64(sampleRate) + 999_999_999) / 1_000_000_000
            return Int(min(Int64(count), frames))
        }
        var ranges: [Range<Int>] = []
        var limit = count
        if let stopTime { limit = index(stopTime) }
        for span in spans {
            let lower = index(span.start)
            let upper = min(limit, span.end.map(index) ?? count)
            guard lower < upper else { continue }
            var range = lower..<upper
            if let remaining = remainingFrames {
                range = lower..<(lower + Int(min(Int64(range.count), remaining)))
                remainingFrames = remaining - Int64(range.count)
            }
            if !range.isEmpty { ranges.append(range) }
            if remainingFrames == 0 { break }
        }
        // Closed spans that ended before this block's end can never record again.
        let blockEnd = firstHostNanos + Int64(count) * 1_000_000_000 / Int64(sampleRate)
        spans.removeAll { span in span.end.map { $0 <= blockEnd } ?? false }
        if remainingFrames == 0 || (stopTime.map { limit < count || $0 <= blockEnd } ?? false) {
            isComplete = true
            spans.removeAll()
        }
        return ranges
    }
}
