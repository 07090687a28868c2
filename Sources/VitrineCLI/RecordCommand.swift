import ArgumentParser
import Audio
import Logging
import MediaAsset
import MediaTime
import Supervisor
import UnixSignals
#if canImport(Glibc)
import Glibc
#endif

/// `vitrine record FILE`: records from an ALSA capture device to WAV, FLAC or M4A (AAC).
struct RecordCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record from an ALSA capture device to a WAV, FLAC or M4A file.",
        discussion: """
            Records until --duration has been recorded, or until SIGINT (Ctrl-C) or SIGTERM; the \
            file is then finished and closed. The format is --format, else the file's extension \
            (.wav, .flac, .m4a), else WAV. The device must offer the rate and channel count asked \
            for (record through plughw:… to let ALSA convert); the sample format is whichever it \
            offers, converted to the bit depth. --meter shows each channel's level on standard \
            error: a bar redrawn ten times a second on a terminal, a line a second otherwise.

            Exit status: 0 when the recording was made (also when stopped early by a signal); 1 \
            when the device or the file could not be opened, or the recording ended early because \
            the device went away or the file could not be written (what was captured until then \
            is kept, finished and playable); 64 for a usage error.
            """)

    @Argument(help: "The file to write (replaced if it exists).")
    var file: String

    @Option(help: "The ALSA capture PCM (default: 'default').")
    var device = "default"

    @Option(help: "Stop after this many seconds of audio.")
    var duration: Double?

    @Option(help: "wav, flac or m4a (AAC); default: the file's extension, else wav.")
    var format: String?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Samples per second.", valueName: "HZ"))
    var sampleRate = 48_000

    @Option(help: ArgumentHelp("Channels to record.", valueName: "N"))
    var channels = 2

    @Option(name: .customLong("bit-depth"), help: "Bits per sample: 16 or 24.")
    var bitDepth = 16

    @Option(help: "Encoding quality: min, low, medium, high or max (AAC's bit rate, FLAC's compression effort).")
    var quality = "medium"

    @Flag(help: "Show each channel's level while recording.")
    var meter = false

    var fileFormat: AudioFileFormat { format.flatMap(AudioFileFormat.init(rawValue:)) ?? AudioFileFormat(pathExtensionOf: file) ?? .wav }

    var settings: AudioRecorder.Settings {
        AudioRecorder.Settings(format: fileFormat, sampleRate: sampleRate, channelCount: channels, bitDepth: bitDepth,
                               quality: AudioQuality.allCases.first { $0.description == quality } ?? .medium)
    }

    func validate() throws {
        if let format, AudioFileFormat(rawValue: format) == nil { throw ValidationError("--format must be wav, flac or m4a, not '\(format)'") }
        if let duration, !(duration > 0 && duration <= 86_400 * 7) { throw ValidationError("--duration must be a positive number of seconds (at most a week)") }
        if !AudioQuality.allCases.contains(where: { $0.description == quality }) {
            throw ValidationError("--quality must be min, low, medium, high or max, not '\(quality)'")
        }
        guard !device.isEmpty else { throw ValidationError("--device needs an ALSA capture PCM name (e.g. default, hw:1,0, plughw:CARD=Mic,DEV=0)") }
        do throws(AudioCaptureError) { try settings.validate() } catch { throw ValidationError(error.description.replacingPrefix("cannot record: ", with: "")) }
    }

    /// How the recording ended.
    private enum Ending: Sendable {
        case finished(successfully: Bool)
        case signal
    }

    func run() async throws {
        LoggingSystem.bootstrap { label in
            var handler = JournalLogHandler.standard(label: label)
            handler.logLevel = .warning
            return handler
        }
        let recorder: AudioRecorder
        do {
            recorder = try AudioRecorder(path: file, settings: settings, configuration: AudioCaptureConfiguration(deviceName: device))
            recorder.isMeteringEnabled = meter
            let events = recorder.events
            if let duration {
                try recorder.record(forDuration: MediaTime(seconds: duration, preferredTimescale: Int32(sampleRate)))
            } else {
                try recorder.record()
            }
            let ending = await Self.waitForEnd(of: recorder, events: events, meter: meter)
            if case .signal = ending { recorder.stop() }
            if meter { LevelBar.finishLine() }
            let format = recorder.deviceFormat.map { "\($0.sampleRate) Hz, \($0.channelCount) ch" } ?? ""
            let seconds = MediaTime.format(seconds: recorder.currentTime.seconds, decimals: 3)
            if case .finished(successfully: false) = ending {
                printError("vitrine record: \(file): the recording ended early; \(seconds) s kept")
                throw ExitCode(1)
            }
            printError("vitrine record: \(file): \(seconds) s, \(fileFormat), \(format), \(bitDepth)-bit")
        } catch let error as AudioCaptureError {
            printError("vitrine record: \(error)")
            throw ExitCode(1)
        }
    }

    /// Waits for the recording to finish by itself, or for SIGINT/SIGTERM, reporting the recorder's
    /// problems and, with `meter`, drawing the levels meanwhile.
    private static func waitForEnd(of recorder: AudioRecorder, events: AsyncStream<AudioRecorderEvent>, meter: Bool) async -> Ending {
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        return await withTaskGroup(of: Ending?.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case .finished(let successfully): return .finished(successfully: successfully)
                    case .routeChange, .encodeError:
                        if meter { LevelBar.finishLine() }
                        printError("vitrine record: \(event)")
                    case .interruption: break
                    }
                }
                return nil
            }
            group.addTask {
                for await _ in signals { return .signal }
                return nil
            }
            if meter {
                group.addTask {
                    var bar = LevelBar(isTerminal: isatty(2) != 0)
                    while !Task.isCancelled {
                        recorder.updateMeters()
                        let channels = recorder.deviceFormat?.channelCount ?? 1
                        bar.draw(elapsed: recorder.currentTime.seconds,
                                 levels: (0..<channels).map { (recorder.averagePower(forChannel: $0), recorder.peakPower(forChannel: $0)) })
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    return nil
                }
            }
            var ending: Ending?
            while ending == nil, let next = await group.next() { ending = next }
            group.cancelAll()
            return ending ?? .finished(successfully: false)
        }
    }
}

/// `--meter`'s display: per channel a bar from −60 to 0 dBFS (`#` the average, `|` the peak) and
/// the average in numbers; on a terminal one line redrawn in place, otherwise a line a second.
struct LevelBar {
    let isTerminal: Bool
    private var lastLineSecond = -1
    static let width = 30

    init(isTerminal: Bool) { self.isTerminal = isTerminal }

    /// The line for `levels` (average, peak in dBFS per channel) at `elapsed` seconds.
    static func line(elapsed: Double, levels: [(average: Float, peak: Float)]) -> String {
        let names = levels.count == 2 ? ["L", "R"] : levels.indices.map { "\($0 + 1)" }
        var text = MediaTime.format(seconds: elapsed, decimals: 1) + " s"
        for (index, level) in levels.enumerated() {
            let filled = cells(level.average), peak = cells(level.peak)
            var bar = (0..<width).map { $0 < filled ? "#" : "-" }
            if peak > 0 { bar[min(width, peak) - 1] = "|" }
            let value = level.average <= -160 ? "  -inf" : MediaTime.format(seconds: Double(level.average), decimals: 1).leftPadded(to: 6)
            text += "  \(names[index]) [\(bar.joined())] \(value) dBFS"
        }
        return text
    }

    /// Cells of the bar lit by `level` dBFS.
    static func cells(_ level: Float) -> Int { Int(((min(0, max(-60, level)) + 60) / 60 * Float(width)).rounded()) }

    mutating func draw(elapsed: Double, levels: [(average: Float, peak: Float)]) {
        let text = Self.line(elapsed: elapsed, levels: levels)
        if isTerminal {
            Self.write("\r\(text)\u{1B}[K")
        } else if Int(elapsed) != lastLineSecond {
            lastLineSecond = Int(elapsed)
            Self.write(text + "\n")
        }
    }

    /// Ends a line being redrawn, so what follows starts on its own line.
    static func finishLine() {
        if isatty(2) != 0 { write("\n") }
    }

    private static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

extension String {
    fileprivate func replacingPrefix(_ prefix: String, with replacement: String) -> String {
        hasPrefix(prefix) ? replacement + dropFirst(prefix.count) : self
    }

    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}
