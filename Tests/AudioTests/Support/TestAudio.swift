import ChildProcesses
import Foundation
import MediaTime
import Playback
import MediaSinks
@testable import Audio

/// A temporary directory removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

enum ToolError: Error, CustomStringConvertible {
    case failed(String, Int32, String)
    var description: String {
        switch self {
        case .failed(let tool, let status, let output): "\(tool) exited \(status): \(output)"
        }
    }
}

/// Runs a command line tool and returns its standard output.
@discardableResult
func runTool(_ tool: String, _ arguments: [String]) throws -> Data {
    let directory = try TemporaryDirectory()
    let outputPath = directory.path("stdout")
    let errorPath = directory.path("stderr")
    let child = try ChildProcess(
        executable: "/usr/bin/\(tool)", arguments: arguments, standardOutput: outputPath, standardError: errorPath)
    let status = child.wait()
    let output = (try? Data(contentsOf: URL(fileURLWithPath: outputPath))) ?? Data()
    guard status == 0 else {
        let errors = (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? ""
        throw ToolError.failed(tool, status, errors)
    }
    return output
}

/// Generates media with the ffmpeg CLI.
func ffmpeg(_ arguments: [String]) throws {
    try runTool("ffmpeg", ["-hide_banner", "-loglevel", "error", "-nostdin", "-y"] + arguments)
}

/// FFmpeg's own decode of `path`, resampled to `rate` Hz stereo, as raw little-endian samples.
func ffmpegDecode(_ path: String, format: String, rate: Int = 48_000, channels: Int = 2) throws -> Data {
    try runTool("ffmpeg", [
        "-hide_banner", "-loglevel", "error", "-nostdin", "-i", path, "-f", format, "-ac", "\(channels)",
        "-ar", "\(rate)", "-",
    ])
}

extension Data {
    var floats: [Float] {
        withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
    var int16s: [Int16] {
        withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }
}

/// ALSA configuration text for a PCM named `name` that writes what it plays to a WAV file
/// through alsa-lib's file plugin (over an unclocked null slave).
func captureConfiguration(name: String = "vitrine_capture", file: String) -> String {
    """
    pcm.\(name) {
        type file
        slave { pcm { type null } }
        file "\(file)"
        format "wav"
        perm 0644
    }
    """
}

/// The 16-bit samples of a WAV file (the data chunk to the end of the file).
func readWAVSamples(_ path: String) throws -> [Int16] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    var offset = 12
    while offset + 8 <= data.count {
        let id = String(decoding: data[offset..<offset + 4], as: UTF8.self)
        let size = data[offset + 4..<offset + 8].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
        if id == "data" { return Data(data[(offset + 8)...]).int16s }
        offset += 8 + Int(size)
    }
    return []
}

/// Interleaved float samples in `format`, cut into buffers of `framesPerBuffer` with their media times.
func audioBuffers(_ samples: [Float], format: AudioFormat, framesPerBuffer: Int = 1024, start: Int64 = 0) -> [AudioBuffer] {
    let channels = format.channelCount
    var buffers: [AudioBuffer] = []
    var frame = 0
    let total = samples.count / channels
    while frame < total {
        let count = min(framesPerBuffer, total - frame)
        buffers.append(AudioBuffer(
            samples: Array(samples[(frame * channels)..<((frame + count) * channels)]), format: format,
            presentationTime: MediaTime(value: start + Int64(frame), timescale: Int32(format.sampleRate))))
        frame += count
    }
    return buffers
}

/// A stereo sine wave.
func sine(frequency: Double, amplitude: Float, frames: Int, rate: Int = 48_000) -> [Float] {
    var samples = [Float](repeating: 0, count: frames * 2)
    for frame in 0..<frames {
        let value = amplitude * Float(sin(2 * Double.pi * frequency * Double(frame) / Double(rate)))
        samples[frame * 2] = value
        samples[frame * 2 + 1] = value
    }
    return samples
}

/// Waits (polling, never longer than `timeout`) until `condition` holds.
func waitUntil(timeout: Duration = .seconds(20), _ condition: () -> Bool) async throws -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while !condition() {
        if clock.now > deadline { return false }
        try await Task.sleep(for: .milliseconds(20))
    }
    return true
}

/// Plays `buffers` through a fresh capture output and returns the captured 16-bit samples.
/// `configure` may set the input's controls before playback; `during` runs while it plays.
func capture(
    _ buffers: [AudioBuffer], in directory: TemporaryDirectory, tailFrames: Int = 4_800,
    configure: (ALSAOutput, MixerInput) -> Void = { _, _ in },
    during: ((ALSAOutput, MixerInput) async throws -> Void)? = nil
) async throws -> [Int16] {
    let file = directory.path("capture-\(UUID().uuidString).wav")
    let total = buffers.reduce(0) { $0 + $1.frameCount }
    let output = try ALSAOutput(configuration: .init(
        deviceName: "vitrine_capture", configurationText: captureConfiguration(file: file),
        inputQueueFrames: total + 1))
    let input = output.makeInput(label: "test")
    configure(output, input)
    for buffer in buffers { _ = input.enqueue(buffer) }
    try output.start()
    if let during {
        // Stop soon after the action instead of playing everything: the action's timing
        // depends on the scheduler, what it does to the samples after it does not.
        try await during(output, input)
    } else {
        _ = try await waitUntil { input.queuedFrames == 0 }
    }
    let end = output.deviceTime + MediaTime(value: Int64(tailFrames), timescale: 48_000)
    _ = try await waitUntil { output.deviceTime >= end }
    output.stop()
    return try readWAVSamples(file)
}
