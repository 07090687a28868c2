import Foundation
import Testing

/// Foundation's `Process` reaps children from a monitor thread with a blocking `wait4`: with a
/// short-lived tool (ffmpeg) and a long-lived one (an HTTP or sound server) started from the same
/// test process, a wait could hang a whole suite. Every test starts its children through
/// `ChildProcesses` (posix_spawn, reaped by its owner) instead; this keeps it that way.
@Suite("Test support")
struct ChildProcessUsageTests {
    @Test("no test starts a child with Foundation's Process; all go through posix_spawn (ChildProcesses)")
    func everyChildIsSpawnedWithPosixSpawn() throws {
        let tests = CommandRunner.root.appendingPathComponent("Tests")
        let files = try #require(FileManager.default.enumerator(atPath: tests.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") && !$0.hasPrefix("ChildProcesses/") && $0 != "VitrineCLITests/ChildProcessUsageTests.swift" }
        #expect(files.count > 50, "the test sources were not found under \(tests.path)")
        var offenders: [String] = []
        for file in files {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("Process()") || line.contains(".executableURL") || line.contains("waitUntilExit") {
                offenders.append("Tests/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        #expect(offenders.isEmpty, "Foundation Process in tests:\n\(offenders.joined(separator: "\n"))")
    }
}
