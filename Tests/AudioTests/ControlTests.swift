import Foundation
import MediaTime
import Playback
import Testing
import MediaSinks
@testable import Audio

@Suite("Volume, pan, mute and metering")
struct ControlTests {
    let format = AudioFormat(sampleRate: 48_000, channelCount: 2)

    @Test("an input's volume scales its samples from the first one, with no fade-in")
    func volumeScales() async throws {
        let directory = try TemporaryDirectory()
        let tone = sine(frequency: 440, amplitude: 0.8, frames: 9_600)
        let captured = try await capture(audioBuffers(tone, format: format), in: directory) { _, input in
            input.volume = 0.5
        }
        let expected = tone.map { Int(($0 * 0.5 * 32768).rounded()) }
        #expect(captured.count >= expected.count)
        #expect(zip(captured, expected).allSatisfy { abs(Int($0) - $1) <= 1 })
    }

    @Test("pan −1 leaves only the left channel, +1 only the right, 0 both at full level")
    func panBalance() async throws {
        let directory = try TemporaryDirectory()
        let tone = sine(frequency: 440, amplitude: 0.5, frames: 4_800)
        let left = try await capture(audioBuffers(tone, format: format), in: directory) { _, input in input.pan = -1 }
        let right = try await capture(audioBuffers(tone, format: format), in: directory) { _, input in input.pan = 1 }
        let expected = tone.map { Int16(($0 * 32768).rounded(.toNearestOrEven)) }
        for frame in 0..<4_800 {
            #expect(left[frame * 2] == expected[frame * 2] && left[frame * 2 + 1] == 0)
            #expect(right[frame * 2] == 0 && right[frame * 2 + 1] == expected[frame * 2 + 1])
            if left[frame * 2 + 1] != 0 || right[frame * 2] != 0 { break }
        }
    }

    @Test("muting mid-stream ramps down without a click and ends in silence")
    func muteRamps() async throws {
        let directory = try TemporaryDirectory()
        let tone = sine(frequency: 100, amplitude: 0.5, frames: 48_000 * 5)
        nonisolated(unsafe) var mutedAt: Int64 = 0
        let captured = try await capture(audioBuffers(tone, format: format), in: directory, tailFrames: 9_600) { _, _ in
        } during: { output, input in
            _ = try await waitUntil { output.deviceTime.seconds > 0.1 }
            input.isMuted = true
            mutedAt = output.deviceTime.convertScale(48_000).value
        }
        // A 100 Hz tone at 0.5 moves at most ~215 LSB per sample; a hard cut would jump thousands.
        var largestStep = 0
        for index in stride(from: 2, to: captured.count, by: 2) {
            largestStep = max(largestStep, abs(Int(captured[index]) - Int(captured[index - 2])))
        }
        #expect(largestStep < 400)
        // Silent from at most two periods (written ahead of what is heard) plus the 20 ms ramp on.
        let silentFrom = Int(mutedAt) + 2 * 1_200 + 960
        #expect(captured.count / 2 > silentFrom + 4_800)
        #expect(captured.dropFirst(silentFrom * 2).allSatisfy { $0 == 0 })
        #expect(captured.prefix(4_800).contains { abs(Int($0)) > 10_000 })
    }

    @Test("metering reports RMS and peak in dBFS for the mix and for each input")
    func metering() async throws {
        let directory = try TemporaryDirectory()
        // Long enough to be still playing when a starved test task gets to read the meters (a
        // 5 s tone had ended by then in a loaded run: the last period was silence, -160 dBFS).
        let tone = sine(frequency: 1_000, amplitude: 0.5, frames: 48_000 * 30)
        nonisolated(unsafe) var outputLevels: (average: Float, peak: Float) = (0, 0)
        nonisolated(unsafe) var readAt = MediaTime.zero
        nonisolated(unsafe) var inputAverage: Float = 0
        nonisolated(unsafe) var silentLevel: Float = 0
        _ = try await capture(audioBuffers(tone, format: format), in: directory) { output, input in
            output.isMeteringEnabled = true
            input.isMeteringEnabled = true
            input.volume = 0.5
            output.updateMeters()
            silentLevel = output.averagePower(forChannel: 0)
        } during: { output, input in
            _ = try await waitUntil { output.deviceTime.seconds > 0.1 }
            output.updateMeters()
            input.updateMeters()
            outputLevels = (output.averagePower(forChannel: 1), output.peakPower(forChannel: 1))
            inputAverage = input.averagePower(forChannel: 0)
            readAt = output.deviceTime
        }
        #expect(readAt.seconds < 29, "the meters were read after the tone (at \(readAt.seconds) s)")
        // 0.5 × 0.5 = 0.25 peak: −12.04 dBFS; RMS 0.25/√2: −15.05 dBFS.
        #expect(silentLevel == -160)
        #expect(abs(outputLevels.average - -15.05) < 0.2)
        #expect(abs(outputLevels.peak - -12.04) < 0.2)
        #expect(abs(inputAverage - -15.05) < 0.2)
    }

    @Test("the master volume scales the whole mix")
    func masterVolume() async throws {
        let directory = try TemporaryDirectory()
        let tone = sine(frequency: 440, amplitude: 0.8, frames: 4_800)
        let captured = try await capture(audioBuffers(tone, format: format), in: directory) { output, _ in
            output.masterVolume = 0.25
        }
        // The master stage ramps from 1 to 0.25 over 20 ms, then holds.
        let settled = (1_920..<4_800).map { captured[$0 * 2] }
        let expected = (1_920..<4_800).map { Int((tone[$0 * 2] * 0.25 * 32768).rounded()) }
        #expect(zip(settled, expected).allSatisfy { abs(Int($0) - $1) <= 1 })
    }
}
