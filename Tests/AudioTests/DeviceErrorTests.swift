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
        _ = try #require(first, "the silent clock never started")
        // The clock keeps to real time: each reading's host time minus its media time (its offset)
        // stays the same while the clock runs at rate 1. A loaded host can leave the audio thread
        // waiting for a CPU for a while: the clock falls behind (the offset grows), then the pacing
        // catches up, and the offset is back at its lowest. So wait for two readings at least 0.3 s
        // apart that both sit within a few periods of the lowest offset seen: a clock that stood
        // still (offset growing) or ran fast (offset shrinking, by more than the slack in 0.3 s)
        // never gives them.
        let format = ALSAOutput.silentFormat(output.configuration)
        let slack = Double(4 * format.periodFrames) / Double(format.sampleRate) + 0.02
        var readings: [(host: Double, offset: Double)] = []
        var keptTime = false
        while !keptTime, readings.last.map({ $0.host - readings[0].host }) ?? 0 < 3.5 {
            usleep(50_000)
            let reading = try #require(input.currentReading())
            readings.append((reading.hostTime.seconds, (reading.hostTime - reading.mediaTime).seconds))
            let lowest = readings.map(\.offset).min()!
            let onTime = readings.filter { $0.offset - lowest <= slack }
            keptTime = onTime.last!.host - onTime.first!.host >= 0.3
        }
        #expect(keptTime, "the silent clock did not keep to the host clock: offsets \(readings.map { ($0.offset * 1000).rounded() }) ms")
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
