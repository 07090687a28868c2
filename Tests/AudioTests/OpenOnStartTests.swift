import Foundation
import MediaSinks
import MediaTime
import Synchronization
import Testing
import Threading
@testable import Audio

/// What an output made with ``ALSAOutput/init(configuration:opensOnStart:)`` reported, and on which thread.
private final class OpenReports: Sendable {
    private let reports = Mutex<[(result: Result<DeviceFormat, AudioOutputError>, thread: String)]>([])

    func record(_ result: Result<DeviceFormat, AudioOutputError>) {
        let thread = NamedThread.currentName ?? "?"
        reports.withLock { $0.append((result, thread)) }
    }

    var all: [(result: Result<DeviceFormat, AudioOutputError>, thread: String)] { reports.withLock { $0 } }
}

@Suite("An output that opens its device on its own thread")
struct OpenOnStartTests {
    @Test("nothing is opened before start; the audio thread opens the device, says so once, and plays the inputs from their first sample, bit-exact")
    func opensOnTheAudioThread() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("capture.wav")
        let reports = OpenReports()
        let samples = sine(frequency: 440, amplitude: 0.5, frames: 9_600)
        let output = ALSAOutput(
            configuration: .init(deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file), inputQueueFrames: 9_601),
            opensOnStart: { reports.record($0) })
        let input = output.makeInput(label: "test")
        for buffer in audioBuffers(samples, format: output.format) { #expect(input.enqueue(buffer)) }
        #expect(output.currentDeviceName == nil)
        #expect(reports.all.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: file), "the file plugin's file exists before start: the device was opened")

        try output.start()
        #expect(try await waitUntil { input.queuedFrames == 0 && !reports.all.isEmpty })
        let end = output.deviceTime + MediaTime(value: 4_800, timescale: 48_000)
        _ = try await waitUntil { output.deviceTime >= end }
        #expect(output.currentDeviceName == "vitrine_capture")
        output.stop()

        let report = try #require(reports.all.first)
        #expect(reports.all.count == 1)
        #expect(report.thread == "vitrine-audio-o")  // "vitrine-audio-out" as the kernel keeps it
        guard case .success(let format) = report.result else {
            Issue.record("the open failed: \(report.result)")
            return
        }
        #expect(format.sampleRate == 48_000 && format.channelCount == 2)
        // The device opened after the samples were queued: none of them was played into the void.
        let expected = samples.map { Int16(($0 * 32768).rounded(.toNearestOrEven)) }
        let captured = try readWAVSamples(file)
        #expect(captured.count >= expected.count)
        #expect(Array(captured.prefix(expected.count)) == expected)
    }

    @Test("a device that cannot be opened is reported from the audio thread with the PCMs there are; the output plays on in silence")
    func unknownDevice() async throws {
        let reports = OpenReports()
        let output = ALSAOutput(
            configuration: .init(deviceName: "no_such_vitrine_device", reopenIntervalMilliseconds: 200), opensOnStart: { reports.record($0) })
        defer { output.stop() }
        let input = output.makeInput(label: "soundtrack")
        #expect(input.enqueue(AudioBuffer(
            samples: [Float](repeating: 0.25, count: 48_000 * 2), format: output.format, presentationTime: .zero)))
        try output.start()
        #expect(try await waitUntil { !reports.all.isEmpty })
        let report = try #require(reports.all.first)
        #expect(report.thread == "vitrine-audio-o")  // "vitrine-audio-out" as the kernel keeps it
        guard case .failure(.unknownDevice(let name, _, let available)) = report.result else {
            Issue.record("expected the unknown device, got \(report.result)")
            return
        }
        #expect(name == "no_such_vitrine_device")
        #expect(available.contains("null") || available.contains("default"))
        #expect(output.unavailableReason == nil)
        // The silent clock runs through the queued second of sound.
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.2 })
        #expect(output.currentDeviceName == nil)
        // The retries are not reported again.
        try await Task.sleep(for: .milliseconds(500))
        #expect(reports.all.count == 1)
    }
}
