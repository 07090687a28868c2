/// A minisign public key (the `.pub` file `minisign -G` writes, or its Base64 line).
///
/// Format: an optional `untrusted comment:` line, then Base64 of 42 bytes: the algorithm `Ed`,
/// the 8-byte key ID, the 32-byte Ed25519 public key.
public struct MinisignPublicKey: Sendable, Hashable {
    /// The key ID as minisign prints it (upper-case hex without leading zeros: up to 16 digits).
    public let keyID: String
    let id: [UInt8]
    let key: [UInt8]
    /// Where the key came from, for messages.
    public let origin: String

    /// Reads a key from the text of a `.pub` file; `origin` names it in errors.
    public init(text: String, origin: String) throws(BundleProblem) {
        guard let line = text.split(whereSeparator: \.isNewline).first(where: {
            !$0.hasPrefix("untrusted comment:") && !$0.allSatisfy(\.isWhitespace)
        }) else {
            throw BundleProblem(origin, "not a minisign public key: no key line")
        }
        guard let bytes = Sodium.base64Decode(line.drop { $0 == " " }.prefix { $0 != " " && $0 != "\r" }), bytes.count == 42 else {
            throw BundleProblem(origin, "not a minisign public key: the key line is not Base64 of 42 bytes")
        }
        guard bytes[0] == UInt8(ascii: "E"), bytes[1] == UInt8(ascii: "d") else {
            throw BundleProblem(origin, "not a minisign public key: unknown algorithm \"\(String(decoding: bytes[0..<2], as: UTF8.self))\"")
        }
        id = Array(bytes[2..<10])
        key = Array(bytes[10..<42])
        keyID = Minisign.display(id)
        self.origin = origin
    }
}

/// A minisign signature (the `.minisig` file `minisign -S` writes).
///
/// Four lines: `untrusted comment: …`; Base64 of 74 bytes (the algorithm — `ED`, Ed25519 over the
/// BLAKE2b-512 of the file, minisign's default, or `Ed`, over the file itself, the legacy form —,
/// the signing key's ID, the 64-byte signature); `trusted comment: …`; Base64 of the 64-byte
/// global signature over the signature and the trusted comment, which authenticates the comment.
public struct MinisignSignature: Sendable, Hashable {
    public let keyID: String
    /// The signed trusted comment (minisign puts the time and the file name there).
    public let trustedComment: String
    let id: [UInt8]
    let prehashed: Bool
    let signature: [UInt8]
    let globalSignature: [UInt8]
    let origin: String

    public init(text: String, origin: String) throws(BundleProblem) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
        guard lines.count >= 4 else { throw BundleProblem(origin, "not a minisign signature: expected 4 lines, found \(lines.count)") }
        guard lines[0].hasPrefix("untrusted comment:") else {
            throw BundleProblem(origin, line: 1, "not a minisign signature: expected \"untrusted comment:\"")
        }
        guard let bytes = Sodium.base64Decode(lines[1]), bytes.count == 74 else {
            throw BundleProblem(origin, line: 2, "not a minisign signature: the signature line is not Base64 of 74 bytes")
        }
        switch (bytes[0], bytes[1]) {
        case (UInt8(ascii: "E"), UInt8(ascii: "D")): prehashed = true
        case (UInt8(ascii: "E"), UInt8(ascii: "d")): prehashed = false
        default:
            throw BundleProblem(origin, line: 2, "unknown signature algorithm \"\(String(decoding: bytes[0..<2], as: UTF8.self))\"")
        }
        id = Array(bytes[2..<10])
        signature = Array(bytes[10..<74])
        let prefix = "trusted comment: "
        guard lines[2].hasPrefix(prefix) else {
            throw BundleProblem(origin, line: 3, "not a minisign signature: expected \"trusted comment:\"")
        }
        trustedComment = String(lines[2].dropFirst(prefix.count))
        guard let global = Sodium.base64Decode(lines[3]), global.count == 64 else {
            throw BundleProblem(origin, line: 4, "not a minisign signature: the global signature is not Base64 of 64 bytes")
        }
        globalSignature = global
        keyID = Minisign.display(id)
        self.origin = origin
    }

    /// Checks that `key` signed `message` with this signature, trusted comment included.
    public func verify(_ message: [UInt8], with key: MinisignPublicKey, messageName: String) throws(BundleProblem) {
        guard key.id == id else {
            throw BundleProblem(origin, "signed by key \(keyID), not by \(key.keyID) (\(key.origin))")
        }
        let signed: [UInt8]
        if prehashed {
            var hasher = BLAKE2bHasher()
            message.withUnsafeBytes { hasher.update($0) }
            signed = hasher.finish()
        } else {
            signed = message
        }
        guard Sodium.verifyEd25519(signature: signature, message: signed, publicKey: key.key) else {
            throw BundleProblem(origin, "the signature does not match \(messageName): it was changed after signing, or signed with another key")
        }
        guard Sodium.verifyEd25519(signature: globalSignature, message: signature + Array(trustedComment.utf8), publicKey: key.key) else {
            throw BundleProblem(origin, line: 3, "the trusted comment was changed after signing")
        }
    }
}

enum Minisign {
    /// Key IDs are little-endian 64-bit numbers; minisign prints them as such (`%PRIX64`): upper-case
    /// hex, most significant digit first, without leading zeros — an ID whose top digit is 0 has 15
    /// digits in minisign's comments and messages, and must have them here too, so that an operator
    /// can match the key a refusal names with the `.pub` file's comment.
    static func display(_ id: [UInt8]) -> String {
        let value = id.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return String(value, radix: 16, uppercase: true)
    }
}
