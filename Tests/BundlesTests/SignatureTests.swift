import Bundles
import Foundation
import Testing

@Suite("minisign signatures", .enabled(if: BundleFixture.minisignInstalled, "needs minisign (scripts/setup.sh installs it)"))
struct SignatureTests {
    @Test("a bundle signed by minisign -S verifies, prehashed (the default) and legacy (-l)", arguments: [false, true])
    func verifies(legacy: Bool) throws {
        let fixture = try BundleFixture()
        let stick = try fixture.stick("stick", legacy: legacy)
        let reader = try BundleReader(path: stick + "/vitrine")
        let (manifest, signature, problems) = reader.verify(keys: [try fixture.publicKey], acceptUnsigned: false)
        #expect(problems.isEmpty, "\(problems)")
        #expect(manifest?.entries.map(\.path) == ["media/a.bin", "schedule.toml"])
        let keyID = try fixture.publicKey.keyID
        #expect(signature?.keyID == keyID)
        #expect(signature?.trustedComment?.contains("file:MANIFEST") == true)
    }

    @Test("the key ID is the one minisign prints in the key's comment")
    func keyID() throws {
        let fixture = try BundleFixture()
        let text = try String(contentsOfFile: fixture.keys + "/operator.pub", encoding: .utf8)
        let keyID = try fixture.publicKey.keyID
        #expect(text.hasPrefix("untrusted comment: minisign public key \(keyID)"))
    }

    /// minisign prints key IDs with `%PRIX64`: a key whose ID starts with a 0 digit (one key in
    /// sixteen) has 15 digits in its comment, and a refusal must name it the same way.
    @Test("a key ID with leading zero digits is printed without them, as minisign does", arguments: [
        ("RWSX5qv0OcVXCwABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f", "B57C539F4ABE697"),
        ("RWSXAAAAAAAAAAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f", "97"),
    ])
    func keyIDWithoutLeadingZeros(line: String, printed: String) throws {
        let key = try MinisignPublicKey(text: "untrusted comment: minisign public key \(printed)\n\(line)\n", origin: "operator.pub")
        #expect(key.keyID == printed)
    }

    @Test("a manifest edited after signing, an unknown key, a changed trusted comment, garbage and a missing signature are refused")
    func refusals() throws {
        let fixture = try BundleFixture()
        let other = try BundleFixture()
        let keys = [try fixture.publicKey]

        func problems(_ stick: String, accept: Bool = false) throws -> [String] {
            try BundleReader(path: stick + "/vitrine").manifest(keys: keys, acceptUnsigned: accept).problems.map(\.description)
        }

        let edited = try fixture.stick("edited")
        let manifest = edited + "/vitrine/MANIFEST"
        try (String(contentsOfFile: manifest, encoding: .utf8).replacingOccurrences(of: " 5 ", with: " 6 ")).write(toFile: manifest, atomically: true, encoding: .utf8)
        #expect(try problems(edited).contains { $0.contains("MANIFEST.minisig: the signature does not match MANIFEST") })

        let stranger = try other.stick("stranger")
        let strangerProblems = try problems(stranger)
        let strangerID = try other.publicKey.keyID
        #expect(strangerProblems.contains { $0.contains("signed by key \(strangerID), which is not a trusted key") }, "\(strangerProblems)")

        let comment = try fixture.stick("comment")
        let signature = comment + "/vitrine/MANIFEST.minisig"
        let lines = try String(contentsOfFile: signature, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var changed = lines.map(String.init)
        changed[2] = "trusted comment: timestamp:0 file:OTHER"
        try changed.joined(separator: "\n").write(toFile: signature, atomically: true, encoding: .utf8)
        #expect(try problems(comment).contains { $0.contains("MANIFEST.minisig:3: the trusted comment was changed after signing") })

        let garbage = try fixture.stick("garbage")
        try "untrusted comment: x\nnot base64 at all!\n".write(toFile: garbage + "/vitrine/MANIFEST.minisig", atomically: true, encoding: .utf8)
        #expect(try problems(garbage).contains { $0.contains("MANIFEST.minisig") })

        let unsigned = try fixture.stick("unsigned", signed: false)
        #expect(try problems(unsigned).contains { $0.contains("missing: the bundle is not signed") })
        #expect(try problems(unsigned, accept: true).isEmpty)
        // accept_unsigned never lets a bad signature through.
        #expect(!(try problems(edited, accept: true)).isEmpty)
    }
}
