import ArgumentParser
import Audio
import Logging

/// `vitrine play`'s music bed and announcements: `--music FILE` loops under the video,
/// `--announcement TIME=FILE` plays FILE TIME seconds after playback starts and ducks the music
/// (and the video's own sound) to `--duck-to` while it plays.
struct AudioMixOptions: ParsableArguments {
    @Option(name: .customLong("music"), help: ArgumentHelp(
        "Background music looped under the video for the whole run (any audio file FFmpeg decodes).", valueName: "FILE"))
    var musicFile: String?

    @Option(name: .customLong("music-volume"), help: ArgumentHelp("The music's volume, 0...1.", valueName: "V"))
    var musicVolume: Double = 1

    @Option(name: .customLong("announcement"), help: ArgumentHelp(
        "Play FILE as an announcement TIME seconds after the sound starts; the music and the video's sound duck while it plays (repeatable).",
        valueName: "TIME=FILE"))
    var announcements: [String] = []

    @Option(name: .customLong("duck-to"), help: ArgumentHelp(
        "The gain, 0...1, that music and the video's sound duck to during announcements (0.2 is about -14 dB).", valueName: "V"))
    var duckTo: Double = 0.2

    /// Whether any option here asks for sound beyond the soundtrack.
    var isRequested: Bool { musicFile != nil || !announcements.isEmpty }

    func validate() throws {
        guard (0...1).contains(musicVolume) else { throw ValidationError("--music-volume must be between 0 and 1") }
        guard (0...1).contains(duckTo) else { throw ValidationError("--duck-to must be between 0 and 1") }
        for text in announcements {
            do { _ = try ScheduledAnnouncement(parsing: text) } catch { throw ValidationError(error.description) }
        }
    }

    /// Refuses the mix where no sound is played (`--no-audio`, the null sinks).
    func validate(soundIsPlayed: Bool) throws {
        if isRequested && !soundIsPlayed {
            throw ValidationError("--music and --announcement need sound: not with --no-audio, --display null or --simulated-clock")
        }
    }

    /// Decodes the music and the announcements for `output`, starts the music and schedules the
    /// announcements from now. Returns `nil` when nothing was asked for or there is no output.
    func start(output: ALSAOutput?, soundtrack: MixerInput?, logger: Logger) throws(AudioMixError) -> AudioMix? {
        guard isRequested, let output else { return nil }
        let session = AudioSession(policy: .duck, duckLevel: Float(duckTo))
        // Announcements must be heard over the video's own sound too, not only over the music.
        if let soundtrack { session.duck(soundtrack) }
        var music: AudioPlayer?
        if let musicFile {
            let player = try Self.player(musicFile, output: output, category: .backgroundMusic)
            player.numberOfLoops = -1
            player.volume = Float(musicVolume)
            session.register(player)
            music = player
        }
        var scheduled: [(ScheduledAnnouncement, AudioPlayer)] = []
        for text in announcements {
            // Parsed already by validate(); a text that does not parse is skipped.
            guard let announcement = try? ScheduledAnnouncement(parsing: text) else { continue }
            scheduled.append((announcement, try Self.player(announcement.file, output: output, category: .announcement)))
        }
        music?.play()
        let tasks = scheduled.map { announcement, player in
            Task {
                try? await Task.sleep(for: .milliseconds(Int64((announcement.time * 1000).rounded())))
                guard !Task.isCancelled else { return }
                logger.info("announcement", metadata: ["file": "\(announcement.file)", "at": "\(announcement.time)"])
                session.playAnnouncement(player)
            }
        }
        return AudioMix(session: session, music: music, announcements: scheduled.map(\.1), tasks: tasks)
    }

    private static func player(_ file: String, output: ALSAOutput, category: AudioSession.Category) throws(AudioMixError) -> AudioPlayer {
        do {
            return try AudioPlayer(contentsOf: file, output: output, category: category)
        } catch {
            // The decoder's error names the file and FFmpeg's reason.
            throw AudioMixError(description: "\(category == .announcement ? "--announcement" : "--music"): \(error.description)")
        }
    }
}

/// A music or announcement file that cannot be played.
struct AudioMixError: Error, CustomStringConvertible {
    var description: String
}

/// `--announcement TIME=FILE`, parsed.
struct ScheduledAnnouncement: Sendable, Hashable {
    /// Seconds after playback starts.
    var time: Double
    var file: String

    struct ParseError: Error, CustomStringConvertible {
        var text: String
        var description: String { "--announcement '\(text)': expected TIME=FILE, TIME in seconds (>= 0), e.g. 12.5=chime.wav" }
    }

    init(parsing text: String) throws(ParseError) {
        guard let equals = text.firstIndex(of: "="), let time = Double(text[..<equals]), time.isFinite, time >= 0,
              text.index(after: equals) < text.endIndex
        else { throw ParseError(text: text) }
        self.time = time
        file = String(text[text.index(after: equals)...])
    }
}

/// The music and announcements playing for one `vitrine play` run.
struct AudioMix: Sendable {
    let session: AudioSession
    let music: AudioPlayer?
    let announcements: [AudioPlayer]
    let tasks: [Task<Void, Never>]

    /// Cancels announcements not yet due and silences the players (before the output stops).
    func stop() {
        for task in tasks { task.cancel() }
        music?.stop()
        for announcement in announcements { announcement.stop() }
    }
}
