internal import CALSA
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The sample format written to the device. The mixer works in Float32 and converts once per period.
public enum DeviceSampleFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Signed 16-bit little-endian: every device and plugin takes it.
    case s16
    /// Signed 32-bit little-endian.
    case s32
    /// 32-bit float little-endian.
    case float32

    var alsaFormat: snd_pcm_format_t {
        switch self {
        case .s16: SND_PCM_FORMAT_S16_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        }
    }

    /// Bytes per sample of one channel.
    public var bytesPerSample: Int {
        switch self {
        case .s16: 2
        case .s32, .float32: 4
        }
    }

    public var description: String { rawValue }
}

/// The format an open PCM accepted: rate, channels, sample format and its buffering.
public struct DeviceFormat: Sendable, Hashable, CustomStringConvertible {
    public var sampleRate: Int
    public var channelCount: Int
    public var sampleFormat: DeviceSampleFormat
    /// Frames per period: the mixer's unit of work and the metering interval.
    public var periodFrames: Int
    /// Frames the device buffers: the output latency.
    public var bufferFrames: Int

    public var description: String {
        "\(sampleRate) Hz, \(channelCount) ch, \(sampleFormat), period \(periodFrames), buffer \(bufferFrames) frames"
    }
}

/// An ALSA error code with the call that returned it.
public struct ALSAError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The alsa-lib function that failed.
    public var function: String
    /// The negative errno value it returned.
    public var code: Int32

    public var message: String { String(cString: snd_strerror(code)) }
    public var description: String { "\(function) failed: \(message) (\(code))" }
}

/// One open PCM, for playback or capture: a thin value over `snd_pcm_t *`, used only by the thread
/// that owns it once that thread has started (the output's audio thread, a recorder's capture
/// thread: it claims the PCM, and debug builds check every call comes from it). Capture is in
/// `PCMDevice+Capture.swift`.
struct PCMDevice: Sendable {
    private let pcm: ThreadBound<OpaquePointer>
    let name: String
    let format: DeviceFormat

    init(handle: OpaquePointer, name: String, format: DeviceFormat) {
        pcm = ThreadBound(handle, resource: "the ALSA PCM \(name)")
        self.name = name
        self.format = format
    }

    /// The `snd_pcm_t *`: before ``claim()`` the opening thread's, after it the owner's only.
    var handle: OpaquePointer { pcm.value }

    /// Makes the calling thread (the audio thread) the PCM's only user from now on.
    func claim() { pcm.claim() }

    /// Opens `name` for playback in non-blocking mode (so a device that stops consuming
    /// cannot hang the audio thread), optionally with extra ALSA configuration text merged over
    /// the global configuration, and negotiates one fixed format (trying `preferred` first).
    /// The corresponding C functions are `snd_pcm_open_lconf` and `snd_pcm_set_params`.
    static func open(
        name: String, configurationText: String?, sampleRate: Int, channelCount: Int,
        preferred: DeviceSampleFormat, latencyMicroseconds: Int
    ) throws(ALSAError) -> PCMDevice {
        let pcm = try openHandle(name: name, configurationText: configurationText, stream: SND_PCM_STREAM_PLAYBACK)
        var candidates = [preferred]
        candidates += DeviceSampleFormat.allCases.filter { $0 != preferred }
        do throws(ALSAError) {
            return try negotiate(pcm, name: name, sampleRate: sampleRate, channelCount: channelCount, candidates: candidates,
                                 latencyMicroseconds: latencyMicroseconds)
        } catch {
            snd_pcm_close(pcm)
            throw error
        }
    }

    /// `snd_pcm_open` (or `snd_pcm_open_lconf` with `configurationText` merged over the global
    /// configuration) in non-blocking mode.
    static func openHandle(name: String, configurationText: String?, stream: snd_pcm_stream_t) throws(ALSAError) -> OpaquePointer {
        var pcm: OpaquePointer?
        let status: Int32
        if let configurationText {
            let configuration = try loadConfiguration(configurationText)
            defer { snd_config_delete(configuration) }
            status = snd_pcm_open_lconf(&pcm, name, stream, vitrine_snd_pcm_nonblock(), configuration)
        } else {
            status = snd_pcm_open(&pcm, name, stream, vitrine_snd_pcm_nonblock())
        }
        guard status >= 0, let pcm else { throw ALSAError(function: "snd_pcm_open", code: status) }
        return pcm
    }

    /// Sets the first of `candidates` the device takes, at `sampleRate` and `channelCount`, with a
    /// buffer of `latencyMicroseconds`. The corresponding C functions are `snd_pcm_set_params` and
    /// `snd_pcm_get_params`.
    static func negotiate(
        _ pcm: OpaquePointer, name: String, sampleRate: Int, channelCount: Int, candidates: [DeviceSampleFormat],
        latencyMicroseconds: Int
    ) throws(ALSAError) -> PCMDevice {
        var lastError = ALSAError(function: "snd_pcm_set_params", code: -EINVAL)
        for sampleFormat in candidates {
            var status = snd_pcm_set_params(
                pcm, sampleFormat.alsaFormat, SND_PCM_ACCESS_RW_INTERLEAVED, UInt32(channelCount),
                UInt32(sampleRate), 1, UInt32(latencyMicroseconds))
            if status < 0 {
                lastError = ALSAError(function: "snd_pcm_set_params", code: status)
                continue
            }
            var bufferSize: snd_pcm_uframes_t = 0
            var periodSize: snd_pcm_uframes_t = 0
            status = snd_pcm_get_params(pcm, &bufferSize, &periodSize)
            if status < 0 {
                lastError = ALSAError(function: "snd_pcm_get_params", code: status)
                continue
            }
            let format = DeviceFormat(
                sampleRate: sampleRate, channelCount: channelCount, sampleFormat: sampleFormat,
                periodFrames: max(1, Int(periodSize)), bufferFrames: max(1, Int(bufferSize)))
            return PCMDevice(handle: pcm, name: name, format: format)
        }
        throw lastError
    }

    /// The global configuration with `text` parsed over it. The corresponding C functions are
    /// `snd_config_update_ref`, `snd_config_copy` and `snd_config_load`.
    static func loadConfiguration(_ text: String) throws(ALSAError) -> OpaquePointer {
        var global: OpaquePointer?
        var status = snd_config_update_ref(&global)
        guard status >= 0, let global else { throw ALSAError(function: "snd_config_update_ref", code: status) }
        defer { snd_config_unref(global) }
        var copy: OpaquePointer?
        status = snd_config_copy(&copy, global)
        guard status >= 0, let copy else { throw ALSAError(function: "snd_config_copy", code: status) }
        var input: OpaquePointer?
        let bytes = Array(text.utf8)
        status = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { snd_input_buffer_open(&input, $0.baseAddress, buffer.count) }
        }
        guard status >= 0, let input else {
            snd_config_delete(copy)
            throw ALSAError(function: "snd_input_buffer_open", code: status)
        }
        defer { snd_input_close(input) }
        status = snd_config_load(copy, input)
        guard status >= 0 else {
            snd_config_delete(copy)
            throw ALSAError(function: "snd_config_load", code: status)
        }
        return copy
    }

    /// Writes interleaved frames in the device format, waiting while the buffer is full.
    /// Xruns and suspends are recovered and counted in `recovered`; an error that
    /// `snd_pcm_recover` cannot clear, or a device that accepts nothing for
    /// `stallTimeoutMilliseconds`, throws (the caller treats the device as gone).
    /// The corresponding C functions are `snd_pcm_writei`, `snd_pcm_wait` and `snd_pcm_recover`.
    func write(
        _ bytes: UnsafeRawBufferPointer, frames: Int, stallTimeoutMilliseconds: Int, recovered: inout Int
    ) throws(ALSAError) {
        let frameBytes = format.channelCount * format.sampleFormat.bytesPerSample
        _ = try transfer(frames: frames, function: "snd_pcm_writei", stallTimeoutMilliseconds: stallTimeoutMilliseconds,
                         recovered: &recovered, afterRecovery: {}) { [handle] offset in
            snd_pcm_writei(handle, bytes.baseAddress! + offset * frameBytes, snd_pcm_uframes_t(frames - offset))
        }
    }

    /// The one loop both directions share: moves `frames` frames with `step` (given the frames
    /// done so far, it returns `snd_pcm_writei`'s or `snd_pcm_readi`'s result), waiting in 50 ms
    /// steps while the device has no room or no data, recovering xruns and suspends (at most three
    /// in a row; `afterRecovery` runs after each one that was not an interrupted call) and counting
    /// them in `recovered`. Returns whether it ever had to wait (a clocked device).
    func transfer(
        frames: Int, function: String, stallTimeoutMilliseconds: Int, recovered: inout Int,
        afterRecovery: () throws(ALSAError) -> Void, _ step: (Int) -> snd_pcm_sframes_t
    ) throws(ALSAError) -> Bool {
        var offset = 0
        var failures = 0
        var waitedMilliseconds = 0
        var waited = false
        while offset < frames {
            let moved = step(offset)
            if moved > 0 {
                offset += moved
                failures = 0
                waitedMilliseconds = 0
                continue
            }
            var code = Int32(moved)
            if moved == 0 || code == -EAGAIN {
                waited = true
                guard waitedMilliseconds < stallTimeoutMilliseconds else {
                    throw ALSAError(function: "snd_pcm_wait", code: -ETIMEDOUT)
                }
                let ready = snd_pcm_wait(handle, 50)
                if ready >= 0 {
                    if ready == 0 { waitedMilliseconds += 50 }
                    continue
                }
                code = ready
            }
            failures += 1
            guard failures < 4, code == -EPIPE || code == -ESTRPIPE || code == -EINTR else {
                throw ALSAError(function: function, code: code)
            }
            let status = snd_pcm_recover(handle, code, 1)
            guard status >= 0 else { throw ALSAError(function: "snd_pcm_recover", code: status) }
            if code != -EINTR {
                recovered += 1
                try afterRecovery()
            }
        }
        return waited
    }

    /// Frames written but not yet heard, or `nil` when the device cannot tell.
    /// The corresponding C function is `snd_pcm_delay`.
    func delay() -> Int? {
        var frames: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(handle, &frames) >= 0 else { return nil }
        return max(0, frames)
    }

    /// Frames of the device's buffer that hold samples not yet played (the buffer's size less its
    /// free room), or `nil` when the device cannot tell. Unlike ``delay()`` it leaves out latency
    /// past the buffer (a sound server's own), so it says how long the device can play on its own.
    /// The corresponding C function is `snd_pcm_avail_update`.
    func bufferedFrames() -> Int? {
        let available = snd_pcm_avail_update(handle)
        guard available >= 0 else { return nil }
        return max(0, format.bufferFrames - Int(available))
    }

    /// Whether the stream is running (samples are leaving the device).
    var isRunning: Bool { snd_pcm_state(handle) == SND_PCM_STATE_RUNNING }

    /// Plays out what is buffered (when `drain`) and closes. The corresponding C functions are
    /// `snd_pcm_drain` and `snd_pcm_close`.
    func close(drain: Bool) {
        if drain {
            snd_pcm_nonblock(handle, 0)
            snd_pcm_drain(handle)
        }
        snd_pcm_close(handle)
    }

    /// The names of the PCMs ALSA knows for `stream` (from its device hints), for error messages.
    /// The corresponding C function is `snd_device_name_hint`.
    static func availablePCMNames(stream: snd_pcm_stream_t = SND_PCM_STREAM_PLAYBACK) -> [String] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        // A hint without IOID goes both ways; "Input" is capture only, "Output" playback only.
        let otherDirection = stream == SND_PCM_STREAM_CAPTURE ? "Output" : "Input"
        var names: [String] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            if let ioid = snd_device_name_get_hint(hint, "IOID") {
                let direction = String(cString: ioid)
                free(ioid)
                if direction == otherDirection { continue }
            }
            guard let name = snd_device_name_get_hint(hint, "NAME") else { continue }
            names.append(String(cString: name))
            free(name)
        }
        return names
    }
}
