import Foundation
import MediaTime
import Playback
import Synchronization
import Testing
import MediaSinks
@testable import Audio
import Threading

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
        try output.start()
        defer {
            feeder.stop()
            output.stop()
        }
        // A sound server may take a moment to start consuming; measure once sound flows.
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })

        // An underrun (this shared 2-core machine can starve the audio thread) is a real gap in
        // the sound, counted and recovered; measure a window without one, three tries at most.
        var readings: [AudioClockReading] = []
        for _ in 0..<3 {
            readings = []
            let xrunsBefore = output.xrunCount
            for _ in 0..<40 {
                if let reading = input.currentReading() { readings.append(reading) }
                try await Task.sleep(for: .milliseconds(50))
            }
            if output.xrunCount == xrunsBefore { break }
            _ = try await waitUntil { input.currentReading().map { $0.mediaTime > readings.last!.mediaTime + .init(value: 1, timescale: 2) } ?? false }
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
    }

    @Test("an idle output keeps two periods of silence ahead of the device, so a first sample is heard that soon; sound fills the buffer")
    func idleFill() async throws {
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        try output.start()
        defer { output.stop() }
        let format = output.deviceFormat
        let buffered = { output.shared.withLock { $0.deviceBufferedFrames } }
        let idleLimit = try await Self.waitUntilIdle(output)
        let idle = try await Self.sampleFill(of: output, times: 50)
        #expect(idle.allSatisfy { $0 <= idleLimit }, "frames buffered while idle (limit \(idleLimit)): \(idle)")

        // Sound: the output writes as far ahead as the device takes again, so a late audio thread
        // does not make a gap in what is heard.
        let input = output.makeInput(label: "soundtrack")
        let feeder = Feeder(sink: input, seconds: nil)
        defer { feeder.stop() }
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.2 })
        let full = format.bufferFrames - format.periodFrames
        #expect(try await waitUntil { (buffered() ?? 0) >= full }, "sound never filled the buffer: \(buffered() ?? -1) of \(format.bufferFrames)")
    }

    @Test("an idle output whose device stops consuming for a while gives it no more silence: the next sound is not held back")
    func idleFillWhileDeviceStalls() async throws {
        let server = try PrivatePulseServer()
        defer { server.thaw() }
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        try output.start()
        defer { output.stop() }
        let format = output.deviceFormat
        let buffered = { output.shared.withLock { $0.deviceBufferedFrames } }
        let idleLimit = try await Self.waitUntilIdle(output)
        // A sound server starved on a busy host: for several periods' time nothing is consumed.
        server.freeze()
        let stalled = try await Self.sampleFill(of: output, times: 30)
        server.thaw()
        #expect(stalled.allSatisfy { $0 <= idleLimit }, "frames buffered while the device consumed nothing (limit \(idleLimit)): \(stalled)")
        // Once the device consumes again the idle output goes on as before.
        let written = output.shared.withLock { $0.framesWritten }
        #expect(try await waitUntil { output.shared.withLock { $0.framesWritten } > written + Int64(format.bufferFrames) })
        #expect(try await waitUntil { (buffered() ?? .max) <= idleLimit })
    }

    /// Waits until a started output with nothing to play is idle, and returns the most frames it
    /// may then keep in the device. With nothing to play the device starts with a buffer of
    /// silence (after the wait for a first sound); once it has played more than that (a sound
    /// server may take a second or two to start consuming), the idle output lets it play down to
    /// two periods and keeps it there (a write adds a third before the next wait).
    static func waitUntilIdle(_ output: ALSAOutput) async throws -> Int {
        let format = output.deviceFormat
        let idleLimit = (AudioThread.idleFillPeriods + 1) * format.periodFrames
        #expect(format.bufferFrames > idleLimit, "\(format)")
        let consumed = Int64(format.bufferFrames + idleLimit)
        #expect(try await waitUntil {
            output.shared.withLock { $0.isClockRunning && $0.framesWritten > consumed && ($0.deviceBufferedFrames ?? .max) <= idleLimit }
        })
        return idleLimit
    }

    /// The device's fill as the audio thread last read it, `times` times 10 ms apart.
    static func sampleFill(of output: ALSAOutput, times: Int) async throws -> [Int] {
        var fills: [Int] = []
        for _ in 0..<times {
            fills.append(try #require(output.shared.withLock { $0.deviceBufferedFrames }))
            try await Task.sleep(for: .milliseconds(10))
        }
        return fills
    }

    @Test("a device just opened starts with the first sound, not with a buffer of silence in front of it")
    func startsWithFirstSound() async throws {
        let server = try PrivatePulseServer()
        // A wait longer than any test host's delay, so the sound always comes within it.
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration(), firstSoundWaitMilliseconds: 60_000))
        try output.start()
        defer { output.stop() }
        try await Task.sleep(for: .milliseconds(100))
        #expect(output.shared.withLock { $0.framesWritten } == 0, "the device was given silence before any sound")
        let input = output.makeInput(label: "soundtrack")
        let feeder = Feeder(sink: input, seconds: nil)
        defer { feeder.stop() }
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.2 })
        // The device's first frame was the stream's first sample: the device clock and the stream's
        // media time are the same time (with a buffer of silence first, the device would be ahead).
        let reading = try #require(input.currentReading())
        let device = output.deviceTime
        let ahead = (device - reading.mediaTime).seconds - (MonotonicClock().now() - reading.hostTime).seconds
        #expect(abs(ahead) < 0.02, "device clock ahead of the stream by \(ahead * 1000) ms")
    }

    @Test("pausing an input holds its clock; resuming continues from the same media time")
    func pauseHoldsClock() async throws {
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        let input = output.makeInput(label: "soundtrack")
        let feeder = Feeder(sink: input, seconds: nil)
        try output.start()
        defer {
            feeder.stop()
            output.stop()
        }
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })
        input.setPaused(true)
        // The device buffer plays out (however long a busy host takes), then the clock holds: wait
        // until it has not moved for a quarter of a second, then it must stay there.
        let clock = ContinuousClock()
        var last = try #require(input.currentReading()).mediaTime
        var since = clock.now
        #expect(try await waitUntil {
            let now = input.currentReading()?.mediaTime ?? .zero
            if now != last { (last, since) = (now, clock.now) }
            return clock.now - since > .milliseconds(250)
        })
        let held = last
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
        try output.start()
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

        // Video keeps going: the position still advances in real time while silent, apart from one
        // step over the samples the failed device had buffered (whenever a busy host gets to it).
        var readings: [AudioClockReading] = []
        for _ in 0..<16 {
            readings.append(try #require(input.currentReading()))
            try await Task.sleep(for: .milliseconds(50))
        }
        let deviations = zip(readings, readings.dropFirst()).map { before, after in
            abs((after.mediaTime - before.mediaTime).seconds - (after.hostTime - before.hostTime).seconds)
        }.sorted()
        let steady = deviations.dropLast()  // all but the step
        #expect(steady.reduce(0, +) < 0.05, "deviations from real time: \(deviations)")

        try server.start()
        let back = await iterator.next()
        #expect(back?.reason == .newDeviceAvailable)
        #expect(back?.currentDevice == "vitrine_pulse")
        #expect(output.currentDeviceName == "vitrine_pulse")
        let resumed = try #require(input.currentReading()).mediaTime
        #expect(try await waitUntil { (input.currentReading()?.mediaTime ?? .zero) > resumed + .init(value: 1, timescale: 4) })
    }

    @Test("when the device stays gone, sound moves to the configured fallback device")
    func fallbackDevice() async throws {
        let server = try PrivatePulseServer()
        let directory = try TemporaryDirectory()
        let capture = directory.path("fallback.wav")
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", fallbackDeviceName: "vitrine_capture",
            configurationText: server.alsaConfiguration() + captureConfiguration(file: capture),
            reopenIntervalMilliseconds: 200))
        let input = output.makeInput(label: "soundtrack")
        let changes = output.routeChanges
        let feeder = Feeder(sink: input, seconds: nil, amplitude: 0.5)
        try output.start()
        #expect(try await waitUntil { (input.currentReading()?.mediaTime.seconds ?? 0) > 0.3 })
        server.stop()
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.reason == .oldDeviceUnavailable)
        let moved = await iterator.next()
        #expect(moved?.reason == .newDeviceAvailable)
        #expect(moved?.currentDevice == "vitrine_capture")
        let resumed = try #require(input.currentReading()).mediaTime
        #expect(try await waitUntil { (input.currentReading()?.mediaTime ?? .zero) > resumed + .init(value: 1, timescale: 5) })
        feeder.stop()
        output.stop()
        #expect(try readWAVSamples(capture).contains { abs(Int($0)) > 10_000 })
    }

    @Test("the engine slaves video to the ALSA clock: each frame appears within 20 ms of its sound",
          .enabled(if: ProcessInfo.processInfo.environment["VITRINE_SANITIZER"] == nil,
                   "measures real-time behaviour: meaningless under a sanitizer (scripts/tsan.sh: 21.3 ms once on a slow host)"))
    func engineAVSync() async throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("clip.mp4")
        try ffmpeg([
            "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=8", "-f", "lavfi",
            "-i", "sine=frequency=440:sample_rate=48000:duration=8", "-c:v", "libx264", "-preset", "ultrafast",
            "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2", source,
        ])
        let server = try PrivatePulseServer()
        let output = try ALSAOutput(configuration: .init(
            deviceName: "vitrine_pulse", configurationText: server.alsaConfiguration()))
        let soundtrack = output.makeInput(label: "soundtrack")
        try output.start()
        defer { output.stop() }
        let readings = LockedValue<[AudioClockReading]>([])
        let frames = LockedValue<[PresentedFrame]>([])
        let refreshClock = WakeRecordingClock()
        let player = Player(
            item: PlayerItem(url: source), videoSink: try NullVideoSink(refreshRate: 60, clock: refreshClock), audioSink: soundtrack)
        player.setPresentationHandler { record in
            if case .frame(let frame) = record { frames.withLock { $0.append(frame) } }
        }
        player.play()
        for _ in 0..<1000 {
            if let reading = soundtrack.currentReading() { readings.withLock { $0.append(reading) } }
            try await Task.sleep(for: .milliseconds(20))
            if frames.withLock({ $0.last?.audioClock?.seconds ?? 0 }) > 6.5 { break }
        }
        player.invalidate()

        // Once audio is heard it is the master clock (before that the private sound server is
        // still starting, a second or two, and the engine paces video on the display clock; the
        // sound then joins the picture where it has got to, so the clip is long enough to leave
        // seconds of playback on the sound's clock).
        var seen = Set<MediaTime>()
        var engineOffsets: [Double] = []
        var heardOffsets: [Double] = []
        let samples = readings.withLock { $0 }.filter { $0.mediaTime.seconds > 0.3 }
        var engineLateness: [Double] = []
        let wakes = refreshClock.wakes
        for frame in frames.withLock({ $0 }) where frame.audioClock != nil && seen.insert(frame.presentationTime).inserted {
            // The audio time the engine read from this output at the refresh that showed the frame.
            let offset = frame.audioClock!.seconds - frame.presentationTime.seconds
            engineOffsets.append(offset)
            // A frame can appear no sooner than the first refresh after its sound: one refresh
            // (16.7 ms) after it at worst — or, when the test's refresh thread itself woke late
            // (a loaded machine), the time since the refresh before, however long that was.
            let interval = refreshInterval(endingAt: frame.presentedAt, wakes: wakes) ?? 1.0 / 60
            engineLateness.append(offset - max(interval, 1.0 / 60))
            // The same, from the test's own readings of the output (polled every 20 ms).
            if let before = samples.last(where: { $0.hostTime <= frame.presentedAt }),
               samples.contains(where: { $0.hostTime >= frame.presentedAt }) {
                heardOffsets.append((before.mediaTime + (frame.presentedAt - before.hostTime)).seconds - frame.presentationTime.seconds)
            }
        }
        #expect(engineOffsets.count >= 10, "\(engineOffsets.count) frames presented on the audio clock")
        // A frame appears at the first refresh at or after its time: up to one refresh late.
        let worst = max(engineLateness.max() ?? 1, engineOffsets.map { -$0 }.max() ?? 1)
        #expect(worst <= 0.020, "worst A/V offset \(worst * 1000) ms over \(engineOffsets.count) frames")
        // The test's independent readings agree, within their own 20 ms polling jitter.
        let worstHeard = heardOffsets.map { max($0 - 1.0 / 60, -$0) }.max() ?? 0
        #expect(worstHeard <= 0.040, "worst A/V offset from the test's readings \(worstHeard * 1000) ms")
    }
}

/// The real time between the refresh the sink scheduled at `end` and the one before it, in seconds
/// (nil when either was not seen).
private func refreshInterval(endingAt end: MediaTime, wakes: [MediaTime: MediaTime]) -> Double? {
    guard let woke = wakes[end], let before = wakes.filter({ $0.key < end }).max(by: { $0.key < $1.key }) else { return nil }
    return (woke - before.value).seconds
}

/// The monotonic clock, noting when each sleep really ended: a refresh thread paced by it can
/// wake late on a loaded machine, and the engine then reads the sound's clock at that later time.
private final class WakeRecordingClock: HostClock {
    private let clock = MonotonicClock()
    private let woke = LockedValue<[MediaTime: MediaTime]>([:])

    /// Each deadline slept until, with the host time the sleep returned.
    var wakes: [MediaTime: MediaTime] { woke.withLock { $0 } }

    func now() -> MediaTime { clock.now() }
    func wallClockTime(at host: MediaTime) -> MediaTime { clock.wallClockTime(at: host) }
    func sleep(until deadline: MediaTime) {
        clock.sleep(until: deadline)
        let now = clock.now()
        woke.withLock { $0[deadline] = now }
    }
}
