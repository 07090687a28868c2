import Foundation
import Testing

/// `vitrine play` on the real headless display: screenshots by presentation time, display and audio options.
@Suite("play on real outputs", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct PlayOutputsTests {
    /// ffmpeg's frame at `time`, scaled like the display scales it (640x480 from 320x240: an exact fit).
    func reference(_ fixture: String, at time: String, into directory: String) throws -> String {
        let path = directory + "/ref-\(time).png"
        let made = try CommandRunner.run("ffmpeg", ["-v", "error", "-nostdin", "-y", "-ss", time, "-i", CommandRunner.fixture(fixture),
                                                    "-frames:v", "1", "-vf", "scale=640:480", path])
        try #require(made.status == 0, "\(made.stderr)")
        return path
    }

    @Test("--screenshot-at writes the first frame presented at or after the time (PSNR against ffmpeg's frame)")
    func screenshotAtTime() throws {
        let directory = try CommandRunner.temporaryDirectory("play-shot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shot = directory + "/shot.png", early = directory + "/early.png"
        let log = directory + "/log.jsonl"
        let run = try CommandRunner.vitrine([
            "play", CommandRunner.fixture("h264_aac.mp4"), "--display", "headless", "--mode", "640x480@50", "--no-audio",
            "--screenshot-at", "2.0=\(shot)", "--screenshot-at", "0.97=\(early)", "--presentation-log", log, "--duration", "3",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        // 2.0 is a frame start; 0.97 lies inside the frame [0.96, 1.0): the first frame at or after it is 1.0.
        let atTwo = try CommandRunner.psnr(shot, reference("h264_aac.mp4", at: "2", into: directory))
        let before = try CommandRunner.psnr(shot, reference("h264_aac.mp4", at: "1.96", into: directory))
        let after = try CommandRunner.psnr(shot, reference("h264_aac.mp4", at: "2.04", into: directory))
        #expect(atTwo >= 32, "PSNR \(atTwo) dB against ffmpeg's frame at 2.0 s")
        #expect(atTwo > before + 3 && atTwo > after + 3, "the neighbours match worse: \(before), \(after) vs \(atTwo)")
        let one = try CommandRunner.psnr(early, reference("h264_aac.mp4", at: "1", into: directory))
        let previous = try CommandRunner.psnr(early, reference("h264_aac.mp4", at: "0.96", into: directory))
        #expect(one >= 32 && one > previous + 3, "0.97 gives the frame at 1.0 (\(one) dB; 0.96: \(previous) dB)")
        // The log saw the frame at exactly 2.0 presented.
        let text = try String(contentsOfFile: log, encoding: .utf8)
        #expect(text.contains("\"pts\":[25600,12800]"))
    }

    @Test("a screenshot time no frame reaches is an error naming the file")
    func unreachedScreenshot() throws {
        let directory = try CommandRunner.temporaryDirectory("play-shot")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CommandRunner.vitrine([
            "play", CommandRunner.fixture("queue1.mp4"), "--display", "headless", "--mode", "320x240@50", "--no-audio",
            "--screenshot-at", "30=\(directory)/late.png",
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("late.png: no frame was presented at or after 30"), "\(run.stderr)")
    }

    @Test("an audio device that cannot be opened is a clear warning listing the PCMs, the picture plays anyway, and the retries say nothing more")
    func unknownAudioDevice() throws {
        let directory = try CommandRunner.temporaryDirectory("play-nodevice")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try CommandRunner.vitrine([
            "play", CommandRunner.fixture("h264_aac.mp4"), "--display", "headless", "--mode", "320x240@25",
            "--audio-device", "no-such-pcm", "--duration", "3.5", "--presentation-log", "\(directory)/log.jsonl",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("warning: unknown ALSA device \"no-such-pcm\""), "\(run.stderr)")
        #expect(run.stderr.contains("available PCMs:") && run.stderr.contains("playing without sound for now"))
        // The device is tried again every second (three times in 3.5 s); alsa-lib's own line is
        // printed for the first open only, not once a second into the journal of a box without sound.
        let alsaLines = run.stderr.split(separator: "\n").filter { $0.contains("Unknown PCM no-such-pcm") }
        #expect(alsaLines.count <= 1, "\(run.stderr)")
        // Frames were presented from the start: the picture did not wait for a sound device.
        let frames = try String(contentsOfFile: "\(directory)/log.jsonl", encoding: .utf8).split(separator: "\n")
            .filter { $0.contains("\"type\":\"frame\"") }
        #expect(frames.count >= 50, "\(frames.count) frames in 3.5 s")
        #expect(frames.first?.contains("\"pts\":[0,") == true, "\(frames.first ?? "")")
    }

    @Test("sound plays through ALSA (the file plugin captures it)")
    func audioThroughALSA() throws {
        let directory = try CommandRunner.temporaryDirectory("play-audio")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = directory + "/asoundrc"
        try """
            pcm.capture { type file slave.pcm "null" file "\(directory)/out.wav" format "wav" perm 0644 }
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(configuration)", CommandRunner.vitrine!,
            "play", CommandRunner.fixture("h264_aac.mp4"), "--display", "headless", "--mode", "320x240@50",
            "--audio-device", "capture", "--volume", "0.5", "--duration", "2",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/out.wav")[.size] as? Int) ?? 0
        // 2 s of 48 kHz stereo S16 is 384000 bytes (the file plugin's null slave takes audio as fast as it comes).
        #expect(size > 200_000, "captured \(size) bytes")
    }

    @Test("--display null with --audio-device plays the sound to that device, and the sound paces the pictures")
    func nullDisplayWithSound() throws {
        let directory = try CommandRunner.temporaryDirectory("play-null-audio")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let configuration = directory + "/asoundrc", log = directory + "/log.jsonl"
        try """
            pcm.capture { type file slave.pcm "null" file "\(directory)/out.wav" format "wav" perm 0644 }
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(configuration)", CommandRunner.vitrine!,
            "play", CommandRunner.fixture("h264_aac.mp4"), "--display", "null", "--audio-device", "capture",
            "--presentation-log", log, "--duration", "2",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/out.wav")[.size] as? Int) ?? 0
        #expect(size > 200_000, "captured \(size) bytes")
        let frames = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("\"type\":\"frame\"") }
        #expect(frames.count >= 25, "\(frames.count) frames in 2 s")
        #expect(frames.last?.contains("audio_clock_s") == true, "\(frames.last ?? "")")
    }

    @Test("bad display options are refused with what they accept")
    func badDisplayOptions() throws {
        let rotation = try CommandRunner.vitrine(["play", CommandRunner.fixture("queue1.mp4"), "--rotation", "45"])
        #expect(rotation.status != 0)
        #expect(rotation.stderr.contains("0, 90, 180 or 270"), "\(rotation.stderr)")
        let shot = try CommandRunner.vitrine(["play", CommandRunner.fixture("queue1.mp4"), "--screenshot-at", "soon"])
        #expect(shot.status != 0)
        #expect(shot.stderr.contains("TIME=PATH"), "\(shot.stderr)")
    }
}
