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
