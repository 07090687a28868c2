#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The imported bundles on the data partition:
///
/// ```
/// DATA/bundles/ID/…        every bundle kept (the current one and the one before it)
/// DATA/current -> bundles/ID   what the player plays: DATA/current/schedule.toml
/// DATA/previous -> bundles/ID  what `vitrine import --rollback` goes back to
/// DATA/.staging-ID/        an import under way (removed by the next import if one was cut short)
/// DATA/import.lock         held while an import runs: two sticks import one after the other
/// DATA/import-status.json  the import's progress, for the player's overlay
/// ```
///
/// `current` is switched by renaming a new link over it, the one atomic step: after a crash or a
/// power cut it names the old bundle or the new one, each complete, never a mix.
public struct BundleStore: Sendable {
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    public var currentLink: String { directory + "/current" }
    public var previousLink: String { directory + "/previous" }
    var bundlesFolder: String { directory + "/bundles" }
    var lockPath: String { directory + "/import.lock" }
    public var statusPath: String { directory + "/import-status.json" }

    /// The schedule of the current bundle (through the `current` link), if there is one.
    public var currentSchedule: String? {
        BundleManifest.scheduleNames.map { currentLink + "/" + $0 }.first { access($0, R_OK) == 0 }
    }

    /// The bundle ID `current` (or `previous`) names.
    public func target(of link: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink(link, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        let text = String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasPrefix("bundles/") ? String(text.dropFirst("bundles/".count)) : nil
    }

    /// Creates the folders; takes the import lock, waiting for another import to finish.
    func lock() throws(BundleProblem) -> Int32 {
        for folder in [directory, bundlesFolder] where mkdir(folder, 0o755) != 0 && errno != EEXIST {
            throw BundleProblem(folder, "cannot create: \(FileSystem.message(errno))")
        }
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BundleProblem(lockPath, "cannot open: \(FileSystem.message(errno))") }
        while flock(descriptor, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            close(descriptor)
            throw BundleProblem(lockPath, "cannot lock: \(FileSystem.message(errno))")
        }
        return descriptor
    }

    /// Removes what an import cut short left behind (under the lock, nothing else is running).
    func removeLeftovers() {
        for name in Self.names(in: directory) where name.hasPrefix(".staging-") || name.hasSuffix(".new") {
            Self.removeTree(directory + "/" + name)
        }
    }

    /// Makes the staged bundle `id` current: it moves into `bundles/`, `previous` names what was
    /// current, `current` names it. Each step is a rename; the folder is flushed after each.
    func adopt(staging: String, id: String) throws(BundleProblem) {
        let destination = bundlesFolder + "/" + id
        guard rename(staging, destination) == 0 else {
            throw BundleProblem(destination, "cannot move the staged bundle into place: \(FileSystem.message(errno))")
        }
        Self.flush(bundlesFolder)
        if let old = target(of: currentLink), old != id { try link(previousLink, to: old) }
        try link(currentLink, to: id)
    }

    /// Points `current` back at `previous` and `previous` at what was current.
    func swapCurrentAndPrevious() throws(BundleProblem) -> String {
        guard let previous = target(of: previousLink), Self.isFolder(bundlesFolder + "/" + previous) else {
            throw BundleProblem(previousLink, "there is no previous bundle to go back to")
        }
        let current = target(of: currentLink)
        try link(currentLink, to: previous)
        if let current { try link(previousLink, to: current) }
        return previous
    }

    /// Removes every bundle that `current` and `previous` do not name.
    func prune() {
        let keep = Set([target(of: currentLink), target(of: previousLink)].compactMap { $0 })
        for name in Self.names(in: bundlesFolder) where !keep.contains(name) {
            Self.removeTree(bundlesFolder + "/" + name)
        }
        Self.flush(bundlesFolder)
    }

    /// Atomically (re)points the link at `path` to `bundles/ID`.
    private func link(_ path: String, to id: String) throws(BundleProblem) {
        let temporary = path + ".new"
        unlink(temporary)
        guard symlink("bundles/" + id, temporary) == 0 else {
            throw BundleProblem(temporary, "cannot create the link: \(FileSystem.message(errno))")
        }
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw BundleProblem(path, "cannot switch the link: \(FileSystem.message(code))")
        }
        Self.flush(directory)
    }

    /// Bytes free for an unprivileged writer on the data partition.
    func freeBytes() -> Int64? {
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    // MARK: Folder helpers

    /// Creates the store's folder if its parent exists (the state directory systemd makes);
    /// returns whether it exists now.
    @discardableResult
    public func createFolder() -> Bool {
        mkdir(directory, 0o755) == 0 || errno == EEXIST
    }

    static func flush(_ folder: String) {
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }

    static func names(in folder: String) -> [String] {
        guard let stream = opendir(folder) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes a file, a link or a whole folder (never following links).
    static func removeTree(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            for name in names(in: path) { removeTree(path + "/" + name) }
            rmdir(path)
        } else {
            unlink(path)
        }
    }
}
