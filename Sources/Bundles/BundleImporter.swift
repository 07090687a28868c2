import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What an import is doing, written to `DATA/import-status.json` for the player, which owns the
/// screen and shows it (progress, then a notice). A stable interface: fields are only added.
public struct ImportStatus: Codable, Sendable, Hashable {
    public enum State: String, Codable, Sendable {
        /// Checking the signature and the manifest.
        case checking
        /// Copying (and hashing) files to the data partition.
        case copying
        /// Validating the staged schedule, media lengths included.
        case validating
        /// The bundle is current: the player changes programme at its next item boundary.
        case imported
        /// The bundle was refused (`message` says why); the old schedule keeps playing.
        case refused
    }

    public var state: State
    /// The bundle folder on the stick.
    public var source: String
    public var filesDone = 0
    public var filesTotal = 0
    public var bytesDone: Int64 = 0
    public var bytesTotal: Int64 = 0
    /// The reason for a refusal (the first problems), or what was imported.
    public var message: String?
    /// When this was written, nanoseconds since 1970 (CLOCK_REALTIME).
    public var updatedNanoseconds: Int64 = 0

    public init(state: State, source: String) {
        self.state = state
        self.source = source
    }

    /// Reads the status file; `nil` when there is none or it cannot be parsed.
    public static func read(_ path: String) -> ImportStatus? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64 * 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return try? JSONDecoder().decode(ImportStatus.self, from: Data(bytes.prefix(count)))
    }
}

/// `vitrine import MOUNTPOINT`: takes the bundle from a stick onto the data partition — checked,
/// copied, validated, then made current in one atomic step — or refuses it and leaves nothing
/// behind. See docs/bundles.md.
public struct BundleImporter: Sendable {
    public struct Settings: Sendable {
        public var store: BundleStore
        public var keys: [MinisignPublicKey]
        /// Accept a bundle without `MANIFEST.minisig` (a bad signature is refused regardless).
        public var acceptUnsigned: Bool
        /// Bytes that must stay free on the data partition after the copy.
        public var keepFree: Int64

        public init(store: BundleStore, keys: [MinisignPublicKey], acceptUnsigned: Bool = false, keepFree: Int64 = 64 << 20) {
            self.store = store
            self.keys = keys
            self.acceptUnsigned = acceptUnsigned
            self.keepFree = keepFree
        }
    }

    public enum Outcome: Sendable, Hashable {
        /// The bundle `id` is current; its schedule is at `schedule`.
        case imported(id: String, schedule: String, signature: BundleSignature)
        /// The stick holds no bundle (no `vitrine/` folder).
        case ignored(String)
        /// Refused, for these reasons; nothing changed.
        case refused([BundleProblem])
    }

    public let settings: Settings
    /// Validates a staged schedule file as `vitrine validate` does: its errors, none when valid.
    let validate: @Sendable (String) async -> [String]

    public init(settings: Settings, validate: @escaping @Sendable (String) async -> [String]) {
        self.settings = settings
        self.validate = validate
    }

    public func importBundle(from mountPoint: String) async -> Outcome {
        let root = mountPoint + "/" + "vitrine"
        var status = stat()
        guard lstat(root, &status) == 0 else { return .ignored("\(mountPoint): no vitrine/ folder: nothing to import") }
        guard (status.st_mode & S_IFMT) == S_IFDIR else {
            return finish(.refused([BundleProblem(root, FileSystem.refusal(mode: status.st_mode) ?? "not a folder: refused")]), source: root)
        }
        let store = settings.store
        let lock: Int32
        do { lock = try store.lock() } catch { return finish(.refused([error]), source: root) }
        defer { close(lock) }
        store.removeLeftovers()
        var report = ImportStatus(state: .checking, source: root)
        write(report)

        let reader: BundleReader
        do { reader = try BundleReader(path: root) } catch { return finish(.refused([error]), source: root) }
        let (checked, signature, problems) = reader.manifest(keys: settings.keys, acceptUnsigned: settings.acceptUnsigned)
        guard let manifest = checked, let signature, problems.isEmpty else { return finish(.refused(problems), source: root) }
        let contents = reader.contents(against: manifest)
        guard contents.isEmpty else { return finish(.refused(contents), source: root) }
        if let free = store.freeBytes(), free < manifest.totalSize + settings.keepFree {
            return finish(.refused([BundleProblem(root, "needs \(Self.megabytes(manifest.totalSize)) MB plus \(Self.megabytes(settings.keepFree)) MB kept free, but \(store.directory) has \(Self.megabytes(free)) MB free")]), source: root)
        }

        // Stage a copy, hashing every byte as it is copied (each file read once).
        let id = Self.bundleID(manifest)
        let staging = store.directory + "/.staging-" + id
        guard mkdir(staging, 0o755) == 0 else {
            return finish(.refused([BundleProblem(staging, "cannot create: \(FileSystem.message(errno))")]), source: root)
        }
        report.state = .copying
        report.filesTotal = manifest.entries.count
        report.bytesTotal = manifest.totalSize
        write(report)
        var lastReport = Self.nanosecondsNow()
        for entry in manifest.entries {
            do {
                try copy(entry, from: reader, to: staging) { bytes in
                    report.bytesDone += bytes
                    let now = Self.nanosecondsNow()
                    if now - lastReport > 250_000_000 {
                        lastReport = now
                        write(report)
                    }
                }
            } catch {
                BundleStore.removeTree(staging)
                return finish(.refused([error]), source: root)
            }
            report.filesDone += 1
        }
        do {
            try AtomicFile.write(Array(manifest.text.utf8), to: staging + "/" + BundleManifest.fileName)
            if let bytes = try? reader.folder.read(BundleManifest.signatureName, limit: 4096) {
                try AtomicFile.write(bytes, to: staging + "/" + BundleManifest.signatureName)
            }
        } catch {
            BundleStore.removeTree(staging)
            return finish(.refused([error]), source: root)
        }
        Self.syncFileSystem(of: staging)

        report.state = .validating
        write(report)
        let schedule = manifest.schedulePath ?? BundleManifest.scheduleNames[0]
        let errors = await validate(staging + "/" + schedule)
        guard errors.isEmpty else {
            BundleStore.removeTree(staging)
            return finish(.refused(errors.map { BundleProblem(root + "/" + schedule, Self.relativeToBundle($0, staging: staging)) }), source: root)
        }
        do { try store.adopt(staging: staging, id: id) } catch {
            BundleStore.removeTree(staging)
            return finish(.refused([error]), source: root)
        }
        store.prune()
        return finish(.imported(id: id, schedule: store.currentLink + "/" + schedule, signature: signature), source: root, report: report)
    }

    /// Makes the previous bundle current again; returns its ID.
    public func rollback() throws(BundleProblem) -> String {
        let lock = try settings.store.lock()
        defer { close(lock) }
        return try settings.store.swapCurrentAndPrevious()
    }

    // MARK: Steps

    private func copy(_ entry: BundleManifest.Entry, from reader: borrowing BundleReader, to staging: String,
                      progress: (Int64) -> Void) throws(BundleProblem) {
        let destination = staging + "/" + entry.path
        var folder = staging
        for part in entry.path.split(separator: "/").dropLast() {
            folder += "/" + part
            if mkdir(folder, 0o755) != 0 && errno != EEXIST { throw BundleProblem(folder, "cannot create: \(FileSystem.message(errno))") }
        }
        let file = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw BundleProblem(destination, "cannot create: \(FileSystem.message(errno))") }
        defer { close(file) }
        try reader.read(entry) { (piece: UnsafeRawBufferPointer) throws(BundleProblem) in
            var offset = 0
            while offset < piece.count {
                let written = Glibc.write(file, piece.baseAddress! + offset, piece.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw BundleProblem(destination, "cannot write: \(FileSystem.message(errno))")
                }
                offset += written
            }
            progress(Int64(piece.count))
        }
    }

    /// Records the outcome in the status file and returns it.
    private func finish(_ outcome: Outcome, source: String, report: ImportStatus? = nil) -> Outcome {
        var status = report ?? ImportStatus(state: .refused, source: source)
        switch outcome {
        case .imported(let id, _, let signature):
            status.state = .imported
            status.message = "bundle \(id) imported" + (signature.keyID.map { ", signed by \($0)" } ?? ", unsigned")
        case .refused(let problems):
            status.state = .refused
            status.message = problems.prefix(3).map(\.description).joined(separator: "; ")
        case .ignored:
            return outcome
        }
        write(status)
        return outcome
    }

    private func write(_ status: ImportStatus) {
        var status = status
        status.updatedNanoseconds = Self.realTimeNanoseconds()
        guard let data = try? JSONEncoder().encode(status) else { return }
        try? AtomicFile.write([UInt8](data), to: settings.store.statusPath)
    }

    // MARK: Helpers

    /// `20261125T003012Z-1a2b3c4d-9f3e21a0`: when, the start of the manifest's SHA-256, and a random part.
    static func bundleID(_ manifest: BundleManifest) -> String {
        var hasher = SHA256Hasher()
        Array(manifest.text.utf8).withUnsafeBytes { hasher.update($0) }
        let digest = hasher.finish().hexString
        var now = time_t(realTimeNanoseconds() / 1_000_000_000)
        var parts = tm()
        gmtime_r(&now, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let stamp = "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
        // Two imports of the same bundle in the same second still get different folders.
        let salt = String(UInt32.random(in: 0...UInt32.max) | 0x1000_0000, radix: 16)
        return stamp + "-" + digest.prefix(8) + "-" + salt
    }

    static func megabytes(_ bytes: Int64) -> String { String((bytes + (1 << 20) - 1) >> 20) }

    static func nanosecondsNow() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    static func realTimeNanoseconds() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }

    /// Flushes every file written under `folder` to the disk (one `syncfs` for the whole copy).
    static func syncFileSystem(of folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = glibcSyncfs(descriptor)
        close(descriptor)
    }

    /// A validator message names the staged copy; the operator knows the stick's file.
    static func relativeToBundle(_ message: String, staging: String) -> String {
        guard let range = message.firstRange(of: staging + "/") else { return message }
        return String(message[range.upperBound...])
    }
}

/// glibc's `syncfs`, which Swift's Glibc module does not export (it needs `_GNU_SOURCE`).
@_silgen_name("syncfs")
private func glibcSyncfs(_ descriptor: Int32) -> Int32
