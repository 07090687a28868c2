import Foundation
import MediaAsset
import MediaTime
import Testing
@testable import Audio

/// AudioRecorder against real alsa-lib: capture data comes from a file through ALSA's file plugin
/// (`infile`), the files are checked with ffprobe and decoded with ffmpeg.
@Suite("AudioRecorder", .serialized)
struct RecorderTests {
    static let seconds = MediaTime(value: 3, timescale: 2)  // 1.5 s
    static let frames = 72_000

    /// Records `duration` from `source` to a new file in `directory` and waits for the recording to finish.
    func recordFile(_ name: String, from source: CaptureSource, in directory: TemporaryDirectory, settings: AudioRecorder.Settings,
                    duration: MediaTime = seconds) async throws -> String {
        let path = directory.path(name)
        let recorder = try AudioRecorder(path: path, settings: settings, configuration: source.configuration)
        let events = recorder.events
        try recorder.record(forDuration: duration)
        let finished = await waitForFinish(events)
        #expect(finished.successfully == true, "events: \(finished.events)")
        #expect(!recorder.isRecording)
        #expect(recorder.currentTime == duration.convertScale(48_000))
        return path
    }

    @Test("a WAV recording holds exactly the frames asked for, each bit as captured")
    func wavIsBitExact() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 6)
        let source = try CaptureSource(samples, in: directory)
        let path = try await recordFile("take.wav", from: source, in: directory, settings: .init(format: .wav))

        let info = try probe(path)
        #expect(info["format_name"] == "wav")
        #expect(info["codec_name"] == "pcm_s16le")
        #expect(info["sample_rate"] == "48000")
        #expect(info["channels"] == "2")
        #expect(info["duration"] == "1.500000")
        let recorded = try decodeRaw(path, format: "s16le").int16s
        #expect(recorded.count == Self.frames * 2)
        let offset = try #require(locate(recorded[...], in: samples), "the recording is not in the source")
        #expect(matchingFrames(recorded[...], in: samples, from: offset) == Self.frames)
    }

    @Test("a FLAC recording decodes to the captured samples bit for bit, with the exact length")
    func flacIsBitExact() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 6, seed: 7)
        let source = try CaptureSource(samples, in: directory)
        let path = try await recordFile("take.flac", from: source, in: directory, settings: .init(format: .flac))

        let info = try probe(path)
        #expect(info["format_name"] == "flac")
        #expect(info["codec_name"] == "flac")
        #expect(info["sample_rate"] == "48000")
        #expect(info["channels"] == "2")
        #expect(info["sample_fmt"] == "s16")
        #expect(info["duration"] == "1.500000")
        let recorded = try decodeRaw(path, format: "s16le").int16s
        #expect(recorded.count == Self.frames * 2)
        let offset = try #require(locate(recorded[...], in: samples))
        #expect(matchingFrames(recorded[...], in: samples, from: offset) == Self.frames)
    }

    @Test("a 24-bit FLAC recording from an S32 device keeps the upper 24 bits of every sample")
    func flac24IsBitExact() async throws {
        let directory = try TemporaryDirectory()
        // 24-bit samples in 32-bit words (the low byte zero), as a 24-bit sound card delivers them.
        let words = noise(frames: 48_000 * 6, seed: 3).enumerated().map { Int32($1) << 16 | Int32(($0 * 37) & 0xFF) << 8 }
        let source = try CaptureSource(int32s: words, in: directory)
        let path = directory.path("take24.flac")
        let recorder = try AudioRecorder(path: path, settings: .init(format: .flac, bitDepth: 24), configuration: source.configuration)
        let events = recorder.events
        try recorder.record(forDuration: Self.seconds)
        #expect(recorder.deviceFormat?.sampleFormat == .s32)
        #expect(await waitForFinish(events).successfully == true)

        let info = try probe(path)
        #expect(info["bits_per_raw_sample"] == "24")
        let recorded = try decodeRaw(path, format: "s32le").withUnsafeBytes { Array($0.bindMemory(to: Int32.self)) }
        #expect(recorded.count == Self.frames * 2)
        // Find the first recorded frame in the source, then compare every word.
        let first = try #require(recorded.first)
        let candidates = words.indices.filter { $0 % 2 == 0 && words[$0] == first && words[$0 + 1] == recorded[1] }
        let start = try #require(candidates.first { Array(words[$0..<($0 + 32)]) == Array(recorded[0..<32]) })
        #expect(Array(words[start..<(start + recorded.count)]) == recorded)
    }

    @Test("an M4A recording is AAC that ffmpeg decodes without error, as long as asked within one period, at the tone's level")
    func m4aIsDecodableAAC() async throws {
        let directory = try TemporaryDirectory()
        let source = try CaptureSource(tone(amplitude: 0.1, frames: 48_000 * 6), in: directory)
        let path = try await recordFile("take.m4a", from: source, in: directory, settings: .init(format: .m4a))

        let info = try probe(path)
        #expect(info["codec_name"] == "aac")
        #expect(info["format_name"]?.contains("mp4") == true)
        #expect(info["sample_rate"] == "48000")
        #expect(info["channels"] == "2")
        let duration = try #require(info["duration"].flatMap(Double.init))
        #expect(abs(duration - 1.5) <= 0.025, "duration \(duration)")
        // ffmpeg prints nothing at -v error when every packet decodes.
        let decoded = try decodeRaw(path, format: "s16le").int16s
        #expect(abs(Double(decoded.count / 2) - 72_000) <= 1_200)
        // The middle of the recording is the −20 dBFS-peak tone (−23 dB RMS), within half a decibel.
        let middle = decoded[(decoded.count / 4)..<(decoded.count * 3 / 4)]
        #expect(abs(decibels(rms(middle)) - decibels(0.1 / 2.0.squareRoot())) <= 0.5, "level \(decibels(rms(middle))) dB")
    }

    @Test("record(forDuration:) stops by itself with exactly that many frames, also at 44.1 kHz mono")
    func forDurationIsExact() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 44_100 * 6, channels: 1, seed: 11)
        let source = try CaptureSource(samples, in: directory)
        let path = directory.path("mono.wav")
        let recorder = try AudioRecorder(path: path, settings: .init(format: .wav, sampleRate: 44_100, channelCount: 1),
                                         configuration: source.configuration)
        let events = recorder.events
        try recorder.record(forDuration: MediaTime(value: 1, timescale: 1))
        #expect(await waitForFinish(events).successfully == true)
        let recorded = try decodeRaw(path, format: "s16le").int16s
        #expect(recorded.count == 44_100)
        let offset = try #require(locate(recorded[...], in: samples, channels: 1))
        #expect(matchingFrames(recorded[...], in: samples, from: offset, channels: 1) == 44_100)
        #expect(try probe(path)["channels"] == "1")
    }

    @Test("record(atTime:) starts with the frame captured at that host time")
    func recordAtTimeStartsThere() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 8, seed: 5)
        let source = try CaptureSource(samples, in: directory)
        let path = directory.path("later.wav")
        let recorder = try AudioRecorder(path: path, configuration: source.configuration)
        let events = recorder.events
        // The source's first frame is captured while prepareToRecord runs (it returns once capturing).
        let beforePrepare = MonotonicClock.nanosecondsNow()
        try recorder.prepareToRecord()
        let afterPrepare = MonotonicClock.nanosecondsNow()
        let start = recorder.deviceCurrentTime + MediaTime(value: 1, timescale: 1)
        try recorder.record(atTime: start, forDuration: MediaTime(value: 1, timescale: 2))
        if MonotonicClock.nanosecondsNow() < start.nanoseconds - 100_000_000 {
            #expect(!recorder.isRecording, "recording before its start time")
        }
        #expect(await waitForFinish(events).successfully == true)

        let recorded = try decodeRaw(path, format: "s16le").int16s
        #expect(recorded.count == 24_000 * 2)
        let first = try #require(locate(recorded[...], in: samples))
        #expect(matchingFrames(recorded[...], in: samples, from: first) == 24_000)
        // Frame k of the source was captured k / 48000 s after capturing began, inside prepareToRecord.
        let earliest = Double(start.nanoseconds - afterPrepare) * 48_000 / 1e9
        let latest = Double(start.nanoseconds - beforePrepare) * 48_000 / 1e9
        #expect(Double(first) >= earliest.rounded(.down) && Double(first) <= latest.rounded(.up) + 1,
                "first frame \(first), expected \(earliest)…\(latest)")
    }

    @Test("pause() and record() leave exactly the paused span out: no gap, no repeated frame")
    func pauseAndResume() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 10, seed: 9)
        let source = try CaptureSource(samples, in: directory)
        let path = directory.path("paused.wav")
        let recorder = try AudioRecorder(path: path, configuration: source.configuration)
        try recorder.record()
        #expect(try await waitUntil { recorder.currentTime.seconds >= 0.4 })
        let pauseStart = MonotonicClock.nanosecondsNow()
        recorder.pause()
        let pauseEnd = MonotonicClock.nanosecondsNow()
        #expect(!recorder.isRecording)
        // The pause itself: real time during which the device goes on capturing.
        try await Task.sleep(for: .milliseconds(500))
        let resumeStart = MonotonicClock.nanosecondsNow()
        try recorder.record()
        let resumeEnd = MonotonicClock.nanosecondsNow()
        #expect(recorder.isRecording)
        let atResume = recorder.currentTime
        #expect(try await waitUntil { recorder.currentTime >= atResume + MediaTime(value: 2, timescale: 5) })
        recorder.stop()

        let recorded = try decodeRaw(path, format: "s16le").int16s
        let firstStart = try #require(locate(recorded[...], in: samples))
        let firstLength = matchingFrames(recorded[...], in: samples, from: firstStart)
        let rest = recorded[(firstLength * 2)...]
        let secondStart = try #require(locate(rest, in: samples), "the part after the pause is not in the source")
        let secondLength = matchingFrames(rest, in: samples, from: secondStart)
        #expect(firstLength + secondLength == recorded.count / 2, "more than two runs of source frames")
        #expect(secondStart > firstStart + firstLength, "a frame recorded twice")
        // The frames left out are those captured between the two calls: 0.5 s and the calls' own time.
        let skipped = Double(secondStart - (firstStart + firstLength))
        let shortest = Double(resumeStart - pauseEnd) * 48_000 / 1e9
        let longest = Double(resumeEnd - pauseStart) * 48_000 / 1e9
        #expect(skipped >= shortest.rounded(.down) - 1 && skipped <= longest.rounded(.up) + 1,
                "skipped \(skipped) frames, expected \(shortest)…\(longest)")
    }

    @Test("metering reads a −20 dBFS-peak 1 kHz tone within 0.5 dB of its computed level on every channel")
    func meteringOfATone() async throws {
        let directory = try TemporaryDirectory()
        let samples = tone(amplitude: 0.1, frames: 48_000 * 6)
        let source = try CaptureSource(samples, in: directory)
        let recorder = try AudioRecorder(path: directory.path("meter.wav"), configuration: source.configuration)
        recorder.isMeteringEnabled = true
        try recorder.prepareToRecord()
        let expectedAverage = Float(decibels(rms(samples[...])))
        let expectedPeak = Float(decibels(Double(samples.max()!) / 32_768))
        #expect(try await waitUntil {
            recorder.updateMeters()
            return recorder.averagePower(forChannel: 0) > -100
        })
        for channel in 0..<2 {
            #expect(abs(recorder.averagePower(forChannel: channel) - expectedAverage) <= 0.5,
                    "channel \(channel): \(recorder.averagePower(forChannel: channel)) dBFS, computed \(expectedAverage)")
            #expect(abs(recorder.peakPower(forChannel: channel) - expectedPeak) <= 0.5)
        }
        #expect(recorder.averagePower(forChannel: 2) == -160)
        recorder.stop()
    }

    @Test("metering follows silence and noise bursts")
    func meteringOfBursts() async throws {
        let directory = try TemporaryDirectory()
        // 0.4 s of silence, then 0.4 s of noise, over and over.
        let burst = noise(frames: 19_200, amplitude: 0.5, seed: 2)
        var samples: [Int16] = []
        for _ in 0..<10 { samples += [Int16](repeating: 0, count: burst.count) + burst }
        let source = try CaptureSource(samples, in: directory)
        let recorder = try AudioRecorder(path: directory.path("bursts.wav"), configuration: source.configuration)
        recorder.isMeteringEnabled = true
        try recorder.prepareToRecord()
        let loud = Float(decibels(rms(burst[...])))
        var sawSilence = false, sawBurst = false
        #expect(try await waitUntil {
            recorder.updateMeters()
            let level = recorder.averagePower(forChannel: 0)
            if level == -160 { sawSilence = true }
            if abs(level - loud) <= 0.5 { sawBurst = true }
            return sawSilence && sawBurst
        }, "silence seen: \(sawSilence), burst at \(loud) dBFS seen: \(sawBurst)")
        recorder.stop()
    }

    @Test("deleteRecording() removes a finished file and refuses while recording")
    func deleteRecording() async throws {
        let directory = try TemporaryDirectory()
        let source = try CaptureSource(noise(frames: 48_000 * 4), in: directory)
        let path = directory.path("gone.flac")
        let recorder = try AudioRecorder(path: path, settings: .init(format: .flac), configuration: source.configuration)
        try recorder.record()
        #expect(!recorder.deleteRecording())
        recorder.stop()
        #expect(FileManager.default.fileExists(atPath: path))
        #expect(recorder.deleteRecording())
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("after stop() the next record() starts a new file")
    func recordAgainAfterStop() async throws {
        let directory = try TemporaryDirectory()
        let samples = noise(frames: 48_000 * 6, seed: 4)
        let source = try CaptureSource(samples, in: directory)
        let path = directory.path("again.wav")
        let recorder = try AudioRecorder(path: path, configuration: source.configuration)
        let events = recorder.events
        try recorder.record(forDuration: MediaTime(value: 1, timescale: 1))
        #expect(await waitForFinish(events).successfully == true)
        let first = try decodeRaw(path, format: "s16le").int16s
        let events2 = recorder.events
        try recorder.record(forDuration: MediaTime(value: 1, timescale: 2))
        #expect(await waitForFinish(events2).successfully == true)
        let second = try decodeRaw(path, format: "s16le").int16s
        #expect(first.count == 96_000)
        #expect(second.count == 48_000)
        #expect(locate(second[...], in: samples) != nil)
    }
}

@Suite("AudioRecorder errors", .serialized)
struct RecorderErrorTests {
    static var hasSpeexPlugin: Bool {
        ["/usr/lib/x86_64-linux-gnu/alsa-lib/libasound_module_pcm_speex.so", "/usr/lib/aarch64-linux-gnu/alsa-lib/libasound_module_pcm_speex.so"]
            .contains { FileManager.default.fileExists(atPath: $0) }
    }

    @Test("a device that offers one channel refuses two, and the error says what it offers; one channel records",
          .enabled(if: hasSpeexPlugin, "needs libasound2-plugins (the speex plugin: capture, mono, S16 only)"))
    func refusedSettingsSayWhatTheDeviceOffers() async throws {
        let directory = try TemporaryDirectory()
        let raw = try CaptureSource(noise(frames: 48_000 * 4, channels: 1), in: directory, name: "vitrine_raw")
        let configuration = AudioCaptureConfiguration(
            deviceName: "vitrine_mono", configurationText: raw.configurationText + "pcm.vitrine_mono { type speex slave.pcm \"vitrine_raw\" }\n")
        let stereo = try AudioRecorder(path: directory.path("stereo.wav"), settings: .init(channelCount: 2), configuration: configuration)
        do throws(AudioCaptureError) {
            try stereo.record()
            Issue.record("a mono device recorded two channels")
        } catch {
            guard case .unsupportedSettings(let name, let refused, let offers) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(name == "vitrine_mono")
            #expect(refused == ["2 channels"])
            #expect(offers.channelCounts == 1...1)
            #expect(offers.sampleFormats == [.s16])
            #expect(error.description.contains("refused 2 channels; it offers 1 channel"), "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: directory.path("stereo.wav")), "a file was created for a refused recording")

        let mono = try AudioRecorder(path: directory.path("mono.wav"), settings: .init(channelCount: 1), configuration: configuration)
        let events = mono.events
        try mono.record(forDuration: MediaTime(value: 1, timescale: 2))
        #expect(await waitForFinish(events).successfully == true)
        let info = try probe(directory.path("mono.wav"))
        #expect(info["channels"] == "1")
        #expect(info["duration"] == "0.500000")
    }

    @Test("settings no file can hold, an unknown device and an uncreatable file are errors naming them")
    func badRequests() throws {
        let directory = try TemporaryDirectory()
        #expect(throws: AudioCaptureError.invalidSettings("the bit depth must be 16 or 24, not 20")) {
            _ = try AudioRecorder(path: directory.path("x.wav"), settings: .init(bitDepth: 20))
        }
        let unknown = try AudioRecorder(path: directory.path("x.wav"), configuration: .init(deviceName: "vitrine_no_such_device"))
        do throws(AudioCaptureError) {
            try unknown.prepareToRecord()
            Issue.record("an unknown device opened")
        } catch {
            guard case .unknownDevice(let name, _, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(name == "vitrine_no_such_device")
            #expect(error.description.contains("unknown ALSA capture device \"vitrine_no_such_device\""))
        }
        let source = try CaptureSource(noise(frames: 48_000), in: directory)
        let nowhere = try AudioRecorder(path: directory.path("missing/folder/x.flac"), settings: .init(format: .flac),
                                        configuration: source.configuration)
        do throws(AudioCaptureError) {
            try nowhere.prepareToRecord()
            Issue.record("a file was created in a missing folder")
        } catch {
            guard case .cannotCreateFile = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(error.description.contains("missing/folder/x.flac"), "\(error)")
        }
    }

    @Test("a write that fails mid-recording is an encode error, and the recording ends")
    func writeFailureIsAnEncodeError() async throws {
        let directory = try TemporaryDirectory()
        let source = try CaptureSource(noise(frames: 48_000 * 4), in: directory)
        // /dev/full takes the header into FFmpeg's buffer, then fails the first write of 32 KB.
        let recorder = try AudioRecorder(path: "/dev/full", configuration: source.configuration)
        let events = recorder.events
        try recorder.record(forDuration: MediaTime(value: 3, timescale: 1))
        let finished = await waitForFinish(events, timeout: .seconds(20))
        #expect(finished.successfully == false)
        #expect(finished.events.contains { if case .encodeError = $0 { true } else { false } }, "\(finished.events)")
        #expect(!recorder.isRecording)
    }
}
