import ArgumentParser
import Bundles
import Config
import Scheduling
import ShowRunner

/// `vitrine import MOUNTPOINT`: what the system runs when a USB stick appears (systemd/): the
/// stick's `vitrine/` bundle is verified, copied, validated and made current atomically, or
/// refused with its reasons while the old schedule keeps playing. `--rollback` goes back to the
/// previous bundle. See docs/bundles.md.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import the signed schedule bundle of a mounted USB stick (or go back to the previous one).",
        discussion: """
            Reads MOUNTPOINT/vitrine/: checks MANIFEST.minisig against the trusted keys, copies every file \
            while checking its size and SHA-256, validates the schedule with its media, then switches the \
            `current` link in the import directory in one atomic step; the player changes programme at its \
            next item boundary. Imports run one at a time. Exit status: 0 imported (or no vitrine/ folder: \
            nothing to do), 1 refused (each reason printed as FILE[:LINE]: reason), 2 the configuration is unreadable.
            """)

    @Argument(help: "Where the stick is mounted.")
    var mountPoint: String?

    @Flag(help: "Make the previous bundle current again.")
    var rollback = false

    @Option(name: .customLong("config"), help: ArgumentHelp("The player's configuration ([import] table).", valueName: "FILE"))
    var configFile: String?

    @Option(name: .customLong("directory"), help: ArgumentHelp("The import directory (default: the configuration's, else \(Configuration.Bundles.defaultDirectory)).", valueName: "DIR"))
    var directory: String?

    @Option(name: .customLong("keys"), help: ArgumentHelp("The trusted keys folder (default: the configuration's, else \(Configuration.Bundles.defaultTrustedKeys)).", valueName: "DIR"))
    var keyDirectory: String?

    func validate() throws {
        if rollback == (mountPoint != nil) { throw ValidationError("give a mount point, or --rollback") }
    }

    func run() async throws {
        var settings = Configuration.Bundles()
        if let configFile {
            let result = ConfigurationReader.read(path: configFile)
            for diagnostic in result.diagnostics { printError(diagnostic.description) }
            guard let configuration = result.configuration else { throw ExitCode(result.isUnreadable ? 2 : 1) }
            settings = configuration.bundles
        }
        let store = BundleStore(directory: directory ?? settings.directory)
        let (keys, keyProblems) = TrustedKeys.load(directory: keyDirectory ?? settings.trustedKeys)
        for problem in keyProblems { printError("vitrine import: warning: \(problem)") }
        let importer = BundleImporter(
            settings: .init(store: store, keys: keys, acceptUnsigned: settings.acceptUnsigned, keepFree: Int64(settings.keepFreeMegabytes) << 20)
        ) { schedule in
            let report = ScheduleValidator.validate(path: schedule, inspector: await ScheduleLoader.inspector(forSchedule: schedule, opening: .everything))
            if report.isUnreadable { return ["\(schedule): cannot read the schedule"] }
            return report.diagnostics.filter { $0.severity == .error }.map(\.description)
        }
        if rollback {
            do {
                let id = try importer.rollback()
                print("vitrine import: bundle \(id) is current again")
            } catch {
                printError("vitrine import: \(error)")
                throw ExitCode(1)
            }
            return
        }
        switch await importer.importBundle(from: mountPoint ?? "") {
        case .imported(let id, let schedule, let signature):
            print("vitrine import: bundle \(id) imported (\(signature.keyID.map { "signed by key \($0)" } ?? "unsigned")); the player now plays \(schedule)")
        case .ignored(let reason):
            print("vitrine import: \(reason)")
        case .refused(let problems):
            for problem in problems { printError(problem.description) }
            printError("vitrine import: \(mountPoint ?? "")/vitrine refused; the current schedule keeps playing")
            throw ExitCode(1)
        }
    }
}
