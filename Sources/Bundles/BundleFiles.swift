#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Reads a bundle folder the way a hostile stick demands: every path is opened one part at a
/// time relative to the bundle folder without following a symbolic link, only regular files are
/// read (a device node, a FIFO or a socket is refused before it is opened for reading), and a
/// file is never read past the size it should have plus one byte.
struct BundleFolder: ~Copyable {
    /// The bundle folder as the operator knows it (`/media/stick/vitrine`), for messages.
    let path: String
    private let descriptor: Int32

    /// Opens `path`, which must be a real folder (not a link to one).
    init(path: String) throws(BundleProblem) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { throw BundleProblem(path, "cannot open the folder: \(FileSystem.message(errno))") }
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Opens the regular file at the bundle path `relative` for reading; returns its descriptor and size.
    func openFile(_ relative: String) throws(BundleProblem) -> (descriptor: Int32, size: Int64) {
        let parts = relative.split(separator: "/").map(String.init)
        var folder = dup(descriptor)
        guard folder >= 0 else { throw BundleProblem(display(relative), "cannot open: \(FileSystem.message(errno))") }
        defer { close(folder) }
        for part in parts.dropLast() {
            let next = openat(folder, part, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                let code = errno
                throw BundleProblem(display(relative), code == ELOOP || code == ENOTDIR
                    ? "\"\(part)\" is not a folder (a link or a file): refused"
                    : "missing on the stick (\(FileSystem.message(code)))")
            }
            close(folder)
            folder = next
        }
        // Look before opening: opening a FIFO for reading would wait for a writer.
        var status = stat()
        guard fstatat(folder, parts.last ?? "", &status, AT_SYMLINK_NOFOLLOW) == 0 else {
            throw BundleProblem(display(relative), "missing on the stick (\(FileSystem.message(errno)))")
        }
        if let refusal = FileSystem.refusal(mode: status.st_mode) { throw BundleProblem(display(relative), refusal) }
        let file = openat(folder, parts.last ?? "", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { throw BundleProblem(display(relative), "cannot open: \(FileSystem.message(errno))") }
        // It could have been swapped between the look and the open: look again at what is open.
        guard fstat(file, &status) == 0, FileSystem.refusal(mode: status.st_mode) == nil else {
            close(file)
            throw BundleProblem(display(relative), "changed while being opened: refused")
        }
        return (file, Int64(status.st_size))
    }

    /// The whole of a small file (the manifest, its signature); refused above `limit` bytes.
    func read(_ relative: String, limit: Int) throws(BundleProblem) -> [UInt8] {
        let (file, size) = try openFile(relative)
        defer { close(file) }
        guard size <= Int64(limit) else { throw BundleProblem(display(relative), "larger than \(limit) bytes: refused") }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= limit {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(file, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw BundleProblem(display(relative), "cannot read: \(FileSystem.message(errno))")
            }
            if count == 0 { break }
            bytes += chunk.prefix(count)
        }
        guard bytes.count <= limit else { throw BundleProblem(display(relative), "larger than \(limit) bytes: refused") }
        return bytes
    }

    /// Whether the bundle holds something at `relative` (without following links).
    func exists(_ relative: String) -> Bool {
        var status = stat()
        return fstatat(descriptor, relative, &status, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Every entry below the folder, depth first, sorted: regular files with their sizes, and
    /// everything that must not be in a bundle (links, devices, FIFOs, sockets) as problems.
    func walk() -> (files: [String: Int64], problems: [BundleProblem]) {
        var files: [String: Int64] = [:]
        var problems: [BundleProblem] = []
        walk(folder: dup(descriptor), prefix: "", files: &files, problems: &problems, depth: 0)
        return (files, problems)
    }

    private func walk(folder: Int32, prefix: String, files: inout [String: Int64], problems: inout [BundleProblem], depth: Int) {
        guard folder >= 0 else { return }
        guard let stream = fdopendir(folder) else {
            close(folder)
            problems.append(BundleProblem(display(prefix), "cannot list: \(FileSystem.message(errno))"))
            return
        }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        for name in names.sorted() {
            let relative = prefix.isEmpty ? name : prefix + "/" + name
            var status = stat()
            guard fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else {
                problems.append(BundleProblem(display(relative), "cannot read: \(FileSystem.message(errno))"))
                continue
            }
            if (status.st_mode & S_IFMT) == S_IFDIR {
                guard depth < 64 else {
                    problems.append(BundleProblem(display(relative), "folders nested too deep: refused"))
                    continue
                }
                let child = openat(folder, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                walk(folder: child, prefix: relative, files: &files, problems: &problems, depth: depth + 1)
            } else if let refusal = FileSystem.refusal(mode: status.st_mode) {
                problems.append(BundleProblem(display(relative), refusal))
            } else {
                files[relative] = Int64(status.st_size)
            }
        }
    }

    /// `vitrine/media/a.mp4` for messages.
    func display(_ relative: String) -> String { relative.isEmpty ? path : path + "/" + relative }
}

/// The system-call details the bundle code shares.
enum FileSystem {
    static func message(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// Why a file of this type is refused, or `nil` for a regular file.
    static func refusal(mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFLNK: return "a symbolic link: refused (bundles hold files, not links)"
        case S_IFCHR, S_IFBLK: return "a device node: refused"
        case S_IFIFO: return "a FIFO: refused"
        case S_IFSOCK: return "a socket: refused"
        case S_IFDIR: return "a folder where a file is expected: refused"
        default: return "not a regular file: refused"
        }
    }
}
