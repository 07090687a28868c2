import ChildProcesses
import Foundation
@testable import Audio

/// A capture device with known content: alsa-lib's file plugin reading raw samples from a file
/// (`infile`) over the null plugin, so no sound card or microphone is needed. The plugin delivers at
/// once; the recorder paces it to real time from its first read, so the frame captured at host time
/// `t` is frame `(t − start) × rate` of the file.
struct CaptureSource {
    let name: String
    let path: String
    let configurationText: String

    /// Writes interleaved 16-bit `samples` and defines PCM `name` reading them.
    init(_ samples: [Int16], in directory: TemporaryDirectory, name: String = "vitrine_source") throws {
        try self.init(bytes: samples.withUnsafeBytes { Data($0) }, in: directory, name: name)
    }

    /// Writes interleaved 32-bit `samples` (a device delivering S32) and defines PCM `name`.
    init(int32s samples: [Int32], in directory: TemporaryDirectory, name: String = "vitrine_source") throws {
        try self.init(bytes: samples.withUnsafeBytes { Data($0) }, in: directory, name: name)
    }

    private init(bytes: Data, in directory: TemporaryDirectory, name: String) throws {
        self.name = name
        path = directory.path("\(name).raw")
        try bytes.write(to: URL(fileURLWithPath: path))
        configurationText = """
            pcm.\(name) {
                type file
                slave.pcm "null"
                file "/dev/null"
                infile "\(path)"
                format "raw"
            }

            """
    }

    var configuration: AudioCaptureConfiguration {
        AudioCaptureConfiguration(deviceName: name, configurationText: configurationText)
    }
}

/// Deterministic white noise (a linear congruential generator): every window of a few frames is
/// unique, so a recording can be found in its source to the frame. Peak `amplitude` of full scale.
func noise(frames: Int, channels: Int = 2, amplitude: Double = 0.5, seed: UInt64 = 1) -> [Int16] {
    var state = seed
    return (0..<(frames * channels)).map { _ in
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        let unit = Double(Int64(bitPattern: state) >> 11) / Double(1 << 52)  // −1 … 1
        return Int16((unit * amplitude * 32_767).rounded())
    }
}

/// A sine tone in 16-bit samples with peak `amplitude` of full scale, the same on every channel.
func tone(frequency: Double = 1_000, amplitude: Double, frames: Int, channels: Int = 2, rate: Int = 48_000) -> [Int16] {
    var samples = [Int16](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
        let value = Int16((amplitude * 32_768 * sin(2 * Double.pi * frequency * Double(frame) / Double(rate))).rounded())
        for channel in 0..<channels { samples[frame * channels + channel] = value }
    }
    return samples
}

/// `20 log10` of an amplitude (RMS or peak) as a fraction of full scale.
func decibels(_ amplitude: Double) -> Double { 20 * log10(amplitude) }

/// The RMS of 16-bit samples as a fraction of full scale.
func rms(_ samples: ArraySlice<Int16>) -> Double {
    guard !samples.isEmpty else { return 0 }
    let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
    return (sum / Double(samples.count)).squareRoot() / 32_768
}

/// What ffprobe says of the first audio stream and the container, as key=value pairs.
func probe(_ path: String) throws -> [String: String] {
    let output = try runTool("ffprobe", [
        "-v", "error", "-select_streams", "a:0", "-count_packets",
        "-show_entries", "stream=codec_name,sample_rate,channels,sample_fmt,bits_per_raw_sample,duration,duration_ts:format=format_name,duration",
        "-of", "default=noprint_wrappers=1", path,
    ])
    var fields: [String: String] = [:]
    for line in String(decoding: output, as: UTF8.self).split(separator: "\n") {
        let parts = line.split(separator: "=", maxSplits: 1)
        guard parts.count == 2 else { continue }
        let key = String(parts[0])
        // The stream's duration first; the container's (format section, printed after) only when the stream has none.
        if fields[key] == nil || fields[key] == "N/A" { fields[key] = String(parts[1]) }
    }
    return fields
}

/// FFmpeg's decode of `path` as interleaved raw samples (`s16le`, `s32le`, `f32le`), at its own rate and channels.
func decodeRaw(_ path: String, format: String) throws -> Data {
    try runTool("ffmpeg", ["-hide_banner", "-v", "error", "-nostdin", "-i", path, "-f", format, "-"])
}

/// Where `recorded` (a run of interleaved samples) starts in `source`, in frames: the first frame
/// whose next `probeFrames` frames match exactly.
func locate(_ recorded: ArraySlice<Int16>, in source: [Int16], channels: Int = 2, probeFrames: Int = 16) -> Int? {
    let probe = Array(recorded.prefix(probeFrames * channels))
    guard probe.count == probeFrames * channels else { return nil }
    var frame = 0
    while (frame + probeFrames) * channels <= source.count {
        if source[frame * channels] == probe[0], Array(source[(frame * channels)..<((frame + probeFrames) * channels)]) == probe {
            return frame
        }
        frame += 1
    }
    return nil
}

/// How many leading frames of `recorded` equal `source` from frame `offset` on.
func matchingFrames(_ recorded: ArraySlice<Int16>, in source: [Int16], from offset: Int, channels: Int = 2) -> Int {
    var count = 0
    var index = recorded.startIndex
    var sourceIndex = offset * channels
    while index + channels <= recorded.endIndex, sourceIndex + channels <= source.count,
          recorded[index..<(index + channels)].elementsEqual(source[sourceIndex..<(sourceIndex + channels)]) {
        count += 1
        index += channels
        sourceIndex += channels
    }
    return count
}

/// Waits for the recorder's `.finished` event (with a deadline), returning whether it was successful
/// and every event seen until then.
func waitForFinish(_ events: AsyncStream<AudioRecorderEvent>, timeout: Duration = .seconds(30)) async -> (successfully: Bool?, events: [AudioRecorderEvent]) {
    await withTaskGroup(of: (Bool?, [AudioRecorderEvent])?.self) { group in
        group.addTask {
            var seen: [AudioRecorderEvent] = []
            for await event in events {
                seen.append(event)
                if case .finished(let successfully) = event { return (successfully, seen) }
            }
            return (nil, seen)
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first.map { (successfully: $0.0, events: $0.1) } ?? (successfully: nil, events: [])
    }
}
