import Bundles
import ChildProcesses
import Foundation

/// A minisign key pair made with the real `minisign`, and bundle folders signed with it.
final class BundleFixture {
    let root: String
    let keys: String
    private let secretKey: String

    static var minisignInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/minisign") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-bundle-\(UUID().uuidString)").path
        keys = root + "/keys"
        secretKey = root + "/operator.key"
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        let made = try ChildProcess.run("minisign", ["-G", "-W", "-p", keys + "/operator.pub", "-s", secretKey])
        guard made.status == 0 else { throw FixtureError(message: "minisign -G: \(made.stderr)") }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// The trusted key.
    var publicKey: MinisignPublicKey { get throws { try TrustedKeys.load(file: keys + "/operator.pub") } }

    /// A stick at `ROOT/name` holding `vitrine/` with a schedule and `files` (path → contents),
    /// its manifest written; signed unless `signed` is false (`legacy`: minisign's non-prehashed form).
    @discardableResult
    func stick(_ name: String, files: [String: [UInt8]] = ["media/a.bin": Array("hello".utf8)], signed: Bool = true,
               legacy: Bool = false) throws -> String {
        let stick = root + "/" + name
        let bundle = stick + "/vitrine"
        var all = files
        if all["schedule.toml"] == nil && all["schedule.json"] == nil { all["schedule.toml"] = Array("version = 1\n".utf8) }
        for (path, bytes) in all {
            let url = URL(fileURLWithPath: bundle + "/" + path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
        }
        _ = try BundleWriter.createManifest(in: bundle)
        if signed { try sign(bundle, legacy: legacy) }
        return stick
    }

    /// Signs `bundle/MANIFEST` with minisign.
    func sign(_ bundle: String, legacy: Bool = false) throws {
        let signed = try ChildProcess.run("minisign", ["-S"] + (legacy ? ["-l"] : []) + ["-s", secretKey, "-m", bundle + "/MANIFEST"])
        guard signed.status == 0 else { throw FixtureError(message: "minisign -S: \(signed.stderr)") }
    }

    /// An importer into `ROOT/data` trusting the fixture's key; `validate` stands in for the
    /// schedule validator (the command-line tests use the real one).
    func importer(keepFree: Int64 = 0, acceptUnsigned: Bool = false,
                  validate: @escaping @Sendable (String) async -> [String] = { _ in [] }) throws -> BundleImporter {
        BundleImporter(settings: .init(store: store, keys: [try publicKey], acceptUnsigned: acceptUnsigned, keepFree: keepFree),
                       validate: validate)
    }

    var store: BundleStore { BundleStore(directory: root + "/data") }
}

extension BundleImporter.Outcome {
    var problems: [BundleProblem] { if case .refused(let problems) = self { problems } else { [] } }
    var importedID: String? { if case .imported(let id, _, _) = self { id } else { nil } }
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
