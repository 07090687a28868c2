import Foundation
import Testing

/// Every bad input ends in one clear line on stderr and a non-zero exit; nothing crashes or hangs.
@Suite("bad input", .enabled(if: CommandRunner.canRun, "needs fixtures, the vitrine binary, ffmpeg and ffprobe"))
struct BadInputTests {
    static let files: [(String, String)] = [
        ("bad/does-not-exist.mp4", "no such file"),
        ("bad/empty.mp4", "the file is empty"),
        ("bad/truncated.mp4", "moov atom not found"),
        ("bad/flipped.mp4", "damaged"),
        ("bad/text.mp4", "Invalid data found when processing input"),
        ("bad/unsupported.avi", "no decoder for the codec"),
        ("bad/damaged.png", "the media data is damaged or truncated"),
    ]

    private func expectOneClearLine(_ output: CommandRunner.Output, naming source: String, cause: String) {
        #expect(output.status == 1, "exit status \(output.status)")
        let lines = output.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(output.stderr)")
        #expect(lines.first?.hasPrefix("vitrine: \(source): ") == true, "stderr: \(output.stderr)")
        #expect(output.stderr.contains(cause), "stderr: \(output.stderr)")
    }

    @Test("probe fails with the file and the cause", arguments: files)
    func probe(file: String, cause: String) throws {
        let path = CommandRunner.fixture(file)
        expectOneClearLine(try CommandRunner.vitrine(["probe", path]), naming: path, cause: cause)
        expectOneClearLine(try CommandRunner.vitrine(["probe", "--json", path]), naming: path, cause: cause)
    }

    @Test("thumbnails fails with the file and the cause", arguments: files)
    func thumbnails(file: String, cause: String) throws {
        let path = CommandRunner.fixture(file)
        let directory = try CommandRunner.temporaryDirectory("bad")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = try CommandRunner.vitrine(["thumbnails", path, "--times", "0.5", "--out", directory])
        #expect(output.status == 1)
        #expect(output.stderr.hasPrefix("vitrine: \(path): "), "stderr: \(output.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("a refused connection fails with FFmpeg's message")
    func refusedURL() throws {
        // Bind a port, then release it: nothing listens there.
        let port = try FreePort.find()
        let url = "http://127.0.0.1:\(port)/clip.mp4"
        expectOneClearLine(try CommandRunner.vitrine(["probe", url]), naming: url, cause: "Connection refused")
    }

    @Test("a server that never answers times out")
    func silentServer() throws {
        let server = try FreePort.SilentListener()
        let url = "http://127.0.0.1:\(server.port)/clip.mp4"
        expectOneClearLine(try CommandRunner.vitrine(["probe", "--timeout", "0.5", url]), naming: url, cause: "timed out")
    }

    @Test("usage errors exit with 64")
    func usage() throws {
        let both = try CommandRunner.vitrine(["thumbnails", "x.mp4", "--count", "2", "--times", "1", "--out", "/tmp/x"])
        #expect(both.status == 64)
        let badTime = try CommandRunner.vitrine(["thumbnails", "x.mp4", "--times", "1,abc", "--out", "/tmp/x"])
        #expect(badTime.status == 64)
        #expect(badTime.stderr.contains("\"abc\" is not a time"))
        // 1e300 s trapped converting to milliseconds; 0 and nan were taken as 1 ms.
        for timeout in ["1e300", "0", "nan"] {
            let probe = try CommandRunner.vitrine(["probe", "--timeout", timeout, "x.mp4"])
            #expect(probe.status == 64, "\(timeout): \(probe.stderr)")
            #expect(probe.stderr.contains("--timeout must be a positive number of seconds"), "\(probe.stderr)")
        }
        let forever = try CommandRunner.vitrine(["test-pattern", "--display", "headless", "--seconds", "nan"])
        #expect(forever.status == 64, "\(forever.stderr)")
    }

    @Test("thumbnails names why its output folder cannot be made, in the system's words")
    func unwritableOutput() throws {
        let clip = CommandRunner.root.appendingPathComponent("Fixtures/generated/queue1.mp4").path
        try #require(FileManager.default.fileExists(atPath: clip), "bash scripts/fixtures.sh makes the fixtures")
        let output = try CommandRunner.vitrine(["thumbnails", clip, "--times", "1", "--out", "/dev/null/frames"])
        #expect(output.status == 1)
        #expect(output.stderr.contains("/dev/null/frames: cannot create the output directory: Not a directory"), "\(output.stderr)")
    }

    @Test("a schedule's clock moved past the times it can be asked about is refused with 64, naming the option (it trapped)",
          arguments: [["--clock-offset", "1e12"], ["--clock-offset=9e9"], ["--clock-offset=-5e9"], ["--clock-step", "1e300=5"]])
    func clockPastAddressable(options: [String]) throws {
        let schedule = CommandRunner.root.appendingPathComponent("Schedules/demo.toml").path
        let output = try CommandRunner.vitrine(["play", schedule, "--display", "headless", "--no-audio", "--duration", "1"] + options)
        #expect(output.status == 64, "\(output.stderr)")
        let option = String(options[0].prefix { $0 != "=" })
        #expect(output.stderr.contains("\(option) "), "\(output.stderr)")
        #expect(option == "--clock-step" || output.stderr.contains("1900-01-01 to 2200-01-01 UTC"), "\(output.stderr)")
    }

    @Test("--help works everywhere and documents the exit status", arguments: [[], ["probe"], ["thumbnails"]])
    func help(subcommand: [String]) throws {
        let output = try CommandRunner.vitrine(subcommand + ["--help"])
        #expect(output.status == 0)
        #expect(output.stdout.contains("USAGE"))
        if !subcommand.isEmpty { #expect(output.stdout.contains("Exit status")) }
    }
}

enum FreePort {
    /// A TCP port on 127.0.0.1 with nothing listening (bound, then released).
    static func find() throws -> UInt16 { try SilentListener().port }

    /// Waits until something accepts connections on `port` (bounded: 100 tries of 50 ms).
    static func waitUntilListening(_ port: UInt16) {
        for _ in 0..<100 {
            if (try? CommandRunner.run("python3", ["-c", "import socket; socket.create_connection(('127.0.0.1', \(port)), 1)"]))?.status == 0 { return }
            usleep(50_000)
        }
    }

    /// A listening socket that never accepts or answers.
    final class SilentListener {
        let port: UInt16
        private let descriptor: Int32

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw POSIXError(.EIO) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(descriptor, 16) == 0 else { close(descriptor); throw POSIXError(.EADDRINUSE) }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            self.descriptor = descriptor
            port = UInt16(bigEndian: address.sin_port)
        }

        deinit { close(descriptor) }
    }
}
