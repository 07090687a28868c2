import ChildProcesses
import Foundation
import Testing

/// The sound device of a playing `vitrine play` disappears (its PulseAudio server is killed):
/// the picture goes on, on the display clock, to the end of the file, and the command ends
/// normally.
@Suite("Sound device lost while playing", .enabled(
    if: CommandRunner.canRun && FileManager.default.isExecutableFile(atPath: "/usr/bin/pulseaudio"),
    "needs pulseaudio and ALSA's pulse plugin (scripts/setup.sh installs them)"))
struct AudioDeviceLossTests {
    @Test("PulseAudio killed mid-play: video goes on to the end, the command exits 0")
    func pulseAudioKilled() throws {
        let folder = try CommandRunner.temporaryDirectory("pulse")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A private server with a null sink, and an ALSA PCM on it (read from ~/.asoundrc).
        let socket = folder + "/native"
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = folder
        environment["HOME"] = folder
        let server = try ChildProcess(
            executable: "/usr/bin/pulseaudio",
            arguments: ["-n", "--daemonize=no", "--exit-idle-time=-1", "--use-pid-file=no", "--disable-shm=yes",
                        "-L", "module-null-sink sink_name=testsink",
                        "-L", "module-native-protocol-unix auth-anonymous=1 socket=\(socket)"],
            environment: environment)
        defer { server.terminate(SIGKILL) }
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socket) && Date() < deadline { usleep(50_000) }
        try #require(FileManager.default.fileExists(atPath: socket), "pulseaudio did not start")
        try "pcm.vitrine_pulse { type pulse server \"unix:\(socket)\" }\n".write(toFile: folder + "/.asoundrc", atomically: true, encoding: .utf8)

        let log = folder + "/log.jsonl"
        let player = try ChildProcess(
            executable: CommandRunner.vitrine!,
            arguments: ["play", CommandRunner.fixture("h264_aac.mp4"), "--display", "headless", "--mode", "320x240@25",
                        "--audio-device", "vitrine_pulse", "--presentation-log", log],
            environment: environment)
        defer { player.terminate(SIGKILL) }
        // Playing with sound: audio is the master clock (frames carry audio_clock_s).
        let withSound = MediaFaultTests.wait(for: log) { records in
            records.contains { $0["type"] as? String == "frame" && $0["audio_clock_s"] != nil && ($0["pts_s"] as? Double ?? 0) >= 1 }
        }
        try #require(withSound.contains { $0["audio_clock_s"] != nil }, "never played with sound")
        server.terminate(SIGKILL)
        _ = server.wait()
        let killedAt = withSound.filter { $0["type"] as? String == "frame" }.last?["pts_s"] as? Double ?? 0

        let status = player.wait()
        #expect(status == 0)
        let frames = MediaFaultTests.records(log).filter { $0["type"] as? String == "frame" }
        let last = frames.last?["pts_s"] as? Double ?? 0
        // The 10 s clip played to its last frame although its sound device went away at ~1 s.
        #expect(last > 9.8, "video stopped at \(last) s (sound lost at \(killedAt) s)")
        // And in order, with no frame twice.
        let times = frames.map { $0["pts_s"] as? Double ?? 0 }
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
    }
}
