public import MediaTime
public import MediaSinks

/// One stream into an ``ALSAOutput``'s mixer: the ``AudioSink`` the engine plays a soundtrack into.
///
/// Its clock reading maps the device's heard position back through the samples this input
/// contributed, so it reports the media time of the sample leaving the speaker, holds still
/// while the input is paused or starved, and is `nil` until its first sample is heard.
public final class MixerInput: AudioSink {
    let output: ALSAOutput
    let id: Int

    init(output: ALSAOutput, id: Int) {
        self.output = output
        self.id = id
    }

    deinit { output.removeInput(id) }

    public var format: AudioFormat { output.format }

    public func enqueue(_ buffer: AudioBuffer) -> Bool {
        guard buffer.format == output.format else {
            ALSAOutput.logger.error("audio buffer in \(buffer.format) given to a mixer input in \(output.format); dropped")
            return false
        }
        let capacity = output.configuration.inputQueueFrames
        let frames = buffer.frameCount
        let generation = output.shared.withLock { state in state.inputIndex(id).map { state.inputs[$0].flushGeneration } }
        guard let generation else { return false }
        let (accepted, wakesAudioThread) = output.shared.withLock(waitingUntil: { state in
            guard !state.stopRequested, !state.isStopped, let index = state.inputIndex(self.id) else { return true }
            let input = state.inputs[index]
            if input.isClosed || input.flushGeneration != generation { return true }
            return input.queuedFrames == 0 || input.queuedFrames + frames <= capacity
        }) { state -> (Bool, Bool) in
            guard !state.stopRequested, !state.isStopped, let index = state.inputIndex(id) else { return (false, false) }
            guard !state.inputs[index].isClosed, state.inputs[index].flushGeneration == generation,
                case .stream(var queue) = state.inputs[index].source
            else { return (false, false) }
            state.inputs[index].source = .stream(StreamQueue())
            queue.append(buffer)
            state.inputs[index].source = .stream(queue)
            return (true, state.isAudioThreadIdle)
        }
        // The first samples after a silence: the idle audio thread mixes them now, not when the
        // silence it keeps ahead of the device has played out.
        if wakesAudioThread { output.shared.broadcast() }
        return accepted
    }

    public func currentReading() -> AudioClockReading? {
        let now = MonotonicClock.nanosecondsNow()
        return output.shared.withLock { state in
            guard let index = state.inputIndex(id) else { return nil }
            let heard = state.heardFrame(atHostNanos: now)
            guard let mediaTime = state.inputs[index].mediaTime(atDeviceFrame: heard, sampleRate: state.deviceFormat.sampleRate)
            else { return nil }
            return AudioClockReading(mediaTime: mediaTime, hostTime: .nanoseconds(now))
        }
    }

    public func flush() {
        output.withInput(id) { input in
            if case .stream(var queue) = input.source {
                input.source = .stream(StreamQueue())
                queue.removeAll()
                input.source = .stream(queue)
            }
            input.flushGeneration += 1
            input.segments.removeAll()
            input.heardTail = nil
            input.alignment = nil
            input.silenceFrames = 0
        }
    }

    /// Shifts the queued sound so that `mediaTime` is heard at `hostTime` (host time on the
    /// ``MonotonicClock`` timeline): the audio thread drops queued samples or plays silence first,
    /// from the next period it mixes (what the device holds plays as it is).
    public func align(mediaTime: MediaTime, atHostTime hostTime: MediaTime) -> Bool {
        let accepted = output.withInput(id) { (input: inout MixerInputState) -> Bool in
            input.alignment = (mediaTime, hostTime.nanoseconds)
            input.silenceFrames = 0
            return true
        }
        return accepted ?? false
    }

    public func setPaused(_ paused: Bool) {
        output.withInput(id) { $0.isPaused = paused }
    }

    public func setVolume(_ volume: Float) {
        self.volume = volume
    }

    /// Stops this input for good: queued samples are dropped and blocked producers released.
    public func close() {
        output.withInput(id) { input in
            input.isClosed = true
            if case .stream = input.source { input.source = .stream(StreamQueue()) }
        }
    }

    /// The input's volume, 0…1, ramped.
    public var volume: Float {
        get { output.withInput(id) { $0.volume } ?? 0 }
        set { output.withInput(id) { $0.volume = min(1, max(0, newValue)) } }
    }

    /// Balance, −1 (left only) … 0 (both, full) … 1 (right only), ramped.
    public var pan: Float {
        get { output.withInput(id) { $0.pan } ?? 0 }
        set { output.withInput(id) { $0.pan = min(1, max(-1, newValue)) } }
    }

    /// Silences this input (ramped) while it keeps playing and clocking.
    public var isMuted: Bool {
        get { output.withInput(id) { $0.isMuted } ?? false }
        set { output.withInput(id) { $0.isMuted = newValue } }
    }

    /// Whether this input's contribution is measured every period.
    public var isMeteringEnabled: Bool {
        get { output.withInput(id) { $0.isMeteringEnabled } ?? false }
        set { output.withInput(id) { $0.isMeteringEnabled = newValue } }
    }

    /// Makes the last period's levels visible (AVAudioPlayer's `updateMeters()`).
    public func updateMeters() { output.withInput(id) { $0.meter.publish() } }
    /// RMS level of this input's last measured period (after its volume and pan), in dBFS (−160 … 0).
    public func averagePower(forChannel channel: Int) -> Float {
        output.withInput(id) { $0.meter.averagePower.indices.contains(channel) ? $0.meter.averagePower[channel] : LevelMeter.floor }
            ?? LevelMeter.floor
    }
    /// Peak level of this input's last measured period, in dBFS (−160 … 0).
    public func peakPower(forChannel channel: Int) -> Float {
        output.withInput(id) { $0.meter.peakPower.indices.contains(channel) ? $0.meter.peakPower[channel] : LevelMeter.floor }
            ?? LevelMeter.floor
    }

    /// Frames queued and not yet mixed.
    public var queuedFrames: Int { output.withInput(id) { $0.queuedFrames } ?? 0 }
}

extension MixerInput {
    /// Makes this input duck to `level` while announcements play (ramped like the volume).
    func setDuckedLevel(_ level: Float?) {
        output.withInput(id) {
            $0.duckedLevel = level
            if level == nil { $0.duckLevel = 1 }
        }
    }
}
