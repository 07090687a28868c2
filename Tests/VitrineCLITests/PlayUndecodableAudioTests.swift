import Foundation
import Testing

/// `vitrine play` of a video whose audio track cannot be decoded: video-only, with a warning.
@Suite("play a video with an undecodable audio track", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct PlayUndecodableAudioTests {
    @Test("it plays video-only on the display clock, warns on standard error and logs audio_unavailable")
    func playsVideoOnlyWithWarning() throws {
        let directory = try CommandRunner.temporaryDirectory("play-undecodable")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = CommandRunner.fixture("undecodable_audio.mkv")
        let configuration = directory + "/asoundrc", log = directory + "/log.jsonl"
        try """
            pcm.capture { type file slave.pcm "null" file "\(directory)/out.wav" format "wav" perm 0644 }
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(configuration)", CommandRunner.vitrine!,
            "play", file, "--display", "headless", "--mode", "320x240@25", "--audio-device", "capture",
            "--presentation-log", log, "--duration", "2",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("warning") && run.stderr.contains("playing video only: \(file)"), "\(run.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        let warning = try #require(lines.first { $0.contains("\"event\":\"audio_unavailable\"") })
        #expect(warning.contains("no decoder"), "\(warning)")
        #expect(!lines.contains { $0.contains("item_failed") })
        // Frames keep coming, paced by the display (no audio clock on any frame line).
        let frames = lines.filter { $0.contains("\"type\":\"frame\"") }
        #expect(frames.count >= 25, "\(frames.count) frames in 2 s")
        #expect(!frames.contains { $0.contains("audio_clock_s") })
    }
}
