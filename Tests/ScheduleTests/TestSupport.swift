import ChildProcesses
import Foundation
import MediaTime
@testable import Scheduling

/// The package's root folder, found from this file's path.
let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

/// A media probe with fixed answers: durations by file name, everything else readable.
struct FixedInspector: MediaInspector {
    var durations: [String: MediaTime] = [:]
    var missing: Set<String> = []
    var unreadable: Set<String> = []

    func inspect(_ source: MediaSource) -> MediaInspection {
        let name = source.location.split(separator: "/").last.map(String.init) ?? source.location
        if missing.contains(name) { return .missing("no such file") }
        if unreadable.contains(name) { return .unreadable("Invalid data found when processing input") }
        if let d = durations[name] { return .duration(d) }
        return .readable
    }
}

func seconds(_ s: Int64) -> MediaTime { MediaTime(value: s, timescale: 1) }

/// Parses TOML text that must be valid; fails the test with the diagnostics otherwise.
func schedule(_ text: String, path: String = "/tmp/test.toml", durations: [String: MediaTime] = [:]) throws -> Schedule {
    let report = ScheduleValidator.validate(text: text, path: path, inspector: FixedInspector(durations: durations),
                                            referenceDate: LocalDate(year: 2026, month: 1, day: 1)!)
    guard let schedule = report.schedule else {
        throw ScheduleError(diagnostics: report.diagnostics)
    }
    return schedule
}

/// Diagnostics for TOML text.
func diagnostics(_ text: String, path: String = "/tmp/test.toml", inspector: FixedInspector = FixedInspector()) -> [ScheduleDiagnostic] {
    ScheduleValidator.validate(text: text, path: path, inspector: inspector, referenceDate: LocalDate(year: 2026, month: 1, day: 1)!).diagnostics
}

/// An instant from an ISO 8601 string with Z or an offset.
func instant(_ text: String) -> UTCInstant {
    guard let value = ZoneInfo.utc.parseInstant(text) else { fatalError("bad instant \(text)") }
    return value
}

func date(_ text: String) -> LocalDate { LocalDate(parsing: text)! }

/// Runs python3 with a script and a JSON input file; returns stdout.
func runPython(script: String, input: Data) throws -> Data {
    let inputURL = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-\(UUID().uuidString).json")
    try input.write(to: inputURL)
    defer { try? FileManager.default.removeItem(at: inputURL) }
    let result = try ChildProcess.run("python3", [script, inputURL.path])
    guard result.status == 0 else { throw PythonError(message: result.stderr) }
    return Data(result.standardOutput)
}

struct PythonError: Error, CustomStringConvertible {
    var message: String
    var description: String { "python3 failed: \(message)" }
}

/// SplitMix64: a small seeded generator so randomised tests are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
