internal import CALSA
import MediaAsset
import MediaSinks
import Threading
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One capture device opened, its thread (`vitrine-audio-in`) running, and what they share: a
/// recorder's take from ``AudioRecorder/prepareToRecord()`` to ``AudioRecorder/stop()``, or a
/// monitor's whole life. The device (and a recorder's file) is opened on the caller's thread so
/// errors come back at once; then the thread claims both and is their only user.
final class CaptureSession: Sendable {
    let shared: ConditionLock<CaptureState, StateChanged>
    let configuration: AudioCaptureConfiguration
    private let thread: LockedValue<NamedThread?>

    /// Opens the device (trying each of `channelCounts` in turn), makes the writer for its format
    /// with `makeWriter`, starts the thread and waits for its first captured period. With `waitsForDevice` a device that cannot be
    /// opened now is no error: the thread tries it again every reopen interval (`unavailable`
    /// then says why it is not there).
    init(
        configuration: AudioCaptureConfiguration, sampleRate: Int, channelCounts: [Int], candidates: [DeviceSampleFormat],
        exactRate: Bool, waitsForDevice: Bool, reopensDevice: Bool,
        makeWriter: (DeviceFormat) throws(MediaError) -> AudioFileWriter?,
        post: @escaping @Sendable (CaptureEvent) -> Void
    ) throws(AudioCaptureError) {
        self.configuration = configuration
        var device: PCMDevice?
        var failure: AudioCaptureError?
        for channelCount in channelCounts {
            do throws(AudioCaptureError) {
                device = try Self.open(configuration, sampleRate: sampleRate, channelCount: channelCount, candidates: candidates,
                                       exactRate: exactRate)
                failure = nil
                break
            } catch {
                if case .invalidConfiguration = error { throw error }
                if failure == nil { failure = error }
            }
        }
        if device == nil, let failure, !waitsForDevice { throw failure }
        unavailableReason = failure
        let channels = device?.format.channelCount ?? channelCounts[0]
        let format = device?.format ?? DeviceFormat(
            sampleRate: sampleRate, channelCount: channels, sampleFormat: candidates[0],
            periodFrames: max(16, sampleRate * configuration.latencyMicroseconds / 4_000_000),
            bufferFrames: max(64, sampleRate * configuration.latencyMicroseconds / 1_000_000))
        let writer: AudioFileWriter?
        do throws(MediaError) { writer = try makeWriter(format) } catch {
            device?.close(drain: false)
            throw .cannotCreateFile(error)
        }
        shared = ConditionLock(CaptureState(deviceFormat: format, currentDevice: device?.name))
        thread = LockedValue(nil)
        let request = CaptureRequest(sampleRate: format.sampleRate, channelCount: channels, candidates: candidates, exactRate: exactRate)
        let opened = device
        let bound = writer.map { ThreadBound($0, resource: "the recording \($0.path)") }
        let shared = self.shared
        do throws(ThreadStartError) {
            let started = try NamedThread.start(name: "vitrine-audio-in") {
                var capture = CaptureThread(shared: shared, configuration: configuration, request: request, device: opened,
                                            writer: bound, reopensDevice: reopensDevice, post: post)
                capture.run()
            }
            thread.withLock { $0 = started }
        } catch {
            device?.close(drain: false)
            throw .threadUnavailable(error)
        }
        // Capturing has begun when this returns: a recording started now loses nothing to the start-up.
        if device != nil {
            shared.withLock(waitingUntil: { $0.hasStamp || $0.isFinished },
                            timeout: .milliseconds(CaptureThread.startTimeoutMilliseconds(configuration) + 1_000)) { _ in }
        }
    }

    /// Why the device was not there when the session started (with `waitsForDevice`), or `nil`.
    let unavailableReason: AudioCaptureError?

    /// Opens `configuration`'s device for capture, translating alsa-lib's errors.
    static func open(
        _ configuration: AudioCaptureConfiguration, sampleRate: Int, channelCount: Int, candidates: [DeviceSampleFormat], exactRate: Bool
    ) throws(AudioCaptureError) -> PCMDevice {
        let name = configuration.deviceName
        do throws(CaptureOpenFailure) {
            return try PCMDevice.openCapture(
                name: name, configurationText: configuration.configurationText, sampleRate: sampleRate, channelCount: channelCount,
                candidates: candidates, latencyMicroseconds: configuration.latencyMicroseconds, exactRate: exactRate)
        } catch {
            switch error {
            case .refused(let refused, let offers):
                throw .unsupportedSettings(name: name, refused: refused, offers: offers)
            case .alsa(let cause):
                switch cause.function {
                case "snd_pcm_open" where [-ENOENT, -ENODEV, -ENXIO, -EINVAL].contains(cause.code):
                    throw .unknownDevice(name: name, cause: cause,
                                         availableDevices: PCMDevice.availablePCMNames(stream: SND_PCM_STREAM_CAPTURE))
                case "snd_pcm_open":
                    throw .deviceUnavailable(name: name, cause: cause)
                case "snd_pcm_set_params", "snd_pcm_get_params", "snd_pcm_hw_params_any":
                    throw .formatRefused(name: name, cause: cause)
                default:
                    throw .invalidConfiguration(cause: cause)
                }
            }
        }
    }

    /// Whether the thread has ended (the file finished, the device closed).
    var isFinished: Bool { shared.withLock { $0.isFinished } }

    /// Asks the thread to end at once (a recorder's file is finished with what it has) and waits for it.
    func end() {
        shared.withLock { $0.stopRequested = true }
        shared.broadcast()
        join()
    }

    /// Waits for the thread to end by itself (after a stop time, a duration, a failure). Called
    /// on the thread itself (its event handler released the recorder's last reference), it
    /// returns at once: the thread is ending anyway.
    func join() {
        let running = thread.withLock { thread -> NamedThread? in
            guard let current = thread, !current.isCurrent else { return nil }
            thread = nil
            return current
        }
        running?.join()
    }
}
