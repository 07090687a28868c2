import MediaTime

/// The mixer and clock state shared by the audio thread and the public API, guarded by one lock.
struct OutputState: Sendable {
    var inputs: [MixerInputState] = []
    var nextInputID = 1

    var masterVolume: Float = 1
    var isMasterMuted = false
    var masterGains: GainRamp
    var isMeteringEnabled = false
    var meter: LevelMeter
    /// Whether each mixed period is checked for sound: an ambient volume measures the room only
    /// while the speaker is silent.
    var tracksSilence = false
    /// The device frame just after the last mixed period that carried sound (a peak above
    /// ``OutputState/silenceThreshold`` after the master volume).
    var audibleEndFrame: Int64 = 0
    /// Below this peak amplitude (−60 dBFS) a period counts as silent.
    static let silenceThreshold: Float = 0.001

    /// Device frames mixed and handed to the device (or to the silent clock) so far.
    var framesWritten: Int64 = 0
    /// The device frame heard at ``stampHostNanos``.
    var heardFrameStamp: Int64 = 0
    var stampHostNanos: Int64 = 0
    /// Whether the heard position advances with host time after the stamp (stream running).
    var isClockRunning = false
    /// The latest heard-frame estimate handed out: readings never go backwards.
    var lastHeardEstimate: Int64 = 0

    var isStarted = false
    /// The audio thread sleeps because nothing has sound to play (see ``hasPendingSound``): a
    /// producer that queues the first samples wakes it.
    var isAudioThreadIdle = false
    var stopRequested = false
    var drainOnStop = false
    var isStopped = false
    var xrunCount = 0
    /// Frames in the device's buffer after the last write (``PCMDevice/bufferedFrames()``), or
    /// `nil` without a device or when it cannot tell.
    var deviceBufferedFrames: Int?
    var currentDevice: String?
    var deviceFormat: DeviceFormat

    /// The subscribers of ``ALSAOutput/routeChanges`` (their own lock, taken under this state's).
    let routeStreams = EventStreams<AudioRouteChange>(buffering: 32)
    /// Clips that mixed their last sample: (input, device frame after it).
    var pendingFinishes: [(inputID: Int, deviceFrame: Int64)] = []
    var finishHandlers: [Int: @Sendable () -> Void] = [:]
    /// Interruptions begun by hand (``AudioSession/beginInterruption()``).
    var interruptionCount = 0

    init(deviceFormat: DeviceFormat, rampFrames: Int) {
        self.deviceFormat = deviceFormat
        currentDevice = nil
        masterGains = GainRamp(
            channelCount: deviceFormat.channelCount, rampFrames: rampFrames,
            initial: Array(repeating: 1, count: deviceFormat.channelCount))
        meter = LevelMeter(channelCount: deviceFormat.channelCount)
    }

    func inputIndex(_ id: Int) -> Int? { inputs.firstIndex { $0.id == id } }

    /// Whether any input has sound to mix now or later: queued samples, or a clip not finished
    /// (started, possibly at a later device frame). While none has, the output is idle and the
    /// audio thread keeps only a little silence ahead of the device.
    var hasPendingSound: Bool { hasSound(atLeast: 1) }

    /// Whether a playing stream has at least `frames` queued, or a started clip is not finished.
    func hasSound(atLeast frames: Int) -> Bool {
        inputs.contains { input in
            guard !input.isClosed, input.isStarted, !input.isPaused else { return false }
            switch input.source {
            case .stream(let queue): return queue.queuedFrames >= frames
            case .clip(let cursor): return !cursor.finished
            }
        }
    }

    /// The device frame being heard at host time `nowNanos` (extrapolated from the last stamp).
    mutating func heardFrame(atHostNanos nowNanos: Int64) -> Int64 {
        var heard = heardFrameStamp
        if isClockRunning {
            let elapsed = max(0, nowNanos - stampHostNanos)
            // A running device is re-stamped every period; when no stamp comes for longer, either
            // the audio thread is late (the device plays on) or the device is not consuming (a
            // sound server still starting, a stall). Extrapolate four periods at most: enough to
            // ride out a late thread, without running far ahead of a device that stopped.
            let extrapolated = elapsed * Int64(deviceFormat.sampleRate) / 1_000_000_000
            heard += min(extrapolated, Int64(4 * deviceFormat.periodFrames))
            heard = min(heard, framesWritten)
        }
        heard = max(heard, lastHeardEstimate)
        lastHeardEstimate = heard
        return heard
    }

    /// The host time from which the speaker has been silent (the last audible frame has been
    /// heard by `nowNanos`), or `nil` while sound is still coming out of it.
    mutating func silenceStart(atHostNanos nowNanos: Int64) -> Int64? {
        let heard = heardFrame(atHostNanos: nowNanos)
        guard audibleEndFrame <= heard else { return nil }
        return nowNanos - (heard - audibleEndFrame) * 1_000_000_000 / Int64(deviceFormat.sampleRate)
    }

    /// Mixes one period of every playing input into `mix` (interleaved) and applies the master stage.
    /// Returns the finish handlers of clips whose last sample has now been heard.
    mutating func mixPeriod(
        into mix: UnsafeMutablePointer<Float>, scratch: UnsafeMutablePointer<Float>, frames: Int
    ) -> [@Sendable () -> Void] {
        let channels = deviceFormat.channelCount
        let rate = deviceFormat.sampleRate
        mix.update(repeating: 0, count: frames * channels)
        let firstFrame = framesWritten
        // Ducking follows the announcements in the mix itself, so the music comes back
        // with the period after the announcement's last sample, not a device latency later.
        let isAnnouncing = interruptionCount > 0 || inputs.contains { $0.isAnnouncing }
        for index in inputs.indices {
            if let level = inputs[index].duckedLevel { inputs[index].duckLevel = isAnnouncing ? level : 1 }
            inputs[index].pruneSegments(before: heardFrameStamp, sampleRate: rate)
            let input = inputs[index]
            guard !input.isClosed, input.isStarted, !input.isPaused else {
                inputs[index].meter.silence()
                continue
            }
            var skip = 0
            if let start = input.startDeviceFrame {
                if start >= firstFrame + Int64(frames) {
                    inputs[index].meter.silence()
                    continue
                }
                skip = Int(max(0, start - firstFrame))
            }
            if inputs[index].alignment != nil { applyAlignment(of: index, atDeviceFrame: firstFrame + Int64(skip)) }
            if inputs[index].silenceFrames > 0 {
                let silence = min(frames - skip, inputs[index].silenceFrames)
                inputs[index].silenceFrames -= silence
                skip += silence
                if skip >= frames {
                    inputs[index].meter.silence()
                    continue
                }
            }
            let wanted = frames - skip
            var rendered = 0
            switch inputs[index].source {
            case .stream(var queue):
                inputs[index].source = .stream(StreamQueue())
                rendered = queue.render(
                    into: scratch, frames: wanted, channels: channels, firstDeviceFrame: firstFrame + Int64(skip),
                    sampleRate: rate, segments: &inputs[index].segments)
                inputs[index].source = .stream(queue)
            case .clip(var cursor):
                let wasFinished = cursor.finished
                rendered = cursor.render(
                    into: scratch, frames: wanted, channels: channels, firstDeviceFrame: firstFrame + Int64(skip),
                    sampleRate: rate, segments: &inputs[index].segments)
                if cursor.finished, !wasFinished {
                    pendingFinishes.append((input.id, firstFrame + Int64(skip + rendered)))
                }
                inputs[index].source = .clip(cursor)
            }
            let targets = inputs[index].gainTargets
            if !inputs[index].hasPlayed, rendered > 0 {
                // A stream's first samples play at the level it was set to: no fade-in.
                inputs[index].gains.reset(to: targets)
                inputs[index].hasPlayed = true
            }
            inputs[index].gains.scale(scratch, frames: rendered, targets: targets)
            let destination = mix + skip * channels
            for sample in 0..<(rendered * channels) { destination[sample] += scratch[sample] }
            if inputs[index].isMeteringEnabled { inputs[index].meter.measure(scratch, frames: rendered) }
        }
        let masterTargets = GainRamp.targets(channelCount: channels, volume: masterVolume, pan: 0, muted: isMasterMuted)
        masterGains.scale(mix, frames: frames, targets: masterTargets)
        if isMeteringEnabled { meter.measure(mix, frames: frames) }
        if tracksSilence {
            var peak: Float = 0
            for sample in 0..<(frames * channels) { peak = max(peak, abs(mix[sample])) }
            if peak > OutputState.silenceThreshold { audibleEndFrame = firstFrame + Int64(frames) }
        }

        var handlers: [@Sendable () -> Void] = []
        pendingFinishes.removeAll { pending in
            guard pending.deviceFrame <= heardFrameStamp else { return false }
            if let handler = finishHandlers[pending.inputID] { handlers.append(handler) }
            return true
        }
        return handlers
    }

    /// Shifts a stream input so that the sample rendered at device frame `frame` is the one its
    /// alignment wants heard then: queued samples are dropped (the sound was behind) or silence
    /// is put first (it was ahead). Needs a running device clock to know when `frame` is heard;
    /// until then, and while too little is queued to drop, the alignment waits for the next period.
    mutating func applyAlignment(of index: Int, atDeviceFrame frame: Int64) {
        guard let wanted = inputs[index].alignment, isClockRunning, case .stream(var queue) = inputs[index].source else { return }
        let rate = deviceFormat.sampleRate
        guard let head = queue.headTime(sampleRate: rate) else { return }
        let heardAt = stampHostNanos + (frame - heardFrameStamp) * 1_000_000_000 / Int64(rate)
        let target = wanted.mediaTime + .nanoseconds(heardAt - wanted.hostNanos)
        let shift = (target - head).convertScale(Int32(rate), method: .roundHalfAwayFromZero).value
        if shift < 0 {
            inputs[index].silenceFrames = Int(min(-shift, Int64(rate) * 10))
            inputs[index].alignment = nil
            return
        }
        inputs[index].source = .stream(StreamQueue())
        let dropped = queue.drop(frames: Int(min(shift, Int64(Int.max))))
        inputs[index].source = .stream(queue)
        if Int64(dropped) == shift { inputs[index].alignment = nil }
    }

    func post(_ change: AudioRouteChange) {
        routeStreams.yield(change)
    }
}
