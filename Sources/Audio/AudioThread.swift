internal import CALSA
import MediaTime
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The loop of the thread that owns the PCM: mix a period, convert, write, stamp the clock from
/// the device's position readings (smoothed by ``DevicePositionFilter``); on device failure, run
/// the same loop silently on the host clock and try to reopen.
struct AudioThread {
    let shared: ConditionLock<OutputState, StateChanged>
    let configuration: ALSAOutput.Configuration
    var device: PCMDevice?
    /// Set when this thread opens the device itself (``ALSAOutput/init(configuration:opensOnStart:)``).
    let openReport: (@Sendable (Result<DeviceFormat, AudioOutputError>) -> Void)?

    init(
        shared: ConditionLock<OutputState, StateChanged>, configuration: ALSAOutput.Configuration, device: PCMDevice?,
        openReport: (@Sendable (Result<DeviceFormat, AudioOutputError>) -> Void)? = nil
    ) {
        self.shared = shared
        self.configuration = configuration
        self.device = device
        self.openReport = openReport
    }

    mutating func run() {
        var lastReopenNanos: Int64 = 0
        if let openReport {
            device = openFirst(report: openReport)
            // A device that did not open is tried again a whole interval later.
            lastReopenNanos = MonotonicClock.nanosecondsNow()
        } else {
            device?.claim()
        }
        let channels = configuration.channelCount
        let rate = Int64(configuration.sampleRate)
        // Without a device (not there yet) the loop runs the silent clock in the format asked for.
        var format = device?.format ?? shared.withLock { $0.deviceFormat }
        var mix = [Float](repeating: 0, count: format.periodFrames * channels)
        var scratch = mix
        var bytes = [UInt8](repeating: 0, count: format.periodFrames * channels * 4)
        // Pacing for devices that do not block (the null/file plugins) and for the silent clock:
        // host time of frame `paceFrames` after `paceBaseNanos`.
        var paceBaseNanos: Int64?
        var paceFrames: Int64 = 0
        var position = DevicePositionFilter(sampleRate: Int(rate), periodFrames: format.periodFrames)
        // Underruns are logged at most once every 10 s (a device that keeps running dry would
        // otherwise fill the journal), each line with the count so far.
        var underrunLoggedNanos: Int64?
        let refillFrames = configuration.inputQueueFrames / 2

        // The device opened with the output is not started until the first sound (or the wait's
        // end). One that comes back later starts at once: the silent clock ran until then.
        if device != nil { waitForFirstSound(format: format) }
        while true {
            let frames = format.periodFrames
            let mixed = mix.withUnsafeMutableBufferPointer { mixBuffer in
                scratch.withUnsafeMutableBufferPointer { scratchBuffer in
                    shared.withLock { state -> (handlers: [@Sendable () -> Void], firstFrame: Int64)? in
                        if state.stopRequested { return nil }
                        let handlers = state.mixPeriod(
                            into: mixBuffer.baseAddress!, scratch: scratchBuffer.baseAddress!, frames: frames)
                        return (handlers, state.framesWritten)
                    }
                }
            }
            guard let mixed else { break }
            for handler in mixed.handlers { handler() }

            var heardFrame: Int64
            var isClocked = false
            var buffered: Int?
            var recovered = 0
            if let current = device {
                ALSAOutput.convert(mix, frames: frames * channels, to: &bytes, format: format.sampleFormat)
                do {
                    try bytes.withUnsafeBytes { try current.write(
                            $0, frames: frames, stallTimeoutMilliseconds: configuration.stallTimeoutMilliseconds,
                            recovered: &recovered) }
                    let delay = current.delay() ?? 0
                    buffered = current.bufferedFrames()
                    heardFrame = mixed.firstFrame + Int64(frames) - Int64(delay)
                    isClocked = delay > 0
                } catch {
                    lose(current, error: error as? ALSAError ?? ALSAError(function: "snd_pcm_writei", code: -EIO))
                    paceBaseNanos = nil
                    lastReopenNanos = MonotonicClock.nanosecondsNow()
                    heardFrame = mixed.firstFrame
                }
            } else {
                heardFrame = mixed.firstFrame
            }
            if isClocked {
                paceBaseNanos = nil
            } else {
                // Not blocked by a device: hold the loop to real time, one period ahead at most.
                let now = MonotonicClock.nanosecondsNow()
                if paceBaseNanos == nil {
                    paceBaseNanos = now
                    paceFrames = 0
                }
                paceFrames += Int64(frames)
                let deadline = paceBaseNanos! + (paceFrames - Int64(frames)) * 1_000_000_000 / rate
                if deadline > now { MonotonicClock().sleep(until: .nanoseconds(deadline)) }
                heardFrame = mixed.firstFrame
            }
            let now = MonotonicClock.nanosecondsNow()
            let running = isClocked ? (device?.isRunning ?? false) : true
            if isClocked, running, recovered == 0 {
                // Never past what the device has been given.
                heardFrame = min(position.smoothed(frame: heardFrame, atHostNanos: now), mixed.firstFrame + Int64(frames))
            } else {
                position.reset()
            }
            let (wakesProducers, isIdle, underruns) = shared.withLock { state in
                state.framesWritten = mixed.firstFrame + Int64(frames)
                state.heardFrameStamp = max(0, heardFrame)
                state.stampHostNanos = now
                state.isClockRunning = running
                state.xrunCount += recovered
                state.deviceBufferedFrames = buffered
                return (state.inputs.contains { $0.isStream && $0.queuedFrames <= refillFrames }, !state.hasPendingSound, state.xrunCount)
            }
            if recovered > 0, let current = device, underrunLoggedNanos.map({ now - $0 >= 10_000_000_000 }) ?? true {
                underrunLoggedNanos = now
                ALSAOutput.logger.warning("audio output \(current.name): underrun, the device ran dry and started again (\(underruns) so far)")
            }
            // Producers blocked in enqueue are woken only once a stream has drained to half its
            // queue, so they refill in bursts: a feeder (and the decoder behind it) wakes a few
            // times a second instead of every period. Flushes, closes and stops wake them at once.
            if wakesProducers { shared.broadcast() }
            if isIdle, isClocked, running, let buffered, let current = device {
                idle(buffered: buffered, format: format, device: current)
            }

            if device == nil, now - lastReopenNanos >= Int64(configuration.reopenIntervalMilliseconds) * 1_000_000 {
                // The silent clock stands still while the open is tried (readings extrapolate four
                // periods) and catches up after it; the interval counts from the attempt's end, so
                // however slow the open, the clock has that long to run between attempts.
                let reopened = reopen()
                lastReopenNanos = MonotonicClock.nanosecondsNow()
                if let reopened {
                    device = reopened
                    format = reopened.format
                    position = DevicePositionFilter(sampleRate: Int(rate), periodFrames: format.periodFrames)
                    mix = [Float](repeating: 0, count: format.periodFrames * channels)
                    scratch = mix
                    bytes = [UInt8](repeating: 0, count: format.periodFrames * channels * 4)
                    paceBaseNanos = nil
                }
            }
        }
        let drain = shared.withLock { $0.drainOnStop }
        device?.close(drain: drain)
        device = nil
    }

    /// Silence kept ahead of a running clocked device while no input has sound to play: two
    /// periods, enough to ride out a late wake-up. The device's whole buffer of silence would put
    /// the first sample fed after it a buffer's time (the output's latency) behind.
    static let idleFillPeriods = 2

    /// While the output is idle, sleeps until the device has played its buffer down to
    /// ``idleFillPeriods`` or until an input has a period of sound to play (a producer's samples
    /// wake it), whichever comes first. The device's fill is read again after each sleep: a device
    /// that consumed late (a sound server starved on a busy host) is not given more silence on the
    /// strength of the time alone, which would fill its buffer and put the next sound that much
    /// later. A device that consumes nothing for the stall timeout is written to anyway, so the
    /// write's own stall detection judges it.
    private func idle(buffered: Int, format: DeviceFormat, device: PCMDevice) {
        let target = AudioThread.idleFillPeriods * format.periodFrames
        let giveUp = MonotonicClock.nanosecondsNow() + Int64(configuration.stallTimeoutMilliseconds) * 1_000_000
        var buffered = buffered
        while buffered > target {
            let timeout = Duration.nanoseconds(Int64(buffered - target) * 1_000_000_000 / Int64(format.sampleRate))
            if wait(timeout: timeout, until: { $0.hasSound(atLeast: format.periodFrames) }) { return }
            guard MonotonicClock.nanosecondsNow() < giveUp, let now = device.bufferedFrames() else { return }
            buffered = now
        }
    }

    /// Before a device just opened is given anything: waits, for
    /// ``ALSAOutput/Configuration/firstSoundWaitMilliseconds`` at most, for an input to have a
    /// device buffer's worth of sound, so the device starts with the sound instead of a buffer of
    /// silence in front of it (which would make the first sample heard a buffer's time late).
    /// Meanwhile the device is not started and its clock does not run, as for a device slow to
    /// start; a clip, or a start at a later device frame, does not wait.
    private func waitForFirstSound(format: DeviceFormat) {
        guard configuration.firstSoundWaitMilliseconds > 0 else { return }
        let frames = min(format.bufferFrames, configuration.inputQueueFrames)
        wait(timeout: .milliseconds(configuration.firstSoundWaitMilliseconds)) { $0.hasSound(atLeast: frames) }
    }

    /// Sleeps until `hasWork` holds, a stop is asked, or `timeout` passes; a producer's enqueue
    /// wakes it while ``OutputState/isAudioThreadIdle`` says it sleeps.
    /// Returns whether it woke for work or a stop rather than the timeout.
    @discardableResult
    private func wait(timeout: Duration, until hasWork: (OutputState) -> Bool) -> Bool {
        shared.withLock(waitingUntil: { state in
            let ready = state.stopRequested || hasWork(state)
            state.isAudioThreadIdle = !ready
            return ready
        }, timeout: timeout) { state in
            state.isAudioThreadIdle = false
            return state.stopRequested || hasWork(state)
        }
    }

    /// Closes a failed device and tells the observers.
    private mutating func lose(_ failed: PCMDevice, error: ALSAError) {
        failed.close(drain: false)
        device = nil
        ALSAOutput.logger.warning("audio device \(failed.name) failed: \(error); continuing silently")
        shared.withLock { state in
            state.currentDevice = nil
            state.post(AudioRouteChange(
                reason: .oldDeviceUnavailable, previousDevice: failed.name, currentDevice: nil, detail: error.message))
        }
    }

    /// Opens the configured device for an output that left the open to this thread, and reports
    /// the outcome. alsa-lib's own message on a failure is printed (once: the retries are quiet).
    private func openFirst(report: @Sendable (Result<DeviceFormat, AudioOutputError>) -> Void) -> PCMDevice? {
        do {
            let opened = try ALSAOutput.openDevice(named: configuration.deviceName, configuration: configuration)
            opened.claim()
            ALSAOutput.logger.info("audio output \(opened.name): \(opened.format)")
            shared.withLock { state in
                state.currentDevice = opened.name
                state.deviceFormat = opened.format
            }
            report(.success(opened.format))
            return opened
        } catch {
            ALSAOutput.logger.warning("no audio device yet, playing in silence and trying again: \(error)")
            report(.failure(error))
            return nil
        }
    }

    /// Tries the configured device, then the fallback.
    private func reopen() -> PCMDevice? {
        for name in [configuration.deviceName, configuration.fallbackDeviceName].compactMap({ $0 }) {
            guard let reopened = try? ALSAQuietErrors.run({ () throws(AudioOutputError) in
                try ALSAOutput.openDevice(named: name, configuration: configuration, listsDevices: false)
            }) else { continue }
            reopened.claim()
            ALSAOutput.logger.notice("audio device \(name) available again: \(reopened.format)")
            shared.withLock { state in
                state.currentDevice = name
                state.deviceFormat = reopened.format
                state.post(AudioRouteChange(reason: .newDeviceAvailable, previousDevice: nil, currentDevice: name))
            }
            return reopened
        }
        return nil
    }
}

extension ALSAOutput {
    /// Converts the float mix to the device's sample format, rounding and clipping the way
    /// libswresample does (so a unity-gain stream reaches the device bit-exact).
    static func convert(_ mix: [Float], frames sampleCount: Int, to bytes: inout [UInt8], format: DeviceSampleFormat) {
        mix.withUnsafeBufferPointer { source in
            bytes.withUnsafeMutableBytes { destination in
                switch format {
                case .s16:
                    let output = destination.bindMemory(to: Int16.self)
                    for index in 0..<sampleCount {
                        let scaled = (source[index] * 32768).rounded(.toNearestOrEven)
                        output[index] = scaled.isNaN ? 0 : Int16(min(32767, max(-32768, scaled))).littleEndian
                    }
                case .s32:
                    let output = destination.bindMemory(to: Int32.self)
                    for index in 0..<sampleCount {
                        let scaled = (Double(source[index]) * 2_147_483_648).rounded(.toNearestOrEven)
                        output[index] = scaled.isNaN ? 0 : Int32(min(2_147_483_647, max(-2_147_483_648, scaled))).littleEndian
                    }
                case .float32:
                    let output = destination.bindMemory(to: Float.self)
                    for index in 0..<sampleCount {
                        let sample = source[index]
                        output[index] = sample.isNaN ? 0 : min(1, max(-1, sample))
                    }
                }
            }
        }
    }
}
