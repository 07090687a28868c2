import MediaSinks
import MediaTime
import Testing
@testable import Audio

/// A stream input's alignment (``MixerInput/align(mediaTime:atHostTime:)``) when the sound is
/// behind: what arrives wholly before the media time due at the next period is dropped on arrival,
/// and the period that follows starts exactly on that media time.
@Suite("Aligning a stream that is behind")
struct AlignmentTests {
    static let format = AudioFormat(sampleRate: 48_000, channelCount: 2)

    /// The mixer one second into a running device whose next period (device frame 48 000) is heard
    /// at host 10.1 s, with one stream input asked to have media time 5 s heard at host 10 s: the
    /// next period must start at 5.1 s.
    static func state(aligned: Bool = true, running: Bool = true) -> OutputState {
        var state = OutputState(
            deviceFormat: DeviceFormat(sampleRate: 48_000, channelCount: 2, sampleFormat: .s16, periodFrames: 1_200, bufferFrames: 4_800),
            rampFrames: 0)
        state.isClockRunning = running
        state.framesWritten = 48_000
        state.heardFrameStamp = 43_200
        state.stampHostNanos = 10_000_000_000
        var input = MixerInputState(id: 1, label: "soundtrack", source: .stream(StreamQueue()), channelCount: 2, rampFrames: 0)
        if aligned { input.alignment = (MediaTime(value: 5, timescale: 1), 10_000_000_000) }
        state.inputs.append(input)
        return state
    }

    static func buffer(at seconds: Double, frames: Int = 1_024) -> AudioBuffer {
        AudioBuffer(samples: [Float](repeating: 0.25, count: frames * 2), format: format,
                    presentationTime: MediaTime(value: Int64(seconds * 48_000), timescale: 48_000))
    }

    @Test("a buffer that ends before the media time due at the next period is dropped on arrival; one that reaches it is kept")
    func dropsOnArrival() {
        let state = Self.state()
        #expect(state.alignmentPasses(Self.buffer(at: 4), input: 0))
        // 1 024 frames from 5.078 s end at 5.0993 s: all before 5.1 s.
        #expect(state.alignmentPasses(Self.buffer(at: 5.078), input: 0))
        #expect(!state.alignmentPasses(Self.buffer(at: 5.08), input: 0))
        #expect(!state.alignmentPasses(Self.buffer(at: 6), input: 0))
    }

    @Test("nothing is dropped on arrival without an alignment or before the device clock runs")
    func keepsWithoutAlignment() {
        #expect(!Self.state(aligned: false).alignmentPasses(Self.buffer(at: 4), input: 0))
        #expect(!Self.state(running: false).alignmentPasses(Self.buffer(at: 4), input: 0))
    }

    @Test("the period after the drops starts on the aligned media time, and the alignment is done")
    func periodStartsOnTarget() {
        var state = Self.state()
        guard case .stream(var queue) = state.inputs[0].source else { Issue.record("not a stream"); return }
        for index in 0..<3 { queue.append(Self.buffer(at: 5.08 + Double(index) * 1_024 / 48_000)) }
        state.inputs[0].source = .stream(queue)
        var mix = [Float](repeating: 0, count: 1_200 * 2)
        var scratch = mix
        mix.withUnsafeMutableBufferPointer { mixBuffer in
            scratch.withUnsafeMutableBufferPointer { scratchBuffer in
                _ = state.mixPeriod(into: mixBuffer.baseAddress!, scratch: scratchBuffer.baseAddress!, frames: 1_200)
            }
        }
        #expect(state.inputs[0].alignment == nil)
        guard case .stream(let after) = state.inputs[0].source else { Issue.record("not a stream"); return }
        // 5.1 s was heard first; one period (25 ms) later the queue's head is 5.125 s.
        #expect(after.headTime(sampleRate: 48_000) == MediaTime(value: 5_125, timescale: 1_000))
        #expect(mix.allSatisfy { $0 != 0 }, "the whole period sounds: no silence before the aligned sample")
    }
}
