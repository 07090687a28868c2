import ChildProcesses
import Foundation
import Testing

/// `--config FILE` for play and validate, run as an operator would.
@Suite("Configuration file on the command line")
struct ConfigurationCommandTests {
    static func fixture(_ name: String) -> String {
        ScheduleCommandsTests.root.appendingPathComponent("Fixtures/generated/\(name)").path
    }

    /// A schedule playing queue1.mp4 as its fallback, alone in a fresh folder.
    static func showSchedule() throws -> URL {
        try ScheduleCommandsTests.temporaryFile("""
            version = 1
            timezone = "UTC"
            fallback = "main"
            [[playlists.main.items]]
            video = "\(fixture("queue1.mp4"))"
            """, name: "show.toml")
    }

    @Test("validate --config checks the file, then the schedule it names")
    func validateConfiguration() throws {
        let schedule = try Self.showSchedule()
        defer { try? FileManager.default.removeItem(at: schedule.deletingLastPathComponent()) }
        let folder = schedule.deletingLastPathComponent()
        let good = folder.appendingPathComponent("vitrine.toml")
        try """
            schedule = "show.toml"
            [display]
            kind = "headless"
            [audio]
            enabled = false
            """.write(to: good, atomically: true, encoding: .utf8)
        let valid = try ScheduleCommandsTests.vitrine(["validate", good.path])
        #expect(valid.status == 0, "\(valid.output)\(valid.errors)")
        #expect(valid.output.contains("\(good.path): valid; checking its schedule \(schedule.path)"))
        #expect(valid.output.contains("\(schedule.path): valid"))

        let bad = folder.appendingPathComponent("player.conf")
        try """
            schedule = "show.toml"
            [display]
            knid = "kms"
            """.write(to: bad, atomically: true, encoding: .utf8)
        let invalid = try ScheduleCommandsTests.vitrine(["validate", "--config", bad.path])
        #expect(invalid.status == 1)
        #expect(invalid.output.contains("\(bad.path):3:1: error: unknown key \"knid\" in [display] (did you mean \"kind\"?)"))
        let missing = try ScheduleCommandsTests.vitrine(["validate", "--config", folder.appendingPathComponent("none.toml").path])
        #expect(missing.status == 2)
    }

    @Test("play --config plays the configuration's schedule with its display and audio settings; bad settings stop it with file:line:column")
    func playConfiguration() throws {
        let schedule = try Self.showSchedule()
        let folder = schedule.deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        let configuration = folder.appendingPathComponent("vitrine.toml")
        let log = folder.appendingPathComponent("presentation.jsonl")
        try """
            schedule = "show.toml"
            presentation_log = "presentation.jsonl"
            [display]
            kind = "headless"
            mode = "320x240@25"
            [audio]
            enabled = false
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let run = try ScheduleCommandsTests.vitrine(["play", "--config", configuration.path, "--duration", "1"])
        #expect(run.status == 0, "\(run.errors)")
        #expect(run.errors.contains("headless 320x240@25"), "\(run.errors)")
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains { $0.contains("\"source\":\"\(Self.fixture("queue1.mp4"))\"") && $0.contains("\"pts\"") })

        try """
            schedule = "show.toml"
            [audio]
            volume = 3
            """.write(to: configuration, atomically: true, encoding: .utf8)
        let rejected = try ScheduleCommandsTests.vitrine(["play", "--config", configuration.path, "--duration", "1"])
        #expect(rejected.status == 1)
        #expect(rejected.errors.contains("\(configuration.path):3:1: error: volume must be between 0 and 1, not 3.0"), "\(rejected.errors)")
    }
}
