import Crypto

/// SHA-256 fed piece by piece (swift-crypto: BoringSSL's implementation, which uses the CPU's
/// SHA extensions where there are some — the import copies at the speed of the disk, not of the hash).
struct SHA256Hasher: ~Copyable {
    private var hash = SHA256()

    init() {}

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        hash.update(bufferPointer: bytes)
    }

    consuming func finish() -> [UInt8] { Array(hash.finalize()) }
}
