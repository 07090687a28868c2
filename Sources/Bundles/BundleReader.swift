#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The trusted minisign public keys: every `*.pub` file of a folder (`/etc/vitrine/trusted-keys/`).
public enum TrustedKeys {
    /// The keys in `directory`; files that are not keys are reported, not fatal.
    public static func load(directory: String) -> (keys: [MinisignPublicKey], problems: [BundleProblem]) {
        guard let stream = opendir(directory) else {
            return ([], [BundleProblem(directory, "cannot read the trusted keys: \(FileSystem.message(errno))")])
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasSuffix(".pub") { names.append(name) }
        }
        var keys: [MinisignPublicKey] = []
        var problems: [BundleProblem] = []
        for name in names.sorted() {
            do { keys.append(try load(file: directory + "/" + name)) } catch { problems.append(error) }
        }
        return (keys, problems)
    }

    /// One key file.
    public static func load(file: String) throws(BundleProblem) -> MinisignPublicKey {
        let slash = file.lastIndex(of: "/")
        let folderPath = slash.map { $0 == file.startIndex ? "/" : String(file[..<$0]) } ?? "."
        let name = slash.map { String(file[file.index(after: $0)...]) } ?? file
        let folder = try BundleFolder(path: folderPath)
        let bytes = try folder.read(name, limit: 4096)
        return try MinisignPublicKey(text: String(decoding: bytes, as: UTF8.self), origin: file)
    }
}

/// What a bundle's signature says.
public struct BundleSignature: Sendable, Hashable {
    /// The key that signed it (`nil`: unsigned, accepted because the configuration says so).
    public var keyID: String?
    public var trustedComment: String?
}

/// Reads and checks a bundle folder: its manifest and signature, its files against the manifest.
/// Everything `vitrine bundle verify` prints and everything the importer refuses comes from here.
public struct BundleReader: ~Copyable {
    let folder: BundleFolder
    /// Bytes read at a time.
    static let chunkSize = 1 << 20

    public init(path: String) throws(BundleProblem) {
        folder = try BundleFolder(path: path)
    }

    /// The manifest, checked against `keys` (`acceptUnsigned`: a bundle without a signature
    /// passes; a bad signature never does).
    public func manifest(keys: [MinisignPublicKey], acceptUnsigned: Bool) -> (manifest: BundleManifest?, signature: BundleSignature?, problems: [BundleProblem]) {
        let manifestName = folder.display(BundleManifest.fileName)
        let bytes: [UInt8]
        do { bytes = try folder.read(BundleManifest.fileName, limit: BundleManifest.maximumSize) } catch {
            return (nil, nil, [error])
        }
        var problems: [BundleProblem] = []
        var signature: BundleSignature?
        if folder.exists(BundleManifest.signatureName) {
            do {
                let text = try folder.read(BundleManifest.signatureName, limit: 4096)
                let parsed = try MinisignSignature(text: String(decoding: text, as: UTF8.self), origin: folder.display(BundleManifest.signatureName))
                if let key = keys.first(where: { $0.keyID == parsed.keyID }) {
                    try parsed.verify(bytes, with: key, messageName: BundleManifest.fileName)
                    signature = BundleSignature(keyID: key.keyID, trustedComment: parsed.trustedComment)
                } else {
                    problems.append(BundleProblem(folder.display(BundleManifest.signatureName),
                                                  "signed by key \(parsed.keyID), which is not a trusted key (\(keys.count) trusted: \(keys.map(\.keyID).joined(separator: ", ")))"))
                }
            } catch {
                problems.append(error)
            }
        } else if acceptUnsigned {
            signature = BundleSignature(keyID: nil, trustedComment: nil)
        } else {
            problems.append(BundleProblem(folder.display(BundleManifest.signatureName),
                                          "missing: the bundle is not signed (sign MANIFEST with minisign -S, or set accept_unsigned = true)"))
        }
        let (manifest, manifestProblems) = BundleManifest.parse(bytes, origin: manifestName)
        problems += manifestProblems
        return (problems.isEmpty ? manifest : nil, problems.isEmpty ? signature : nil, problems)
    }

    /// What is in the folder but not in the manifest, what the manifest lists but the folder lacks,
    /// and what no bundle may hold (links, devices, FIFOs, sockets).
    public func contents(against manifest: BundleManifest) -> [BundleProblem] {
        let (files, problems) = folder.walk()
        var found = problems
        let listed = Set(manifest.entries.map(\.path))
        for path in files.keys.sorted() where !listed.contains(path) && path != BundleManifest.fileName && path != BundleManifest.signatureName {
            found.append(BundleProblem(folder.display(path), "not in the manifest: refused"))
        }
        let special = Set(problems.map(\.file))
        for entry in manifest.entries where files[entry.path] == nil && !special.contains(folder.display(entry.path)) {
            found.append(BundleProblem(folder.display(entry.path), "listed in the manifest (line \(entry.line)) but missing"))
        }
        return found
    }

    /// Reads `entry` once, checking its size and SHA-256, and hands each piece read to `sink`
    /// (a copy). Never reads more than the manifest's size plus one byte.
    public func read(_ entry: BundleManifest.Entry, into sink: (UnsafeRawBufferPointer) throws(BundleProblem) -> Void = { _ throws(BundleProblem) in })
        throws(BundleProblem) {
        let name = folder.display(entry.path)
        let (file, _) = try folder.openFile(entry.path)
        defer { close(file) }
        var hasher = SHA256Hasher()
        var total: Int64 = 0
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 4096)
        defer { buffer.deallocate() }
        while true {
            let wanted = Int(min(Int64(buffer.count), entry.size + 1 - total))
            guard wanted > 0 else { break }
            let count = Glibc.read(file, buffer.baseAddress, wanted)
            if count < 0 {
                if errno == EINTR { continue }
                throw BundleProblem(name, "cannot read (the stick was pulled?): \(FileSystem.message(errno))")
            }
            if count == 0 { break }
            total += Int64(count)
            if total > entry.size {
                throw BundleProblem(name, "larger than its manifest size of \(entry.size) bytes: refused")
            }
            let piece = UnsafeRawBufferPointer(rebasing: buffer[0..<count])
            hasher.update(piece)
            try sink(piece)
        }
        guard total == entry.size else {
            throw BundleProblem(name, "\(total) bytes, the manifest says \(entry.size) (line \(entry.line))")
        }
        let digest = hasher.finish().hexString
        guard digest == entry.sha256 else {
            throw BundleProblem(name, "its SHA-256 is \(digest), the manifest says \(entry.sha256) (line \(entry.line)): changed after signing")
        }
    }

    /// Every file and its checks: the whole of `vitrine bundle verify` but the schedule.
    public func verify(keys: [MinisignPublicKey], acceptUnsigned: Bool) -> (manifest: BundleManifest?, signature: BundleSignature?, problems: [BundleProblem]) {
        let (manifest, signature, problems) = self.manifest(keys: keys, acceptUnsigned: acceptUnsigned)
        guard let manifest else { return (nil, nil, problems) }
        var found = contents(against: manifest)
        let refused = Set(found.map(\.file))
        for entry in manifest.entries where !refused.contains(folder.display(entry.path)) {
            do { try read(entry) } catch { found.append(error) }
        }
        return (manifest, signature, found)
    }

    /// The folder path as given.
    public var path: String { folder.path }
}
