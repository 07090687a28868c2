import ChildProcesses
import Foundation
import Testing

/// `vitrine record`: the built binary records from ALSA's file plugin (reading a raw file as its
/// capture data) and the files are checked with ffprobe and ffmpeg.
@Suite("vitrine record", .serialized, .enabled(if: CommandRunner.vitrine != nil && CommandRunner.hasTool("ffprobe"), "needs the vitrine binary and ffprobe"))
struct RecordCommandTests {
    /// A folder with `source.raw` (`seconds` of a 1 kHz tone, 16-bit, `channels` channels, peak 0.25)
    /// and an ALSA configuration defining the capture PCM `source` that reads it.
    struct Setup {
        let directory: String
        var configuration: String { directory + "/asoundrc" }
        var environment: String { "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(configuration)" }

        init(seconds: Int = 8, channels: Int = 2, rate: Int = 48_000) throws {
            directory = try CommandRunner.temporaryDirectory("record")
            var samples = [Int16](repeating: 0, count: seconds * rate * channels)
            for frame in 0..<(seconds * rate) {
                let value = Int16((0.25 * 32_768 * sin(2 * Double.pi * 1_000 * Double(frame) / Double(rate))).rounded())
                for channel in 0..<channels { samples[frame * channels + channel] = value }
            }
            try samples.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: directory + "/source.raw"))
            try """
                pcm.source { type file slave.pcm "null" file "/dev/null" infile "\(directory)/source.raw" format "raw" }
                """.write(toFile: configuration, atomically: true, encoding: .utf8)
        }

        func record(_ arguments: [String]) throws -> CommandRunner.Output {
            try CommandRunner.run("/usr/bin/env", [environment, CommandRunner.vitrine!, "record"] + arguments)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }

    static func probe(_ path: String) throws -> [String: String] {
        let output = try CommandRunner.run("ffprobe", [
            "-v", "error", "-select_streams", "a:0",
            "-show_entries", "stream=codec_name,sample_rate,channels,duration", "-of", "default=noprint_wrappers=1", path,
        ])
        return Dictionary(output.stdout.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: "=", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    }

    @Test("--duration records a FLAC file of exactly that length at the defaults (48 kHz, 2 channels, 16-bit)")
    func flacWithDuration() throws {
        let setup = try Setup()
        defer { setup.remove() }
        let path = setup.directory + "/take.flac"
        let run = try setup.record([path, "--device", "source", "--duration", "1.5"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("take.flac: 1.500 s, flac, 48000 Hz, 2 ch, 16-bit"), "\(run.stderr)")
        let info = try Self.probe(path)
        #expect(info["codec_name"] == "flac")
        #expect(info["sample_rate"] == "48000")
        #expect(info["channels"] == "2")
        #expect(info["duration"] == "1.500000")
    }

    @Test("--format m4a --sample-rate 44100 --channels 1 --meter: AAC, mono, and a level line a second when not on a terminal")
    func m4aWithMeter() throws {
        let setup = try Setup(channels: 1, rate: 44_100)
        defer { setup.remove() }
        let path = setup.directory + "/take.audio"
        let run = try setup.record([path, "--device", "source", "--format", "m4a", "--sample-rate", "44100", "--channels", "1",
                                    "--duration", "2.2", "--meter"])
        #expect(run.status == 0, "\(run.stderr)")
        let info = try Self.probe(path)
        #expect(info["codec_name"] == "aac")
        #expect(info["sample_rate"] == "44100")
        #expect(info["channels"] == "1")
        // A line per second of the tone: peak −12 dBFS, RMS −15 dBFS.
        let lines = run.stderr.split(separator: "\n").filter { $0.contains("dBFS") }
        #expect(lines.count >= 2, "\(run.stderr)")
        let last = try #require(lines.last)
        #expect(last.contains(" 1 ["), "\(last)")
        let level = last.components(separatedBy: "]").last?.components(separatedBy: "dBFS").first.flatMap {
            Double($0.trimmingCharacters(in: .whitespaces))
        }
        #expect(level.map { abs($0 - 20 * log10(0.25 / 2.0.squareRoot())) <= 0.5 } == true, "\(last)")
    }

    @Test("--meter on a terminal redraws one line in place", .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
                                                                    "needs script (util-linux) for a pseudo-terminal"))
    func meterOnATerminal() throws {
        let setup = try Setup()
        defer { setup.remove() }
        // script(1) runs the command on a pseudo-terminal and copies what it wrote to ours.
        let command = "env \(setup.environment) \(CommandRunner.vitrine!) record \(setup.directory)/tty.wav --device source --duration 1.5 --meter"
        let run = try CommandRunner.run("/usr/bin/script", ["-q", "-e", "-c", command, "/dev/null"])
        #expect(run.status == 0, "\(run.stdout)")
        let redraws = run.stdout.components(separatedBy: "\r").filter { $0.contains("dBFS\u{1B}[K") }
        #expect(redraws.count >= 10, "\(redraws.count) redraws: \(run.stdout.debugDescription)")
        #expect(run.stdout.contains(" L [") && run.stdout.contains(" R ["), "\(run.stdout)")
    }

    @Test("SIGINT stops the recording; the WAV file is complete and the exit status 0")
    func interruptedBySignal() async throws {
        let setup = try Setup(seconds: 30)
        defer { setup.remove() }
        let path = setup.directory + "/open-ended.wav"
        let errors = setup.directory + "/stderr"
        let child = try ChildProcess(executable: "/usr/bin/env",
                                     arguments: [setup.environment, CommandRunner.vitrine!, "record", path, "--device", "source"],
                                     standardOutput: "/dev/null", standardError: errors)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        // About a second of audio written (a WAV grows by 192 000 bytes a second).
        while ((try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0) < 192_000, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        child.terminate(SIGINT)
        let status = child.wait()
        let stderr = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        #expect(status == 0, "\(stderr)")
        let info = try Self.probe(path)
        let duration = try #require(info["duration"].flatMap(Double.init), "\(info)")
        #expect(duration >= 0.9, "\(duration) s")
        #expect(stderr.contains("open-ended.wav: "), "\(stderr)")
    }

    @Test("an unknown device, a format no one knows and a bad channel count are refused with what was wrong")
    func badRequests() throws {
        let setup = try Setup(seconds: 1)
        defer { setup.remove() }
        let unknown = try setup.record([setup.directory + "/x.wav", "--device", "no_such_capture", "--duration", "1"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("unknown ALSA capture device \"no_such_capture\""), "\(unknown.stderr)")
        let format = try setup.record([setup.directory + "/x.wav", "--format", "ogg"])
        #expect(format.status == 64)
        #expect(format.stderr.contains("--format must be wav, flac or m4a"), "\(format.stderr)")
        let channels = try setup.record([setup.directory + "/x.wav", "--channels", "0"])
        #expect(channels.status == 64)
        #expect(channels.stderr.contains("channel count must be 1 to 8"), "\(channels.stderr)")
    }
}
