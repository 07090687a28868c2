import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Watches one file (a schedule, a bundle's `current` link, the import status) with inotify and
/// calls back when it was written or replaced.
///
/// The file's folder is watched, not the file: editors and `mv` replace the file (a new inode), and an
/// atomic replace is exactly how a new schedule should arrive (a link renamed over another too). A
/// callback comes after the writer closed the file (`IN_CLOSE_WRITE`) or moved a new one into place
/// (`IN_MOVED_TO`), never mid-write.
public final class FileWatcher: Sendable {
    private let descriptor: Int32
    private let stopPipe: (read: Int32, write: Int32)
    private let thread = LockedValue<NamedThread?>(nil)

    /// Starts watching; `onChange` runs on the watcher's thread.
    public init?(path: String, onChange: @escaping @Sendable () -> Void) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, directory, UInt32(IN_CLOSE_WRITE | IN_MOVED_TO)) >= 0 else {
            close(fd)
            return nil
        }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            close(fd)
            return nil
        }
        descriptor = fd
        stopPipe = (fds[0], fds[1])
        let loop = WatchLoop(fd: fd, stopFD: fds[0], name: name, onChange: onChange)
        do {
            let started = try NamedThread.start(name: "vitrine-watch") { loop.run() }
            thread.withLock { $0 = started }
        } catch {
            close(fd)
            close(fds[0])
            close(fds[1])
            return nil
        }
    }

    /// Stops the thread and waits for it. Idempotent.
    public func stop() {
        guard let running = thread.withLock({ $0.take() }) else { return }
        var byte: UInt8 = 1
        _ = write(stopPipe.write, &byte, 1)
        running.join()
        close(descriptor)
        close(stopPipe.read)
        close(stopPipe.write)
    }

    deinit { stop() }
}

/// The watcher thread's loop: poll the inotify descriptor and the stop pipe.
private final class WatchLoop: Sendable {
    let fd: Int32, stopFD: Int32, name: String
    let onChange: @Sendable () -> Void

    init(fd: Int32, stopFD: Int32, name: String, onChange: @escaping @Sendable () -> Void) {
        self.fd = fd
        self.stopFD = stopFD
        self.name = name
        self.onChange = onChange
    }

    func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: stopFD, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 { if errno == EINTR { continue } else { return } }
            if fds[1].revents != 0 { return }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { continue }
            var changed = false
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let (length, eventName) = buffer.withUnsafeBytes { raw -> (Int, String) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    let nameBytes = raw[(offset + headerSize)..<min(count, offset + headerSize + Int(event.len))]
                    let text = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
                    return (Int(event.len), text)
                }
                if eventName == name { changed = true }
                offset += headerSize + length
            }
            if changed { onChange() }
        }
    }
}
