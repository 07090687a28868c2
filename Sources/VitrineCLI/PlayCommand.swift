import ArgumentParser
import MediaTime
import Playback
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `vitrine play FILE...`: plays files in sequence, gaplessly, optionally looping, and writes the
/// presentation log.
struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play media files in sequence, gaplessly.",
        discussion: """
            The presentation log (--presentation-log) has one JSON object per line for every \
            presented frame and every event; see docs/presentation-log.md.
            """)

    enum DisplayChoice: String, ExpressibleByArgument, CaseIterable {
        case headless, kms, auto
    }

    @Argument(help: "Files or URLs to play, in order.")
    var files: [String]

    @Flag(help: "Loop the whole list forever (without a gap at the seam).")
    var loop = false

    @Option(help: "Where to show the video: headless, kms or auto.")
    var display: DisplayChoice = .auto

    @Option(name: .customLong("presentation-log"), help: "Write the presentation log (JSON lines) to PATH ('-' for standard output).")
    var presentationLog: String?

    @Option(help: "Stop after this many seconds.")
    var duration: Double?

    @Flag(name: .customLong("no-audio"), help: "Play without sound (audio tracks are not decoded).")
    var noAudio = false

    @Option(help: "Refresh rate of the headless display, in Hz.")
    var refreshRate: Int32 = 60

    @Flag(help: "Run on a simulated clock, as fast as decoding allows (headless only): the presentation log is the one a real-time run on an idle machine would write.")
    var simulatedClock = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file to play") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be a positive number of seconds") }
        guard (1...480).contains(refreshRate) else { throw ValidationError("--refresh-rate must be between 1 and 480") }
    }

    func run() async throws {
        let log: PresentationLogWriter?
        do { log = try presentationLog.map { path throws(PresentationLogError) in try PresentationLogWriter(path: path) } } catch {
            throw ValidationError(error.description)
        }
        // The KMS display and the ALSA output are separate modules wired in by their own issues;
        // until then every choice presents to a paced null sink (the engine runs for real).
        if display == .kms {
            printError("vitrine play: --display kms is not wired in yet; presenting headless")
        }
        let clock: any HostClock = simulatedClock ? ManualClock(start: MonotonicClock().now()) : MonotonicClock()
        let videoSink = NullVideoSink(refreshRate: refreshRate, clock: clock)
        let audioSink: NullAudioSink? = noAudio ? nil : NullAudioSink(clock: clock)
        // The queue owns the items: once played they are released, so a long queue does not
        // keep every finished item alive here.
        let player = QueuePlayer(
            items: files.map { file in
                let item = PlayerItem(url: file)
                if noAudio { item.isAudioEnabled = false }
                return item
            },
            videoSink: videoSink, audioSink: audioSink, clock: clock)
        player.loops = loop
        if let log { player.setPresentationHandler { log.write($0) } }
        let events = player.events
        let failures = Atomic<Int>(0)
        let watcher = Task {
            for await event in events {
                switch event {
                case .itemStatusChanged(let item, .failed):
                    failures.add(1, ordering: .relaxed)
                    printError("vitrine play: \(item.error?.description ?? item.url)")
                case .failedToPlayToEndTime(let item, let error) where item.status != .failed:
                    // A read error part-way (load failures were reported just above).
                    printError("vitrine play: \(error.description)")
                default: break
                }
            }
        }
        player.play()
        let start = clock.now()
        let limit = duration.map { MediaTime(seconds: $0, preferredTimescale: 1000) }
        while true {
            try? await Task.sleep(for: .milliseconds(simulatedClock ? 2 : 20))
            if player.items().isEmpty { break }
            if let limit, clock.now() - start >= limit { break }
        }
        player.invalidate()  // ends the event stream, so the watcher finishes
        videoSink.stop()
        log?.close()
        await watcher.value
        if failures.load(ordering: .relaxed) >= files.count {
            throw ExitCode(1)
        }
    }
}

