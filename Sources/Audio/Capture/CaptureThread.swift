internal import CALSA
import MediaAsset
import MediaSinks
import MediaTime
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a capture thread tells its owner, outside the lock.
enum CaptureEvent: Sendable {
    /// The device failed; a recorder's file has been finished with what was captured.
    case deviceLost(AudioRouteChange)
    /// A monitor's device opened again.
    case deviceAvailable(AudioRouteChange)
    /// Writing the file failed; the recording ends.
    case encodeError(MediaError)
    /// The thread has ended; for a recorder, the file is complete (successfully: every frame asked
    /// for was written and the file closed without error).
    case finished(successfully: Bool)
}

/// The format a capture thread asks a device for (again, when it reopens one).
struct CaptureRequest: Sendable {
    var sampleRate: Int
    var channelCount: Int
    /// Sample formats the device may deliver, the preferred first.
    var candidates: [DeviceSampleFormat]
    /// Whether the device must take ``sampleRate`` exactly (a recording) or the nearest rate will do (a meter).
    var exactRate: Bool
}

/// The loop of the thread that owns a capture PCM (and a recorder's file writer): read a period,
/// stamp it on the host clock, meter it, write the frames the ``RecordingPlan`` wants.
///
/// A device that delivers at once (alsa-lib's null and file plugins) is paced to real time on the
/// host clock, as the output paces them: the first two periods tell which kind a device is (a
/// clocked device has nothing to give right after it starts).
struct CaptureThread {
    let shared: ConditionLock<CaptureState, StateChanged>
    let configuration: AudioCaptureConfiguration
    let request: CaptureRequest
    var device: PCMDevice?
    let writer: ThreadBound<AudioFileWriter>?
    /// Whether a lost device is tried again (a monitor) or ends the thread (a recorder).
    let reopensDevice: Bool
    let post: @Sendable (CaptureEvent) -> Void

    /// How the host time of captured frames is known.
    private enum Pacing {
        /// Just started (at host time `startNanos`): not known yet whether the device is clocked.
        case probing(startNanos: Int64)
        /// The device delivers at once: periods are read when real time has passed, frame `k`
        /// counted as captured at `baseNanos + k / rate`.
        case paced(baseNanos: Int64)
        /// The device delivers in real time: frames are stamped from `snd_pcm_delay` after each read.
        case clocked
    }

    /// How long a device just opened may take to deliver its first period: a sound server can take
    /// a few seconds to start a stream.
    static func startTimeoutMilliseconds(_ configuration: AudioCaptureConfiguration) -> Int {
        3 * configuration.stallTimeoutMilliseconds
    }

    mutating func run() {
        device?.claim()
        writer?.claim()
        var pacing = Pacing.probing(startNanos: MonotonicClock.nanosecondsNow())
        var bytes: [UInt8] = []
        var floats: [Float] = []
        var converted16: [Int16] = []
        var converted32: [Int32] = []
        var wantsFloats = shared.withLock { $0.isMeteringEnabled || $0.accumulatesLevel }
        var captured: Int64 = 0
        // Frames read from the device open now: the pacing counts from its start.
        var deviceFrames: Int64 = 0
        var succeeded = true

        loop: while true {
            guard let current = device else {
                guard reopensDevice, let reopened = waitAndReopen() else { break loop }
                device = reopened
                pacing = .probing(startNanos: MonotonicClock.nanosecondsNow())
                deviceFrames = 0
                continue
            }
            let format = current.format
            let frames = format.periodFrames
            let samples = frames * format.channelCount
            let rate = Int64(format.sampleRate)
            if bytes.count != samples * format.sampleFormat.bytesPerSample {
                bytes = [UInt8](repeating: 0, count: samples * format.sampleFormat.bytesPerSample)
                floats = [Float](repeating: 0, count: samples)
            }
            if case .paced(let base) = pacing {
                // Read a period once real time has captured it.
                MonotonicClock().sleep(until: .nanoseconds(base + (deviceFrames + Int64(frames)) * 1_000_000_000 / rate))
            }
            // A plugin past the end of its input file leaves the buffer as it was: silence, not old samples.
            for index in bytes.indices { bytes[index] = 0 }
            var recovered = 0
            let stallTimeout = deviceFrames == 0 ? Self.startTimeoutMilliseconds(configuration) : configuration.stallTimeoutMilliseconds
            let read = bytes.withUnsafeMutableBytes { buffer -> Result<PCMDevice.ReadOutcome, ALSAError> in
                do throws(ALSAError) {
                    try current.startCapture()
                    return .success(try current.read(into: buffer, frames: frames, stallTimeoutMilliseconds: stallTimeout, recovered: &recovered))
                } catch {
                    return .failure(error)
                }
            }
            let outcome: PCMDevice.ReadOutcome
            switch read {
            case .success(let result):
                outcome = result
            case .failure(let error):
                lose(current, error: error)
                if writer != nil {
                    succeeded = false
                    break loop
                }
                continue
            }
            let now = MonotonicClock.nanosecondsNow()
            let blockStart: Int64
            if outcome.waited { pacing = .clocked }
            switch pacing {
            case .probing(let start):
                blockStart = start + deviceFrames * 1_000_000_000 / rate
                if deviceFrames > 0 {
                    // Two periods given in less than one period of real time: nothing clocks it.
                    let fast = now - start < Int64(frames) * 1_000_000_000 / rate
                    pacing = fast ? .paced(baseNanos: start) : .clocked
                }
            case .paced(let base):
                blockStart = base + deviceFrames * 1_000_000_000 / rate
            case .clocked:
                // Frames still in the device were captured after this block; the newest one just now.
                let delay = Int64(current.delay() ?? 0)
                blockStart = now - (delay + Int64(frames)) * 1_000_000_000 / rate
            }
            if wantsFloats {
                bytes.withUnsafeBytes { raw in
                    floats.withUnsafeMutableBufferPointer {
                        CapturedSamples.floats(raw.baseAddress!, count: samples, format: format.sampleFormat, into: $0.baseAddress!)
                    }
                }
            }
            let firstFrame = captured
            captured += Int64(frames)
            deviceFrames += Int64(frames)
            let blockEnd = blockStart + Int64(frames) * 1_000_000_000 / rate
            let (ranges, isComplete, stopRequested) = floats.withUnsafeBufferPointer { floatBuffer in
                shared.withLock { state -> ([Range<Int>], Bool, Bool) in
                    state.framesCaptured = captured
                    state.stampFrame = firstFrame
                    state.stampHostNanos = blockStart
                    state.hasStamp = true
                    state.overrunCount += recovered
                    if wantsFloats {
                        if state.isMeteringEnabled { state.meter.measure(floatBuffer.baseAddress!, frames: frames) }
                        if state.accumulatesLevel {
                            state.accumulated.add(floatBuffer, frames: frames, startNanos: blockStart, endNanos: blockEnd)
                        }
                    }
                    wantsFloats = state.isMeteringEnabled || state.accumulatesLevel
                    guard writer != nil else { return ([], false, state.stopRequested) }
                    let ranges = state.plan.take(blockStart: blockStart, count: frames, sampleRate: format.sampleRate)
                    state.framesRecorded += Int64(ranges.reduce(0) { $0 + $1.count })
                    return (ranges, state.plan.isComplete, state.stopRequested)
                }
            }
            if firstFrame == 0 { shared.broadcast() }
            if let writer, !ranges.isEmpty {
                do throws(MediaError) {
                    try write(ranges, of: bytes, format: format, to: writer, converted16: &converted16, converted32: &converted32)
                } catch {
                    post(.encodeError(error))
                    succeeded = false
                    break loop
                }
            }
            if isComplete || stopRequested { break loop }
        }
        if let writer {
            do throws(MediaError) { try writer.value.finish() } catch {
                post(.encodeError(error))
                succeeded = false
            }
        }
        device?.close(drain: false)
        device = nil
        shared.withLock { state in
            state.isFinished = true
            state.currentDevice = nil
        }
        shared.broadcast()
        post(.finished(successfully: succeeded))
    }

    /// Appends the frames of `ranges` (block-relative) to the file, converted to its bit depth.
    private func write(
        _ ranges: [Range<Int>], of bytes: [UInt8], format: DeviceFormat, to writer: ThreadBound<AudioFileWriter>,
        converted16: inout [Int16], converted32: inout [Int32]
    ) throws(MediaError) {
        let channels = format.channelCount
        let file = writer.value
        for range in ranges {
            let count = range.count * channels
            let first = range.lowerBound * channels * format.sampleFormat.bytesPerSample
            if file.bitDepth == 16, format.sampleFormat != .s16, converted16.count < count {
                converted16 = [Int16](repeating: 0, count: count)
            }
            if file.bitDepth == 24, converted32.count < count { converted32 = [Int32](repeating: 0, count: count) }
            // Each closure returns what it met: append's typed error crosses no rethrowing call.
            let result = bytes.withUnsafeBytes { raw -> Result<Void, MediaError> in
                let start = raw.baseAddress! + first
                if file.bitDepth == 16, format.sampleFormat == .s16 {
                    return Result { () throws(MediaError) in
                        try file.append(UnsafeBufferPointer(start: start.assumingMemoryBound(to: Int16.self), count: count))
                    }
                }
                if file.bitDepth == 16 {
                    return converted16.withUnsafeMutableBufferPointer { buffer -> Result<Void, MediaError> in
                        CapturedSamples.int16s(start, count: count, format: format.sampleFormat, into: buffer.baseAddress!)
                        return Result { () throws(MediaError) in try file.append(UnsafeBufferPointer(rebasing: buffer[0..<count])) }
                    }
                }
                return converted32.withUnsafeMutableBufferPointer { buffer -> Result<Void, MediaError> in
                    CapturedSamples.int32s(start, count: count, format: format.sampleFormat, into: buffer.baseAddress!)
                    return Result { () throws(MediaError) in try file.append(UnsafeBufferPointer(rebasing: buffer[0..<count])) }
                }
            }
            try result.get()
        }
    }

    /// Closes a failed device and tells the owner.
    private mutating func lose(_ failed: PCMDevice, error: ALSAError) {
        failed.close(drain: false)
        device = nil
        AudioRecorder.logger.warning("capture device \(failed.name) failed: \(error)")
        shared.withLock { $0.currentDevice = nil }
        post(.deviceLost(AudioRouteChange(
            reason: .oldDeviceUnavailable, previousDevice: failed.name, currentDevice: nil, detail: error.message)))
    }

    /// Waits a reopen interval (or until asked to stop), then tries the device. `nil` when asked to stop.
    private func waitAndReopen() -> PCMDevice? {
        while true {
            let stop = shared.withLock(waitingUntil: { $0.stopRequested },
                                       timeout: .milliseconds(configuration.reopenIntervalMilliseconds)) { $0.stopRequested }
            if stop { return nil }
            guard let reopened = try? ALSAQuietErrors.run({
                try PCMDevice.openCapture(
                    name: configuration.deviceName, configurationText: configuration.configurationText,
                    sampleRate: request.sampleRate, channelCount: request.channelCount, candidates: request.candidates,
                    latencyMicroseconds: configuration.latencyMicroseconds, exactRate: request.exactRate)
            }) else { continue }
            reopened.claim()
            AudioRecorder.logger.notice("capture device \(configuration.deviceName) available again: \(reopened.format)")
            shared.withLock { state in
                state.currentDevice = configuration.deviceName
                state.deviceFormat = reopened.format
                if state.meter.channelCount != reopened.format.channelCount {
                    state.meter = LevelMeter(channelCount: reopened.format.channelCount)
                }
            }
            post(.deviceAvailable(AudioRouteChange(
                reason: .newDeviceAvailable, previousDevice: nil, currentDevice: configuration.deviceName)))
            return reopened
        }
    }
}
