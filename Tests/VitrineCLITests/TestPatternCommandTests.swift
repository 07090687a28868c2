import Foundation
import Testing

/// `vitrine test-pattern --animate --frames N`: flips counted over however long they take, which is
/// what the VM proof relies on when the emulated screen is slow.
@Suite("test-pattern", .enabled(if: CommandRunner.vitrine != nil, "needs the vitrine binary"))
struct TestPatternCommandTests {
    @Test("--frames reports once that many frames were presented and keeps the last one up")
    func framesReportedAtOnce() throws {
        // --seconds is a deadline here: the report must come from the frame count, and the process
        // then holds the picture until the deadline, so it runs for all of it.
        let output = try CommandRunner.vitrine(
            ["test-pattern", "--display", "headless", "--mode", "320x180@60", "--animate", "--frames", "6", "--seconds", "3"])
        #expect(output.status == 0, "stderr: \(output.stderr)")
        let reports = output.stdout.split(separator: "\n").filter { $0.contains("vitrine: presented ") }
        #expect(reports.count == 1, "stdout: \(output.stdout)")
        let count = reports.first.flatMap { line in
            line.split(separator: " ").dropFirst(2).first.flatMap { Int($0) }
        }
        #expect(count.map { $0 >= 6 && $0 < 6 + 4 } == true, "stdout: \(output.stdout)")
    }

    @Test("--frames fails, naming the shortfall, when the deadline passes first")
    func framesDeadline() throws {
        // 100,000 frames at 60 Hz cannot be presented in half a second.
        let output = try CommandRunner.vitrine(
            ["test-pattern", "--display", "headless", "--mode", "320x180@60", "--animate", "--frames", "100000", "--seconds", "0.5"])
        #expect(output.status == 1)
        #expect(output.stderr.contains("of 100000 frames were presented"), "stderr: \(output.stderr)")
    }

    @Test("--frames without --animate is a usage error")
    func framesNeedAnimate() throws {
        let output = try CommandRunner.vitrine(["test-pattern", "--display", "headless", "--frames", "5"])
        #expect(output.status == 64)
        #expect(output.stderr.contains("--frames counts animated frames"), "stderr: \(output.stderr)")
    }
}
