import CSodium

/// The few libsodium primitives minisign signatures need: BLAKE2b-512 for the prehashed form,
/// Ed25519 verification, Base64. Every call into libsodium is in this file. (Manifests' SHA-256
/// is ``SHA256Hasher``'s, from swift-crypto, several times faster on CPUs with SHA instructions.)
enum Sodium {
    /// libsodium must be initialised once before use; `sodium_init` is safe to call again.
    private static let ready: Bool = sodium_init() >= 0

    static func ensureReady() {
        precondition(ready, "libsodium could not be initialised")
    }

    /// Decodes standard Base64 (with padding); `nil` when it is not Base64.
    static func base64Decode(_ text: Substring) -> [UInt8]? {
        ensureReady()
        let characters = Array(text.utf8)
        var output = [UInt8](repeating: 0, count: characters.count * 3 / 4 + 3)
        var length = 0
        let status = characters.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { buffer in
                input.withMemoryRebound(to: CChar.self) { chars in
                    sodium_base642bin(buffer.baseAddress!, buffer.count, chars.baseAddress, chars.count, nil, &length, nil,
                                      vitrine_sodium_base64_original())
                }
            }
        }
        guard status == 0 else { return nil }
        return Array(output.prefix(length))
    }

    /// Whether `signature` (64 bytes) is `publicKey`'s (32 bytes) Ed25519 signature of `message`.
    static func verifyEd25519(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        ensureReady()
        guard signature.count == Int(crypto_sign_BYTES), publicKey.count == Int(crypto_sign_PUBLICKEYBYTES) else { return false }
        return crypto_sign_verify_detached(signature, message, UInt64(message.count), publicKey) == 0
    }
}

/// BLAKE2b with a 64-byte digest (minisign's prehash), fed piece by piece. Its state must be
/// 64-byte aligned, which Swift cannot express for the imported type: it lives in its own allocation.
struct BLAKE2bHasher: ~Copyable {
    private let state: UnsafeMutableRawPointer

    init() {
        Sodium.ensureReady()
        state = UnsafeMutableRawPointer.allocate(byteCount: crypto_generichash_statebytes(), alignment: 64)
        crypto_generichash_init(OpaquePointer(state), nil, 0, 64)
    }

    deinit { state.deallocate() }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        crypto_generichash_update(OpaquePointer(state), base.assumingMemoryBound(to: UInt8.self), UInt64(bytes.count))
    }

    consuming func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_generichash_final(OpaquePointer(state), &digest, 64)
        return digest
    }
}

extension Array where Element == UInt8 {
    /// Lower-case hexadecimal.
    var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
