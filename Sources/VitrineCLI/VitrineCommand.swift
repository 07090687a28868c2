import ArgumentParser

/// `vitrine`: the signage player's command line.
@main
struct VitrineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vitrine",
        abstract: "A boot-to-playback digital-signage player.",
        version: "0.1.0",
        subcommands: [
            // Each subcommand lives in its own file.
            ProbeCommand.self,
            ThumbnailsCommand.self,
            PlayCommand.self,
            RecordCommand.self,
            BenchCommand.self,
            TestPatternCommand.self,
            ValidateCommand.self,
            ProgrammeCommand.self,
            BundleCommand.self,
            ImportCommand.self,
        ]
    )
}
