import ArgumentParser
import FoundationEssentials
import MediaAsset
import MediaTime

/// `vitrine thumbnails FILE (--count N | --times T1,T2,...) [--exact] [--max-width W] --out DIR`.
struct ThumbnailsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbnails",
        abstract: "Write PNG images of a video at chosen times.",
        discussion: """
            Each image is named by the time of the frame it shows, in seconds with six decimals
            and six integer digits: DIR/000002.000000.png. Without --exact the image is the
            keyframe at or before each time (fast); with --exact it is the first frame whose
            presentation time is at or after each time, decoded exactly: the frame
            `ffmpeg -ss T -i FILE -frames:v 1` gives. --count N picks the middles of N equal parts of the duration.
            Written paths are printed on stdout, one per line.

            Exit status: 0 when every image was written; 1 when the input cannot be opened or
            decoded or any time failed (one line per failure on stderr); 64 for a usage error.
            """)

    @Argument(help: "A video file path or URL.")
    var input: String

    @Option(help: "How many images, spread evenly over the duration.")
    var count: Int?

    @Option(help: ArgumentHelp("Comma-separated times: seconds (12.5) or [hh:]mm:ss[.frac].", valueName: "t1,t2,..."))
    var times: String?

    @Flag(help: "Use the first frame at or after each time (as ffmpeg -ss picks it) instead of the keyframe before it.")
    var exact = false

    @Option(help: "Largest width in pixels (the height follows the aspect ratio).")
    var maxWidth: Int?

    @Option(help: "Largest height in pixels (the width follows the aspect ratio).")
    var maxHeight: Int?

    @Option(help: "The directory to write the PNGs into (created if missing).")
    var out: String

    func validate() throws {
        if (count == nil) == (times == nil) { throw ValidationError("Give exactly one of --count and --times.") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
        if let maxWidth, maxWidth < 1 { throw ValidationError("--max-width must be at least 1.") }
        if let maxHeight, maxHeight < 1 { throw ValidationError("--max-height must be at least 1.") }
        if let times {
            for text in times.split(separator: ",", omittingEmptySubsequences: false) where Self.parseTime(String(text)) == nil {
                throw ValidationError("\"\(text)\" is not a time (use seconds like 12.5 or [hh:]mm:ss.frac).")
            }
        }
    }

    func run() async throws {
        let asset = Asset(pathOrURL: input)
        var requested: [MediaTime]
        if let times {
            requested = times.split(separator: ",").compactMap { Self.parseTime(String($0)) }
        } else {
            let duration: MediaTime
            do {
                duration = try await asset.load(.duration)
            } catch {
                printError("vitrine: \(error)")
                throw ExitCode.failure
            }
            guard duration.isNumeric, duration > .zero else {
                printError("vitrine: \(asset.source): cannot spread \(count!) images: the duration is unknown")
                throw ExitCode.failure
            }
            let parts = Int32(clamping: count! * 2)
            requested = (0..<count!).map { index in
                duration.convertScale(1_000_000).multiplied(byRatio: Int32(clamping: index * 2 + 1), over: parts)
            }
        }
        do {
            try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        } catch {
            printError("vitrine: \(out): cannot create the output directory: \(fileProblem(error))")
            throw ExitCode.failure
        }
        let generator = AssetImageGenerator(asset: asset)
        if exact {
            // Nothing before the time, anything after it: the first frame at or after the time,
            // which is what `ffmpeg -ss T` decodes. (Zero tolerance on both sides would give the
            // frame whose interval contains the time: the same frame whenever T is a frame start.)
            generator.requestedTimeToleranceBefore = .zero
            generator.requestedTimeToleranceAfter = .positiveInfinity
        }
        generator.maximumSize = PixelSize(width: maxWidth ?? 0, height: maxHeight ?? 0)
        var failures = 0
        for await result in generator.images(at: requested) {
            switch result.outcome {
            case .succeeded(let image, let actualTime):
                let path = out + "/" + Self.fileName(for: actualTime)
                do {
                    let png = try image.pngData()
                    try Data(png).write(to: URL(filePath: path))
                    print(path)
                } catch {
                    printError("vitrine: \(path): cannot write the image: \(fileProblem(error))")
                    failures += 1
                }
            case .failed(let error):
                printError("vitrine: \(error)")
                failures += 1
            case .cancelled:
                printError("vitrine: \(asset.source): the image at \(result.requestedTime.seconds) s was cancelled")
                failures += 1
            }
        }
        if failures > 0 { throw ExitCode.failure }
    }

    /// `000002.000000.png` for 2 s: six integer digits, six decimals (microseconds).
    static func fileName(for time: MediaTime) -> String {
        let microseconds = time.convertScale(1_000_000, method: .roundHalfAwayFromZero).value
        let whole = String(microseconds / 1_000_000)
        let fraction = String(microseconds % 1_000_000)
        return String(repeating: "0", count: max(0, 6 - whole.count)) + whole + "."
            + String(repeating: "0", count: max(0, 6 - fraction.count)) + fraction + ".png"
    }

    /// Parses "12.5", "1:02.5" or "01:01:02.5" into an exact time in microseconds.
    static func parseTime(_ text: String) -> MediaTime? {
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...3).contains(fields.count) else { return nil }
        var microseconds: Int64 = 0
        for (position, field) in fields.enumerated() {
            let isLast = position == fields.count - 1
            let parts = field.split(separator: ".", omittingEmptySubsequences: false)
            guard !field.isEmpty, parts.count <= (isLast ? 2 : 1),
                  let whole = Int64(parts[0]), whole >= 0, whole < 1_000_000_000 else { return nil }
            microseconds = microseconds * 60 + whole * 1_000_000
            if position > 0 { guard whole < 60 else { return nil } }
            if parts.count == 2 {
                let digits = parts[1]
                guard !digits.isEmpty, digits.count <= 6, digits.allSatisfy(\.isNumber), let value = Int64(digits) else { return nil }
                var scaled = value
                for _ in digits.count..<6 { scaled *= 10 }
                microseconds += scaled
            }
        }
        return MediaTime(value: microseconds, timescale: 1_000_000)
    }
}
