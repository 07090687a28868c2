import ChildProcesses
import Foundation

/// A private PulseAudio server with one null sink: a clocked audio device for tests on
/// machines without a sound card. It lives in its own runtime directory and is
/// terminated when the value is released.
final class PrivatePulseServer: @unchecked Sendable {
    static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio")
            && FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/alsa-lib/libasound_module_pcm_pulse.so")
            || FileManager.default.fileExists(atPath: "/usr/lib/aarch64-linux-gnu/alsa-lib/libasound_module_pcm_pulse.so")
    }

    let directory: TemporaryDirectory
    private var process: ChildProcess?
    var socketPath: String { directory.path("native") }

    init() throws {
        directory = try TemporaryDirectory()
        try start()
    }

    deinit { stop() }

    /// ALSA configuration text defining `name` as a PCM on this server.
    func alsaConfiguration(name: String = "vitrine_pulse") -> String {
        "pcm.\(name) { type pulse server \"unix:\(socketPath)\" }\n"
    }

    /// Starts (or restarts) the server and waits for its socket.
    func start() throws {
        try? FileManager.default.removeItem(atPath: socketPath)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = directory.url.path
        environment["HOME"] = directory.url.path
        let process = try ChildProcess(
            executable: "/usr/bin/pulseaudio",
            arguments: [
                "-n", "--daemonize=no", "--exit-idle-time=3", "--use-pid-file=no", "--disable-shm=yes",
                "-L", "module-null-sink sink_name=testsink",
                "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socketPath)",
            ],
            environment: environment)
        self.process = process
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard Date() < deadline, process.isRunning else { throw ToolError.failed("pulseaudio", -1, "no socket") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Thread.sleep(forTimeInterval: 0.2)
    }

    /// Stops the server's process (SIGSTOP), as a host too busy to schedule it would: its clients'
    /// devices consume nothing until ``thaw()``.
    func freeze() { if let process { kill(process.pid, SIGSTOP) } }

    /// Lets a frozen server run again (SIGCONT).
    func thaw() { if let process { kill(process.pid, SIGCONT) } }

    /// Terminates the server: its clients' streams fail.
    func stop() {
        process?.terminate()
        process = nil
    }
}
