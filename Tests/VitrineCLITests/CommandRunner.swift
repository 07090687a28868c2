import ChildProcesses
import Foundation

/// Runs the built `vitrine` binary and the FFmpeg tools, capturing their output.
enum CommandRunner {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutData: Data
    }

    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The path of a generated fixture.
    static func fixture(_ name: String) -> String { root.appendingPathComponent("Fixtures/generated/\(name)").path }

    static var fixturesAvailable: Bool { FileManager.default.fileExists(atPath: fixture("h264_aac.mp4")) }

    /// The `vitrine` executable: $VITRINE_BIN, else next to the test bundle (the build products directory).
    static let vitrine: String? = {
        if let path = ProcessInfo.processInfo.environment["VITRINE_BIN"] { return path }
        var candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("vitrine").path]
        for configuration in ["debug", "release"] {
            candidates.append(root.appendingPathComponent(".build/\(configuration)/vitrine").path)
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether a tool is on the PATH.
    static func hasTool(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(name)")
        }
    }

    static var canRun: Bool { fixturesAvailable && vitrine != nil && hasTool("ffprobe") && hasTool("ffmpeg") }

    /// Runs `vitrine arguments...`.
    static func vitrine(_ arguments: [String]) throws -> Output {
        try run(vitrine!, arguments)
    }

    /// Runs a program found on the PATH or by absolute path (posix_spawn: Foundation's `Process`
    /// can hang reaping a child while another is running).
    static func run(_ program: String, _ arguments: [String]) throws -> Output {
        let result = try ChildProcess.run(program, arguments)
        return Output(status: result.status, stdout: result.stdout, stderr: result.stderr, stdoutData: Data(result.standardOutput))
    }

    /// The PSNR in dB of two same-size images, measured by ffmpeg's psnr filter (infinity when identical).
    static func psnr(_ first: String, _ second: String) throws -> Double {
        let output = try run("ffmpeg", ["-hide_banner", "-nostdin", "-i", first, "-i", second, "-lavfi", "psnr", "-f", "null", "-"])
        guard let range = output.stderr.range(of: "average:") else { return -1 }
        let value = output.stderr[range.upperBound...].prefix { !$0.isWhitespace }
        return value == "inf" ? .infinity : Double(value) ?? -1
    }

    /// A fresh temporary directory.
    static func temporaryDirectory(_ name: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url.path
    }
}
