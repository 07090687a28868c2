#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
