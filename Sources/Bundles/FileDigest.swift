#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Threading

/// The SHA-256 of a file, for reports (the inspector's schedule hash).
public enum FileDigest {
    public static func sha256(path: String) throws(BundleProblem) -> String {
        let file = open(path, O_RDONLY | O_CLOEXEC)
        guard file >= 0 else { throw BundleProblem(path, "cannot read: \(FileSystem.message(errno))") }
        defer { close(file) }
        var hasher = SHA256Hasher()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BundleProblem(path, "cannot read: \(FileSystem.message(errno))")
            }
            if count == 0 { break }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
        return hasher.finish().hexString
    }
}

/// SHA-256s remembered by file identity (device, inode, size, modification time): a file is read
/// again only when it changed. Proof of play hashes each item's media as it starts and the
/// inspector's status hashes the schedule at every request; without this, a 1 GB clip looping
/// all day would be read in full at every loop.
public final class FileDigestCache: Sendable {
    private struct Identity: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
    }

    /// Path → the identity last hashed and its digest. Read and written by the callers' threads
    /// (the proof-of-play queue, the inspector's event loop); the hashing itself runs outside it.
    private let known = LockedValue<[String: (Identity, String)]>([:])

    public init() {}

    /// The file's SHA-256, read only when the file is new or changed; `nil` when it cannot be read.
    public func sha256(path: String) -> String? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        let identity = Identity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), size: Int64(status.st_size),
                                modified: Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec))
        if let (seen, digest) = known.withLock({ $0[path] }), seen == identity { return digest }
        guard let digest = try? FileDigest.sha256(path: path) else { return nil }
        known.withLock { table in
            if table.count > 4096 { table.removeAll() }
            table[path] = (identity, digest)
        }
        return digest
    }
}
