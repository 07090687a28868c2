import ChildProcesses
import Foundation
import Testing

/// `vitrine play --config` with `[audio.ambient]`: a loud room, heard through ALSA's file plugin
/// (`infile`) while a still picture shows (nothing sounds), raises the master volume the next
/// clip's tone then plays at.
@Suite("play with the ambient volume", .enabled(if: CommandRunner.vitrine != nil && CommandRunner.hasTool("ffmpeg"), "needs the vitrine binary and ffmpeg"))
struct PlayAmbientTests {
    @Test("the loud room measured while nothing sounds sets the volume the tone after it is heard at")
    func loudRoomRaisesTheVolume() throws {
        let directory = try CommandRunner.temporaryDirectory("ambient")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A still picture for 3 s (nothing sounds), then a clip: 1 s of silence, then 2 s of a 1 kHz tone at half of full scale.
        let picture = try CommandRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=teal:s=160x120", "-frames:v", "1", directory + "/still.png",
        ])
        try #require(picture.status == 0, "\(picture.stderr)")
        let made = try CommandRunner.run("ffmpeg", [
            "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "color=c=navy:s=160x120:r=25:d=3",
            "-f", "lavfi", "-i", "aevalsrc=if(gte(t\\,1)\\,0.5*sin(2*PI*1000*t)\\,0):s=48000:d=3:c=stereo",
            "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "pcm_s16le", "-shortest", directory + "/clip.mkv",
        ])
        try #require(made.status == 0, "\(made.stderr)")
        // The room: noise at about −15 dBFS RMS, louder than the level range's top.
        var state: UInt64 = 99
        let room: [Int16] = (0..<(48_000 * 20)).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16(truncatingIfNeeded: Int64(bitPattern: state) >> 48) / 4
        }
        try room.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: directory + "/room.raw"))
        try """
            pcm.speaker { type file slave.pcm "null" file "\(directory)/out.wav" format "wav" perm 0644 }
            pcm.room { type file slave.pcm "null" file "/dev/null" infile "\(directory)/room.raw" format "raw" }
            """.write(toFile: directory + "/asoundrc", atomically: true, encoding: .utf8)
        try """
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            image = "still.png"
            duration = "3s"
            [[playlists.main.items]]
            video = "clip.mkv"
            """.write(toFile: directory + "/show.toml", atomically: true, encoding: .utf8)
        try """
            schedule = "show.toml"
            [display]
            kind = "headless"
            mode = "160x120@25"
            [audio]
            device = "speaker"
            volume = 0.2
            [audio.ambient]
            device = "room"
            level_range = [-50, -30]
            volume_range = [0.2, 0.9]
            max_change_per_second = 1
            time_constant = "0.5s"
            """.write(toFile: directory + "/vitrine.toml", atomically: true, encoding: .utf8)

        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(directory)/asoundrc", CommandRunner.vitrine!,
            "play", directory + "/show.toml", "--config", directory + "/vitrine.toml", "--state-directory", directory + "/state", "--duration", "7.5",
            // At midnight the looping fallback is at its start: the picture first, whatever the time of the run.
            "--start-at", "2026-01-01T00:00:00Z",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("ambient volume from room"), "\(run.stderr)")
        #expect(run.stderr.contains("→ 0.9"), "the log does not say the volume heads for 0.9: \(run.stderr)")

        // The tone as heard: its RMS over the loud part of the output, against the 0.5 / √2 played.
        let output = try PlayAudioMixTests.leftChannel(ofWAV: directory + "/out.wav")
        let loud = output.indices.filter { abs(output[$0]) > 0.1 }
        let first = try #require(loud.first, "no tone in \(output.count) frames")
        #expect(first >= 48_000 * 3, "the tone came before the picture's 3 s were over (frame \(first))")
        let tone = output[(first + 4_800)..<min(output.count, first + 4_800 + 24_000)]
        let level = 20 * log10((tone.reduce(0) { $0 + $1 * $1 } / Double(tone.count)).squareRoot() / (0.5 / 2.0.squareRoot()))
        #expect(abs(level - 20 * log10(0.9)) <= 0.5,
                "the tone is heard at \(level) dB of its level from frame \(first) of \(output.count); 0.9 is \(20 * log10(0.9)) dB, 0.2 would be \(20 * log10(0.2)) dB: \(run.stderr)")
    }
}
