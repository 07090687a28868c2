import ChildProcesses
import Foundation
import Testing

/// `vitrine play` under a service manager: a notify socket in the test stands in for systemd.
@Suite("play under systemd's notify protocol")
struct SystemdNotifyTests {
    /// Datagrams received until `stop` says enough or `seconds` pass without one.
    static func messages(from receiver: DatagramReceiver, until stop: ([String]) -> Bool, seconds: Int = 60) -> [String] {
        var messages: [String] = []
        while !stop(messages), let datagram = receiver.receive(waitingUpTo: seconds) {
            messages.append(String(decoding: datagram, as: UTF8.self))
        }
        return messages
    }

    @Test("READY=1 with a STATUS after the first frame, WATCHDOG=1 while rendering, none while stopped, STOPPING=1 on SIGTERM")
    func lifecycle() throws {
        let receiver = try DatagramReceiver()
        let clip = ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/queue1.mp4").path
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = receiver.path
        environment["WATCHDOG_USEC"] = "1000000"  // a ping expected every second: checks every 0.5 s
        environment.removeValue(forKey: "WATCHDOG_PID")
        // The player's standard error, shown when it exits badly (under ThreadSanitizer it once exited
        // 66, a report, and the report was lost with its output).
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-notify-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let player = try ChildProcess(
            executable: ScheduleCommandsTests.executable.path,
            arguments: ["play", "--display", "headless", "--mode", "320x240@25", "--no-audio", "--loop", "--duration", "600", clip],
            environment: environment, standardError: errors)
        defer { player.terminate(SIGKILL) }

        // Ready once a frame is on screen (a slow machine may take a while to start: generous deadline).
        let start = Self.messages(from: receiver, until: { $0.contains { $0.hasPrefix("READY=1") } })
        let ready = try #require(start.first { $0.hasPrefix("READY=1") }, "no READY=1 in \(start)")
        #expect(ready.contains("STATUS=playing queue1.mp4 (item 0) at "), "\(ready)")
        // While the render loop goes round, pings keep coming.
        let pings = Self.messages(from: receiver, until: { $0.filter { $0 == "WATCHDOG=1\n" }.count >= 3 }, seconds: 10)
        #expect(pings.filter { $0 == "WATCHDOG=1\n" }.count >= 3, "\(pings)")

        // Stopped (as a hung process is): no ping for several watchdog intervals.
        kill(player.pid, SIGSTOP)
        while receiver.receive(waitingUpTo: 1) != nil {}  // what was sent just before the stop
        #expect(receiver.receive(waitingUpTo: 3) == nil, "a ping while the process was stopped")
        kill(player.pid, SIGCONT)
        let resumed = Self.messages(from: receiver, until: { $0.contains("WATCHDOG=1\n") }, seconds: 10)
        #expect(resumed.contains("WATCHDOG=1\n"), "\(resumed)")

        player.terminate(SIGTERM)
        let end = Self.messages(from: receiver, until: { $0.contains { $0.hasPrefix("STOPPING=1") } }, seconds: 10)
        #expect(end.contains { $0.hasPrefix("STOPPING=1") }, "\(end)")
        #expect(player.wait() == 0, "\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
    }

    @Test("for a schedule, STATUS names the entry too")
    func statusNamesTheEntry() throws {
        let receiver = try DatagramReceiver()
        let clip = ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/queue1.mp4").path
        let schedule = try ScheduleCommandsTests.temporaryFile("""
            version = 1
            timezone = "UTC"
            fallback = "house"
            [[playlists.house.items]]
            video = "\(clip)"
            """, name: "show.toml")
        defer { try? FileManager.default.removeItem(at: schedule.deletingLastPathComponent()) }
        var environment = ProcessInfo.processInfo.environment
        environment["NOTIFY_SOCKET"] = receiver.path
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-notify-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: errors) }
        let player = try ChildProcess(
            executable: ScheduleCommandsTests.executable.path,
            arguments: ["play", schedule.path, "--display", "headless", "--mode", "320x240@25", "--no-audio"],
            environment: environment, standardError: errors)
        defer { player.terminate(SIGKILL) }
        let start = Self.messages(from: receiver, until: { $0.contains { $0.hasPrefix("READY=1") } })
        let ready = try #require(start.first { $0.hasPrefix("READY=1") }, "no READY=1 in \(start)")
        #expect(ready.contains("STATUS=fallback: playing queue1.mp4 (item "), "\(ready)")
        player.terminate(SIGTERM)
        #expect(player.wait() == 0, "\((try? String(contentsOfFile: errors, encoding: .utf8)) ?? "")")
    }
}
