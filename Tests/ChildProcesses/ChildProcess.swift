#if canImport(Glibc)
public import Glibc
#endif
import Synchronization
import Threading

/// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), which Swift's Glibc module does not export.
@_silgen_name("posix_spawn_file_actions_addchdir_np")
private func spawnActionsAddChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: UnsafePointer<CChar>) -> Int32

/// glibc's `pipe2` (a GNU extension the Glibc module leaves out): both ends close-on-exec from the
/// start, so a child spawned meanwhile by another thread does not inherit them.
@_silgen_name("pipe2")
private func systemPipe2(_ descriptors: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// Why a child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var executable: String
    public var reason: String
    public var description: String { "cannot start \(executable): \(reason)" }
}

/// A child process started with `posix_spawn` and reaped with `waitpid`, for tests.
///
/// Foundation's `Process` reaps children from a monitor thread with a blocking `wait4`, which can
/// hang when a short-lived tool (ffmpeg) and a long-lived one (a sound server, a web server) run
/// from the same test process at once; this type owns its child outright. Children start with an
/// empty signal mask and default dispositions, whatever the test process blocks or ignores.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    private let exitStatus = LockedValue<Int32?>(nil)

    /// Starts `executable` (a path, or a name looked up on the PATH) with the standard streams
    /// read from /dev/null and written to the given files.
    public convenience init(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        standardOutput: String = "/dev/null", standardError: String = "/dev/null"
    ) throws(ChildProcessError) {
        try self.init(executable: executable, arguments: arguments, environment: environment, currentDirectory: nil) { actions in
            posix_spawn_file_actions_addopen(actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_addopen(actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
    }

    private init(
        executable: String, arguments: [String], environment: [String: String]?, currentDirectory: String?,
        outputs: (UnsafeMutablePointer<posix_spawn_file_actions_t>) -> Void
    ) throws(ChildProcessError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        outputs(&actions)
        if let currentDirectory { _ = spawnActionsAddChdir(&actions, currentDirectory) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let variables = environment ?? ChildProcess.currentEnvironment()
        let environmentStrings = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environmentStrings.forEach { free($0) } }
        var pid: pid_t = 0
        let status = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, &attributes, argv, environmentStrings)
            : posix_spawnp(&pid, executable, &actions, &attributes, argv, environmentStrings)
        guard status == 0 else { throw ChildProcessError(executable: executable, reason: String(cString: strerror(status))) }
        self.pid = pid
    }

    /// Waits for the child and returns its exit status (128 + signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if let known = exitStatus.withLock({ $0 }) { return known }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
        return record(result == pid ? status : nil)
    }

    /// Whether the child is still running (reaps it when it has ended).
    public var isRunning: Bool {
        if exitStatus.withLock({ $0 }) != nil { return false }
        var status: Int32 = 0
        let result = waitpid(pid, &status, WNOHANG)
        if result == 0 { return true }
        record(result == pid ? status : nil)
        return false
    }

    /// Sends SIGTERM (or `signal`) and reaps the child.
    public func terminate(_ signal: Int32 = SIGTERM) {
        guard isRunning else { return }
        kill(pid, signal)
        wait()
    }

    @discardableResult
    private func record(_ waitStatus: Int32?) -> Int32 {
        // Without a status the child was reaped elsewhere; report it as failed.
        let code = waitStatus.map { ($0 & 0x7f) == 0 ? ($0 >> 8) & 0xff : 128 + ($0 & 0x7f) } ?? 255
        return exitStatus.withLock { known in
            if let known { return known }
            known = code
            return code
        }
    }

    private static func currentEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return result
    }

    // MARK: Running to the end with the output captured

    /// What a finished child printed and how it ended.
    public struct Output: Sendable {
        public var status: Int32
        public var standardOutput: [UInt8]
        public var standardError: [UInt8]
        public var stdout: String { String(decoding: standardOutput, as: UTF8.self) }
        public var stderr: String { String(decoding: standardError, as: UTF8.self) }
    }

    /// Runs `executable` to its end, reading both output streams while it runs (so a full pipe
    /// never blocks it), and returns them with the exit status.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, currentDirectory: String? = nil
    ) throws(ChildProcessError) -> Output {
        var outputPipe: [Int32] = [-1, -1], errorPipe: [Int32] = [-1, -1]
        guard systemPipe2(&outputPipe, O_CLOEXEC) == 0 else { throw ChildProcessError(executable: executable, reason: "pipe: \(String(cString: strerror(errno)))") }
        guard systemPipe2(&errorPipe, O_CLOEXEC) == 0 else {
            close(outputPipe[0]); close(outputPipe[1])
            throw ChildProcessError(executable: executable, reason: "pipe: \(String(cString: strerror(errno)))")
        }
        let child: ChildProcess
        do {
            child = try ChildProcess(executable: executable, arguments: arguments, environment: environment,
                                     currentDirectory: currentDirectory) { actions in
                posix_spawn_file_actions_adddup2(actions, outputPipe[1], 1)
                posix_spawn_file_actions_adddup2(actions, errorPipe[1], 2)
            }
        } catch {
            [outputPipe[0], outputPipe[1], errorPipe[0], errorPipe[1]].forEach { close($0) }
            throw error
        }
        close(outputPipe[1])
        close(errorPipe[1])
        var collected: [[UInt8]] = [[], []]
        var descriptors = [pollfd(fd: outputPipe[0], events: Int16(POLLIN), revents: 0),
                           pollfd(fd: errorPipe[0], events: Int16(POLLIN), revents: 0)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while descriptors.contains(where: { $0.fd >= 0 }) {
            if poll(&descriptors, nfds_t(descriptors.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in descriptors.indices where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = read(descriptors[index].fd, &buffer, buffer.count)
                if count > 0 {
                    collected[index] += buffer[0..<count]
                } else if count == 0 || errno != EINTR {
                    close(descriptors[index].fd)
                    descriptors[index].fd = -1
                }
            }
        }
        descriptors.filter { $0.fd >= 0 }.forEach { close($0.fd) }
        return Output(status: child.wait(), standardOutput: collected[0], standardError: collected[1])
    }
}
