/// Per-channel gains that glide to their targets over a fixed number of frames, so volume,
/// pan, mute and ducking changes never click.
struct GainRamp: Sendable {
    /// The gain applied to the last frame, per channel.
    private(set) var current: [Float]
    /// Gain change per frame while ramping (full scale over the ramp length).
    let stepPerFrame: Float

    init(channelCount: Int, rampFrames: Int, initial: [Float]) {
        current = initial.count == channelCount ? initial : Array(repeating: 1, count: channelCount)
        stepPerFrame = 1 / Float(max(1, rampFrames))
    }

    /// Jumps to `targets` with no ramp (a stream's first samples play at their set level).
    mutating func reset(to targets: [Float]) {
        current = targets
    }

    /// Scales `buffer` (interleaved, `frames` frames) in place by gains ramping towards `targets`.
    mutating func scale(_ buffer: UnsafeMutablePointer<Float>, frames: Int, targets: [Float]) {
        let channels = current.count
        if current == targets {
            // Steady state; a unity gain leaves the samples untouched (bit-exact pass-through).
            if targets.allSatisfy({ $0 == 1 }) { return }
            for frame in 0..<frames {
                let base = frame * channels
                for channel in 0..<channels { buffer[base + channel] *= targets[channel] }
            }
            return
        }
        var gains = current
        for frame in 0..<frames {
            let base = frame * channels
            for channel in 0..<channels {
                let target = targets[channel]
                var gain = gains[channel]
                if gain < target { gain = min(target, gain + stepPerFrame) } else if gain > target { gain = max(target, gain - stepPerFrame) }
                gains[channel] = gain
                buffer[base + channel] *= gain
            }
        }
        current = gains
    }

    /// Per-channel targets for a volume, a pan position and a mute switch.
    ///
    /// Pan is a balance control like AVAudioPlayer's: at 0 both channels play at full
    /// volume (so a centred stream passes bit-exact); towards −1 the right channel fades
    /// out, towards +1 the left. Channels beyond the first two follow the volume only.
    static func targets(channelCount: Int, volume: Float, pan: Float, muted: Bool) -> [Float] {
        let level = muted ? 0 : min(1, max(0, volume))
        let pan = min(1, max(-1, pan))
        return (0..<channelCount).map { channel in
            guard channelCount >= 2 else { return level }
            switch channel {
            case 0: return level * (pan > 0 ? 1 - pan : 1)
            case 1: return level * (pan < 0 ? 1 + pan : 1)
            default: return level
            }
        }
    }
}
