import ArgumentParser

/// `vitrine bench` as the display branch knows it: only `composite`.
///
/// When the engine's `BenchCommand` (decode) is merged, add `BenchCompositeCommand.self` to its
/// subcommands and delete this file.
struct DisplayBenchGroup: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure Vitrine's parts.",
        subcommands: [BenchCompositeCommand.self])
}
