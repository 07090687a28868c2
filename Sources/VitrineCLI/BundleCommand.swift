import ArgumentParser
import Bundles
import Scheduling
import ShowRunner

/// `vitrine bundle create DIR` and `vitrine bundle verify DIR`: make and check the bundles
/// operators carry to a screen on a USB stick (docs/bundles.md).
struct BundleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bundle",
        abstract: "Create or check a schedule bundle for a USB stick.",
        subcommands: [Create.self, Verify.self])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create",
            abstract: "Write DIR/MANIFEST (SHA-256, size and path of every file); then sign it with minisign -Sm DIR/MANIFEST.",
            discussion: "DIR holds schedule.toml (or .json) and its media. Links, devices and FIFOs are refused. Exit status: 0 written, 1 refused.")

        @Argument(help: "The bundle folder (the stick's vitrine/ folder, or where it is prepared).")
        var directory: String

        func run() async throws {
            var lastPercent = -1
            do {
                let manifest = try BundleWriter.createManifest(in: directory) { done, total in
                    // Progress for large media, on standard error, at most once per percent.
                    let percent = total > 0 ? Int(done * 100 / total) : 100
                    if percent != lastPercent && total > 64 << 20 {
                        lastPercent = percent
                        printError("hashing: \(percent) % (\(done >> 20) of \(total >> 20) MB)")
                    }
                }
                print("\(directory)/\(BundleManifest.fileName): \(manifest.entries.count) files, \(manifest.totalSize) bytes")
                print("sign it: minisign -Sm \(directory)/\(BundleManifest.fileName)")
            } catch {
                printError("vitrine bundle create: \(error)")
                throw ExitCode(1)
            }
        }
    }

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify",
            abstract: "Check a bundle as the importer does: signature, manifest, every file's size and SHA-256, nothing extra, the schedule.",
            discussion: "Prints each finding as FILE[:LINE]: reason. Exit status: 0 the bundle would be imported, 1 it would be refused.")

        @Argument(help: "The bundle folder.")
        var directory: String

        @Option(name: .customLong("key"), help: ArgumentHelp("A trusted minisign public key (repeatable).", valueName: "FILE"))
        var keys: [String] = []

        @Option(name: .customLong("keys"), help: ArgumentHelp("A folder of trusted keys (*.pub).", valueName: "DIR"))
        var keyDirectory: String?

        @Flag(name: .customLong("accept-unsigned"), help: "Accept a bundle without MANIFEST.minisig (a bad signature is still refused).")
        var acceptUnsigned = false

        func run() async throws {
            var trusted: [MinisignPublicKey] = []
            var problems: [BundleProblem] = []
            for file in keys {
                do { trusted.append(try TrustedKeys.load(file: file)) } catch { problems.append(error) }
            }
            if let keyDirectory {
                let loaded = TrustedKeys.load(directory: keyDirectory)
                trusted += loaded.keys
                problems += loaded.problems
            }
            if keys.isEmpty && keyDirectory == nil && !acceptUnsigned {
                problems.append(BundleProblem(directory, "no trusted key given (--key FILE or --keys DIR)"))
            }
            do {
                let reader = try BundleReader(path: directory)
                let (manifest, signature, found) = reader.verify(keys: trusted, acceptUnsigned: acceptUnsigned)
                problems += found
                if let manifest, let schedule = manifest.schedulePath, found.isEmpty {
                    let path = directory + "/" + schedule
                    let report = ScheduleValidator.validate(path: path, inspector: await ScheduleLoader.inspector(forSchedule: path, opening: .everything))
                    // The validator's lines already name the file, line and column.
                    for diagnostic in report.diagnostics { print(diagnostic.description) }
                    if problems.isEmpty && report.errorCount == 0 && !report.isUnreadable {
                        let who = signature?.keyID.map { "signed by key \($0)" } ?? "unsigned (accepted)"
                        print("\(directory): valid: \(manifest.entries.count) files, \(manifest.totalSize) bytes, \(who)")
                        return
                    }
                }
            } catch {
                problems.append(error)
            }
            for problem in problems { print(problem.description) }
            print("\(directory): refused")
            throw ExitCode(1)
        }
    }
}
