import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid.
///
/// Foundation's `Process` reaps children from a monitor thread with a blocking `wait4`,
/// which can hang when a short-lived tool (ffmpeg) and a long-lived one (pulseaudio) run
/// from the same test process at once; this helper owns its child outright.
final class ChildProcess: @unchecked Sendable {
    let pid: pid_t
    private var exitStatus: Int32?

    init(
        executable: String, arguments: [String], environment: [String: String]? = nil,
        standardOutput: String = "/dev/null", standardError: String = "/dev/null"
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, standardOutput, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, standardError, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environmentStrings = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environmentStrings.forEach { free($0) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, nil, argv, environmentStrings)
        guard status == 0 else { throw ToolError.failed(executable, status, String(cString: strerror(status))) }
        self.pid = pid
    }

    /// Waits for the child and returns its exit status (128 + signal when killed).
    @discardableResult
    func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = code
        return code
    }

    /// Whether the child is still running.
    var isRunning: Bool {
        guard exitStatus == nil else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            return false
        }
        return true
    }

    /// Sends SIGTERM and reaps the child.
    func terminate() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        wait()
    }
}
