import Foundation
import Testing

/// `vitrine play --music --announcement --duck-to`: music under the video, announcements ducking it,
/// checked in what ALSA's file plugin captured.
@Suite("play with music and announcements", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct PlayAudioMixTests {
    /// The left channel of a 16-bit PCM WAV file, as samples in -1...1.
    static func leftChannel(ofWAV path: String, channels: Int = 2) throws -> [Double] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let range = try #require(data.range(of: Data("data".utf8)), "\(path) has no data chunk")
        let start = range.upperBound + 4
        let frameBytes = 2 * channels
        let frameCount = (data.count - start) / frameBytes
        return data.withUnsafeBytes { raw in
            (0..<frameCount).map { frame in
                let offset = start + frame * frameBytes
                let sample = Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8)
                return Double(sample) / 32768
            }
        }
    }

    /// The amplitude of the `frequency` component of each consecutive window (Goertzel).
    static func levels(of samples: [Double], frequency: Double, sampleRate: Double = 48_000, window: Int) -> [Double] {
        let coefficient = 2 * cos(2 * Double.pi * frequency / sampleRate)
        return stride(from: 0, to: samples.count - window + 1, by: window).map { start in
            var previous = 0.0, beforePrevious = 0.0
            for sample in samples[start..<(start + window)] {
                let current = sample + coefficient * previous - beforePrevious
                beforePrevious = previous
                previous = current
            }
            let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
            return 2 * power.squareRoot() / Double(window)
        }
    }

    static func median(_ values: ArraySlice<Double>) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func decibels(_ ratio: Double) -> Double { 20 * log10(ratio) }

    @Test("an announcement ducks the music and the video's sound by --duck-to while it plays, and they come back after")
    func announcementDucksMusicAndSoundtrack() throws {
        let directory = try CommandRunner.temporaryDirectory("play-mix")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let music = directory + "/music.wav", chime = directory + "/announcement.wav"
        // 50 ms windows hold whole cycles of 440 (the video's tone), 1000 (music) and 3000 Hz (announcement).
        for (path, frequency, seconds) in [(music, 1000, 2), (chime, 3000, 1)] {
            let made = try CommandRunner.run("ffmpeg", [
                "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=\(frequency):sample_rate=48000:duration=\(seconds)",
                "-ac", "2", "-c:a", "pcm_s16le", path,
            ])
            try #require(made.status == 0, "\(made.stderr)")
        }
        let configuration = directory + "/asoundrc"
        try """
            pcm.capture { type file slave.pcm "null" file "\(directory)/out.wav" format "wav" perm 0644 }
            """.write(toFile: configuration, atomically: true, encoding: .utf8)
        let run = try CommandRunner.run("/usr/bin/env", [
            "ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:\(configuration)", CommandRunner.vitrine!,
            "play", CommandRunner.fixture("h264_aac.mp4"), "--display", "headless", "--mode", "320x240@25",
            "--audio-device", "capture", "--music", music, "--music-volume", "0.5",
            "--announcement", "2=\(chime)", "--duck-to", "0.25", "--duration", "4.5",
        ])
        #expect(run.status == 0, "\(run.stderr)")

        let window = 2_400
        let seconds = Double(window) / 48_000
        let captured = try Self.leftChannel(ofWAV: directory + "/out.wav")
        let announcement = Self.levels(of: captured, frequency: 3000, window: window)
        let musicLevels = Self.levels(of: captured, frequency: 1000, window: window)
        let soundtrack = Self.levels(of: captured, frequency: 440, window: window)
        // Where the announcement was heard: windows holding its tone.
        let loud = announcement.indices.filter { announcement[$0] > 0.05 }
        let first = try #require(loud.first, "no announcement in \(captured.count) captured frames")
        let last = try #require(loud.last)
        let heard = Double(last - first + 1) * seconds
        #expect(abs(heard - 1) <= 0.1, "the 1 s announcement was heard for \(heard) s")
        let margin = 3  // 150 ms: clear of the ramps and of windows straddling an edge
        try #require(first >= 16 + margin && last + 16 + margin < musicLevels.count, "too little captured around the announcement")
        func level(_ levels: [Double], _ range: Range<Int>) -> Double { Self.median(levels[range]) }
        let before = (first - 16)..<(first - margin), during = (first + margin)..<(last - margin + 1)
        let after = (last + margin + 1)..<(last + 16)

        // The music plays at --music-volume ...
        let musicSource = Self.median(Self.levels(of: try Self.leftChannel(ofWAV: music), frequency: 1000, window: window)[...])
        let musicBefore = level(musicLevels, before)
        #expect(abs(Self.decibels(musicBefore / (musicSource * 0.5))) < 0.5, "music at \(musicBefore), source \(musicSource)")
        // ... ducks to --duck-to (-12 dB) during the announcement and comes back after.
        let musicDuck = Self.decibels(level(musicLevels, during) / musicBefore)
        #expect(abs(musicDuck - Self.decibels(0.25)) < 1, "music ducked by \(musicDuck) dB")
        #expect(abs(Self.decibels(level(musicLevels, after) / musicBefore)) < 0.5, "music restored")
        // The video's own sound ducks the same way.
        let soundtrackBefore = level(soundtrack, before)
        #expect(soundtrackBefore > 0.05, "the video's 440 Hz tone is heard before (\(soundtrackBefore))")
        let soundtrackDuck = Self.decibels(level(soundtrack, during) / soundtrackBefore)
        #expect(abs(soundtrackDuck - Self.decibels(0.25)) < 1, "soundtrack ducked by \(soundtrackDuck) dB")
        #expect(abs(Self.decibels(level(soundtrack, after) / soundtrackBefore)) < 0.5, "soundtrack restored")
        // The announcement itself is not ducked: its tone is heard at the file's level.
        let chimeSource = Self.median(Self.levels(of: try Self.leftChannel(ofWAV: chime), frequency: 3000, window: window)[...])
        #expect(abs(Self.decibels(level(announcement, during) / chimeSource)) < 0.5, "announcement at \(level(announcement, during)), file \(chimeSource)")
    }

    @Test("music and announcement options are checked before anything plays")
    func badMixOptions() throws {
        let file = CommandRunner.fixture("queue1.mp4")
        let noAudio = try CommandRunner.vitrine(["play", file, "--no-audio", "--music", file])
        #expect(noAudio.status != 0)
        #expect(noAudio.stderr.contains("--music and --announcement need sound"), "\(noAudio.stderr)")
        let badTime = try CommandRunner.vitrine(["play", file, "--announcement", "soon=chime.wav"])
        #expect(badTime.status != 0)
        #expect(badTime.stderr.contains("TIME=FILE"), "\(badTime.stderr)")
        let loud = try CommandRunner.vitrine(["play", file, "--duck-to", "2"])
        #expect(loud.status != 0)
        #expect(loud.stderr.contains("--duck-to must be between 0 and 1"), "\(loud.stderr)")
        let help = try CommandRunner.vitrine(["play", "--help"])
        for option in ["--music <FILE>", "--music-volume", "--announcement <TIME=FILE>", "--duck-to"] {
            #expect(help.stdout.contains(option), "help lists \(option)")
        }
    }

    @Test("a music file that cannot be decoded is an error naming it")
    func undecodableMusic() throws {
        let bad = CommandRunner.fixture("bad/text.mp4")
        let run = try CommandRunner.vitrine([
            "play", CommandRunner.fixture("queue1.mp4"), "--display", "headless", "--mode", "320x240@25",
            "--audio-device", "null", "--music", bad, "--duration", "1",
        ])
        #expect(run.status == 1)
        #expect(run.stderr.contains("vitrine play: --music: cannot play audio: \(bad)"), "\(run.stderr)")
    }
}
