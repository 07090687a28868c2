import Foundation
import MediaTime
import Playback
import Testing
@testable import Audio

@Suite(
    "The position reported to the engine on a clocked device (private PulseAudio null sink)",
    .enabled(if: PrivatePulseServer.isInstalled, "needs pulseaudio and libasound2-plugins (scripts/setup.sh)"),
    .serialized)
struct ClockTests {
    @Test("the reported media time advances in real time, so video slaved to it stays within 20 ms")
    func realTimePosition() async throws {
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        let input = output.makeInput(label: "soundtrack")
        let feeder = Feeder(sink: input, seconds: nil)
        output.start()
        defer {
            feeder.stop()
            output.stop()
        }
        // A sound server may take a moment to start consuming; measure once sound flows.
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })

        var readings: [AudioClockReading] = []
        for _ in 0..<40 {
            if let reading = input.currentReading() { readings.append(reading) }
            try await Task.sleep(for: .milliseconds(50))
        }
        let first = try #require(readings.first)
        let last = try #require(readings.last)
        // Video slaved to audio shows the frame for `reading.mediaTime + (now − reading.hostTime)`:
        // its error against an ideal clock started at the first reading is the drift below.
        var worst = 0.0
        for reading in readings {
            let mediaElapsed = (reading.mediaTime - first.mediaTime).seconds
            let hostElapsed = (reading.hostTime - first.hostTime).seconds
            worst = max(worst, abs(mediaElapsed - hostElapsed))
        }
        #expect(worst <= 0.020, "A/V drift \(worst * 1000) ms")
        #expect((last.mediaTime - first.mediaTime).seconds > 1.5)
        #expect(zip(readings, readings.dropFirst()).allSatisfy { $0.mediaTime <= $1.mediaTime })
        // What is heard lags what was written by the device latency: position = written − delay.
        #expect(output.xrunCount == 0)
    }

    @Test("pausing an input holds its clock; resuming continues from the same media time")
    func pauseHoldsClock() async throws {
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        let input = output.makeInput(label: "soundtrack")
        let feeder = Feeder(sink: input, seconds: nil)
        output.start()
        defer {
            feeder.stop()
            output.stop()
        }
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })
        input.setPaused(true)
        try await Task.sleep(for: .milliseconds(400))  // the device buffer plays out
        let held = try #require(input.currentReading()).mediaTime
        try await Task.sleep(for: .milliseconds(300))
        #expect(try #require(input.currentReading()).mediaTime == held)
        input.setPaused(false)
        #expect(try await waitUntil { (input.currentReading()?.mediaTime ?? .zero) > held })
    }

    @Test("a device that fails mid-play posts route changes, the clock keeps running, and sound returns")
    func routeChange() async throws {
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration(),
            reopenIntervalMilliseconds: 200))
        let input = output.makeInput(label: "soundtrack")
        let changes = output.routeChanges
        let feeder = Feeder(sink: input, seconds: nil)
        output.start()
        defer {
            feeder.stop()
            output.stop()
        }
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })

        server.stop()
        var iterator = changes.makeAsyncIterator()
        let lost = await iterator.next()
        #expect(lost?.reason == .oldDeviceUnavailable)
        #expect(lost?.previousDevice == "vitrine_pulse")
        #expect(output.currentDeviceName == nil)

        // Video keeps going: the position still advances in real time while silent
        // (after a one-time step over the samples the failed device had buffered).
        try await Task.sleep(for: .milliseconds(100))
        let before = try #require(input.currentReading())
        try await Task.sleep(for: .milliseconds(500))
        let after = try #require(input.currentReading())
        let advanced = (after.mediaTime - before.mediaTime).seconds
        let elapsed = (after.hostTime - before.hostTime).seconds
        #expect(abs(advanced - elapsed) < 0.05, "advanced \(advanced) s in \(elapsed) s")

        try server.start()
        let back = await iterator.next()
        #expect(back?.reason == .newDeviceAvailable)
        #expect(back?.currentDevice == "vitrine_pulse")
        #expect(output.currentDeviceName == "vitrine_pulse")
        let resumed = try #require(input.currentReading()).mediaTime
        #expect(try await waitUntil { (input.currentReading()?.mediaTime ?? .zero) > resumed + .init(value: 1, timescale: 4) })
    }
}
