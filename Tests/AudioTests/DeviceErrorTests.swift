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
