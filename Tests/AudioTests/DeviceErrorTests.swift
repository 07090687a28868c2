import Glibc
import MediaSinks
import MediaTime
import Testing
@testable import Audio

@Suite("Opening devices that do not work")
struct DeviceErrorTests {
    @Test("an unknown device name fails with an error listing the PCMs and suggesting --no-audio")
    func unknownDevice() throws {
        do {
            _ = try ALSAOutput(configuration: .init(deviceName: "no_such_vitrine_device"))
            Issue.record("opening an unknown device succeeded")
        } catch {
            guard case .unknownDevice(let name, _, let available) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(name == "no_such_vitrine_device")
            #expect(available.contains("null") || available.contains("default"))
            #expect(error.description.contains("--no-audio"))
            #expect(error.description.contains("no_such_vitrine_device"))
            #expect(error.description.contains("available PCMs"))
        }
    }

    @Test("waiting for the device, an output without one starts anyway: its inputs' clocks run in silence on the host clock")
    func waitsForDevice() throws {
        let output = try ALSAOutput(configuration: .init(deviceName: "no_such_vitrine_device", reopenIntervalMilliseconds: 200),
                                    waitsForDevice: true)
        defer { output.stop() }
        guard case .unknownDevice(let name, _, _) = output.unavailableReason else {
            Issue.record("expected the unknown device as the reason, got \(String(describing: output.unavailableReason))")
            return
        }
        #expect(name == "no_such_vitrine_device")
        #expect(output.currentDeviceName == nil)
        let input = output.makeInput(label: "soundtrack")
        try output.start()
        // Four seconds of sound, so the clock has media to run through while the test watches it.
        let sound = AudioBuffer(samples: [Float](repeating: 0.25, count: 48_000 * 2 * 4), format: output.format, presentationTime: .zero)
        #expect(input.enqueue(sound))
        var first: AudioClockReading?
        for _ in 0..<500 where first == nil {
            first = input.currentReading()
            if first == nil { usleep(10_000) }
        }
        let start = try #require(first, "the silent clock never started")
        // The clock follows real time: never ahead of the host clock by more than the periods the
        // loop may mix in advance, and on it again once the audio thread has run (a loaded host can
        // leave the thread waiting for a CPU for a while; its pacing then catches up). A clock
        // that stood still, ran free or ran slow fails one of the two.
        let format = ALSAOutput.silentFormat(output.configuration)
        let slack = Double(4 * format.periodFrames) / Double(format.sampleRate) + 0.02
        var onTime: (advanced: Double, elapsed: Double)?
        var last = (advanced: 0.0, elapsed: 0.0)
        while onTime == nil, last.elapsed < 3.5 {
            usleep(50_000)
            let later = try #require(input.currentReading())
            last = ((later.mediaTime - start.mediaTime).seconds, (later.hostTime - start.hostTime).seconds)
            #expect(last.advanced <= last.elapsed + slack, "ahead of the host clock: \(last.advanced) s in \(last.elapsed) s")
            if last.elapsed >= 0.3, abs(last.advanced - last.elapsed) <= slack { onTime = last }
        }
        #expect(onTime != nil, "the silent clock did not keep to the host clock: \(last.advanced) s in \(last.elapsed) s")
        #expect(output.currentDeviceName == nil)
    }

    @Test("broken ALSA configuration text is reported as such")
    func invalidConfiguration() {
        #expect(throws: AudioOutputError.self) {
            _ = try ALSAOutput(configuration: .init(deviceName: "x", configurationText: "pcm.x { type"))
        }
    }
}

@Suite("The command line's audio options")
struct AudioOutputOptionsTests {
    @Test("--no-audio opens nothing")
    func noAudio() throws {
        #expect(try ALSAOutput.open(AudioOutputOptions(deviceName: "no_such_vitrine_device", isDisabled: true)) == nil)
    }

    @Test("--volume outside 0…1 is rejected with the flag's name")
    func volumeRange() {
        #expect(throws: AudioOptionsError.volumeOutOfRange(1.5)) { try AudioOutputOptions(volume: 1.5).validate() }
        #expect(AudioOptionsError.volumeOutOfRange(1.5).description.contains("--volume"))
    }

    @Test("--audio-device with an unknown name fails before playback starts")
    func unknownDevice() {
        #expect(throws: AudioOutputError.self) { _ = try ALSAOutput.open(AudioOutputOptions(deviceName: "no_such_vitrine_device")) }
    }
}
