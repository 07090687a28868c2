#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `vitrine bundle create`: lists every file of a bundle folder with its size and SHA-256 in
/// `MANIFEST`, ready for `minisign -Sm MANIFEST`.
public enum BundleWriter {
    /// Hashes every file below `path` and writes its `MANIFEST` (atomically). `progress` gets the
    /// bytes hashed so far and the total. Fails on anything a bundle must not hold.
    public static func createManifest(in path: String, progress: (Int64, Int64) -> Void = { _, _ in }) throws(BundleProblem) -> BundleManifest {
        let reader = try BundleReader(path: path)
        let (files, problems) = reader.folder.walk()
        if let first = problems.first { throw first }
        var entries: [BundleManifest.Entry] = []
        let total = files.filter { $0.key != BundleManifest.fileName && $0.key != BundleManifest.signatureName }.values.reduce(0, +)
        var done: Int64 = 0
        progress(0, total)
        for (relative, size) in files.sorted(by: { $0.key < $1.key }) {
            if relative == BundleManifest.fileName || relative == BundleManifest.signatureName { continue }
            if let reason = BundleManifest.pathProblem(relative) { throw BundleProblem(reader.folder.display(relative), reason) }
            var hasher = SHA256Hasher()
            var entry = BundleManifest.Entry(sha256: String(repeating: "0", count: 64), size: size, path: relative)
            // Read once through the same checked path the importer uses, hashing as it goes.
            let (file, _) = try reader.folder.openFile(relative)
            defer { close(file) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: BundleReader.chunkSize, alignment: 4096)
            defer { buffer.deallocate() }
            var read: Int64 = 0
            while true {
                let count = Glibc.read(file, buffer.baseAddress, buffer.count)
                if count < 0 {
                    if errno == EINTR { continue }
                    throw BundleProblem(reader.folder.display(relative), "cannot read: \(FileSystem.message(errno))")
                }
                if count == 0 { break }
                hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                read += Int64(count)
                done += Int64(count)
                progress(done, total)
            }
            entry.size = read
            entry.sha256 = hasher.finish().hexString
            entries.append(entry)
        }
        let manifest = BundleManifest(entries: entries)
        guard manifest.schedulePath != nil else {
            throw BundleProblem(path, "holds no schedule: expected \(BundleManifest.scheduleNames.joined(separator: " or ")) at the top level")
        }
        try AtomicFile.write(Array(manifest.text.utf8), to: path + "/" + BundleManifest.fileName)
        return manifest
    }
}

/// Writes a small file so that a reader (or a power cut) sees the old contents or the new, never a mix.
enum AtomicFile {
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(BundleProblem) {
        let temporary = path + ".new"
        let file = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard file >= 0 else { throw BundleProblem(temporary, "cannot write: \(FileSystem.message(errno))") }
        var failure: Int32 = 0
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure = errno
                break
            }
            offset += count
        }
        if failure == 0 && fsync(file) != 0 { failure = errno }
        close(file)
        if failure == 0 && rename(temporary, path) != 0 { failure = errno }
        if failure != 0 {
            unlink(temporary)
            throw BundleProblem(path, "cannot write: \(FileSystem.message(failure))")
        }
    }
}
