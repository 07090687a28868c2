import ArgumentParser
import MediaTime
import Playback
#if canImport(Glibc)
import Glibc
#endif

/// `vitrine bench`: measures the engine alone, for the scripts in Benchmarks/.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Vitrine's parts, for the scripts in Benchmarks/.",
        subcommands: [Decode.self, BenchCompositeCommand.self])

    /// `vitrine bench decode FILE`: decodes every frame through the playback pipeline, as fast as
    /// it goes, and prints the counts and the time taken.
    struct Decode: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Decode a file through the playback pipeline as fast as possible.")

        @Argument(help: "The file to decode.")
        var file: String

        @Option(help: "Video decoding threads (0 = automatic).")
        var threads: Int = 0

        func run() async throws {
            let start = MonotonicClock().now()
            let result: DecodeBenchmark.Result
            do {
                result = try DecodeBenchmark.run(source: file, videoThreads: threads)
            } catch {
                printError("vitrine bench decode: \(error.description)")
                throw ExitCode(1)
            }
            let elapsed = (MonotonicClock().now() - start).seconds
            let fps = elapsed > 0 ? Double(result.videoFrames) / elapsed : 0
            print("video_frames=\(result.videoFrames) audio_samples=\(result.audioFrames) seconds=\(MediaTime.format(seconds: elapsed, decimals: 3)) fps=\(MediaTime.format(seconds: fps, decimals: 1))")
        }
    }
}
