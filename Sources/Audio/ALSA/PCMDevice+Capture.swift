internal import CALSA
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a capture device offers, as its hardware parameters say before any is chosen.
public struct DeviceCapabilities: Sendable, Hashable, CustomStringConvertible {
    /// The lowest and highest sample rates (a device may offer only some rates in between).
    public var sampleRates: ClosedRange<Int>
    public var channelCounts: ClosedRange<Int>
    /// The sample formats Vitrine can read that the device offers.
    public var sampleFormats: [DeviceSampleFormat]

    public var description: String {
        func range(_ values: ClosedRange<Int>, _ unit: String) -> String {
            values.lowerBound == values.upperBound ? "\(values.lowerBound) \(unit)" : "\(values.lowerBound)–\(values.upperBound) \(unit)"
        }
        let formats = sampleFormats.isEmpty ? "none of S16/S32/float" : sampleFormats.map(\.description).joined(separator: "/")
        return "\(range(channelCounts, channelCounts == 1...1 ? "channel" : "channels")), \(range(sampleRates, "Hz")), \(formats)"
    }
}

/// Why a capture device could not be opened in the format asked for.
enum CaptureOpenFailure: Error {
    /// alsa-lib failed (no such device, busy, configuration text that does not parse).
    case alsa(ALSAError)
    /// The device does not offer what was asked: each refused item in words, and what it offers.
    case refused([String], offers: DeviceCapabilities)
}

extension PCMDevice {
    /// Opens `name` for capture in non-blocking mode and negotiates `sampleRate` and `channelCount`
    /// exactly (with `exactRate` false, the rate nearest to `sampleRate` the device offers) and the
    /// first sample format of `candidates` it offers. A device that offers neither gets a
    /// ``CaptureOpenFailure/refused(_:offers:)`` saying what it refused and what it has, checked
    /// with the hardware parameters before anything is set (so alsa-lib prints nothing).
    /// The corresponding C functions are `snd_pcm_open_lconf`, `snd_pcm_hw_params_any`,
    /// `snd_pcm_hw_params_test_*`, `snd_pcm_hw_params_set_rate_near` and `snd_pcm_set_params`.
    static func openCapture(
        name: String, configurationText: String?, sampleRate: Int, channelCount: Int, candidates: [DeviceSampleFormat],
        latencyMicroseconds: Int, exactRate: Bool = true
    ) throws(CaptureOpenFailure) -> PCMDevice {
        let pcm: OpaquePointer
        do throws(ALSAError) { pcm = try openHandle(name: name, configurationText: configurationText, stream: SND_PCM_STREAM_CAPTURE) } catch {
            throw .alsa(error)
        }
        var hardware: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hardware) >= 0, let hardware else {
            snd_pcm_close(pcm)
            throw .alsa(ALSAError(function: "snd_pcm_hw_params_malloc", code: -ENOMEM))
        }
        defer { snd_pcm_hw_params_free(hardware) }
        var status = snd_pcm_hw_params_any(pcm, hardware)
        guard status >= 0 else {
            snd_pcm_close(pcm)
            throw .alsa(ALSAError(function: "snd_pcm_hw_params_any", code: status))
        }
        let offers = capabilities(pcm, hardware)
        var refused: [String] = []
        var rate = sampleRate
        if !exactRate {
            var near = UInt32(sampleRate)
            var direction: Int32 = 0
            status = snd_pcm_hw_params_set_rate_near(pcm, hardware, &near, &direction)
            if status >= 0 { rate = Int(near) }
        } else if snd_pcm_hw_params_test_rate(pcm, hardware, UInt32(sampleRate), 0) < 0 {
            refused.append("\(sampleRate) Hz")
        }
        if snd_pcm_hw_params_test_channels(pcm, hardware, UInt32(channelCount)) < 0 {
            refused.append(channelCount == 1 ? "1 channel" : "\(channelCount) channels")
        }
        let usable = candidates.filter { offers.sampleFormats.contains($0) }
        if usable.isEmpty { refused.append("the sample formats " + candidates.map(\.description).joined(separator: "/")) }
        guard refused.isEmpty else {
            snd_pcm_close(pcm)
            throw .refused(refused, offers: offers)
        }
        do throws(ALSAError) {
            return try negotiate(pcm, name: name, sampleRate: rate, channelCount: channelCount, candidates: usable,
                                 latencyMicroseconds: latencyMicroseconds)
        } catch {
            snd_pcm_close(pcm)
            throw .alsa(error)
        }
    }

    /// The rates, channel counts and readable sample formats in `hardware` (fresh from `snd_pcm_hw_params_any`).
    private static func capabilities(_ pcm: OpaquePointer, _ hardware: OpaquePointer) -> DeviceCapabilities {
        var rateLow: UInt32 = 0, rateHigh: UInt32 = 0, channelsLow: UInt32 = 0, channelsHigh: UInt32 = 0
        var direction: Int32 = 0
        snd_pcm_hw_params_get_rate_min(hardware, &rateLow, &direction)
        snd_pcm_hw_params_get_rate_max(hardware, &rateHigh, &direction)
        snd_pcm_hw_params_get_channels_min(hardware, &channelsLow)
        snd_pcm_hw_params_get_channels_max(hardware, &channelsHigh)
        // Plugins report "anything" as the type's maximum; say so in numbers a person reads.
        let rates = Int(rateLow)...Int(max(rateLow, min(rateHigh, 1_536_000)))
        let channels = Int(channelsLow)...Int(max(channelsLow, min(channelsHigh, 1_024)))
        let formats = DeviceSampleFormat.allCases.filter { snd_pcm_hw_params_test_format(pcm, hardware, $0.alsaFormat) >= 0 }
        return DeviceCapabilities(sampleRates: rates, channelCounts: channels, sampleFormats: formats)
    }

    /// Starts a prepared capture stream (a stream that is running already is left alone).
    /// The corresponding C function is `snd_pcm_start`.
    func startCapture() throws(ALSAError) {
        guard snd_pcm_state(handle) == SND_PCM_STATE_PREPARED else { return }
        let status = snd_pcm_start(handle)
        guard status >= 0 else { throw ALSAError(function: "snd_pcm_start", code: status) }
    }

    /// What one ``read(into:frames:stallTimeoutMilliseconds:recovered:)`` saw.
    struct ReadOutcome {
        /// Whether the device had nothing to give at some point, so the call waited: the device is
        /// clocked (a sound card, a sound server), not a plugin that delivers at once (null, file).
        var waited = false
    }

    /// Reads exactly `frames` interleaved frames in the device format into `bytes`, waiting while
    /// the device has none. Overruns and suspends are recovered (the stream restarted) and counted
    /// in `recovered`; an error that `snd_pcm_recover` cannot clear, or a device that delivers
    /// nothing for `stallTimeoutMilliseconds`, throws (the caller treats the device as gone).
    /// The corresponding C functions are `snd_pcm_readi`, `snd_pcm_wait` and `snd_pcm_recover`.
    func read(
        into bytes: UnsafeMutableRawBufferPointer, frames: Int, stallTimeoutMilliseconds: Int, recovered: inout Int
    ) throws(ALSAError) -> ReadOutcome {
        let frameBytes = format.channelCount * format.sampleFormat.bytesPerSample
        precondition(bytes.count >= frames * frameBytes, "the buffer holds fewer than \(frames) frames")
        let waited = try transfer(frames: frames, function: "snd_pcm_readi", stallTimeoutMilliseconds: stallTimeoutMilliseconds,
                                  recovered: &recovered, afterRecovery: startCapture) { [handle] offset in
            snd_pcm_readi(handle, bytes.baseAddress! + offset * frameBytes, snd_pcm_uframes_t(frames - offset))
        }
        return ReadOutcome(waited: waited)
    }
}
