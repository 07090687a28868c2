import Config
import MediaSinks
import Scheduling
import Testing

@Suite("Configuration file")
struct ConfigurationReaderTests {
    @Test("every key is read; relative paths resolve against the file's folder")
    func readsEverything() throws {
        let text = """
            schedule = "schedules/lobby.toml"
            state_directory = "/var/lib/vitrine"
            presentation_log = "/var/log/vitrine/presentation.jsonl"

            [display]
            kind = "kms"
            connector = "HDMI-A-1"
            mode = "1920x1080@60"
            rotation = 90
            gravity = "fill"

            [audio]
            device = "hdmi:CARD=PCH,DEV=0"
            volume = 0.8

            [import]
            directory = "/data/bundles"
            trusted_keys = "/etc/vitrine/keys"
            accept_unsigned = true
            keep_free_mb = 512
            """
        let result = ConfigurationReader.parse(text: text, path: "/etc/vitrine/vitrine.toml")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let configuration = try #require(result.configuration)
        #expect(configuration.schedule == "/etc/vitrine/schedules/lobby.toml")
        #expect(configuration.stateDirectory == "/var/lib/vitrine")
        #expect(configuration.presentationLog == "/var/log/vitrine/presentation.jsonl")
        #expect(configuration.display == .init(kind: "kms", connector: "HDMI-A-1", mode: "1920x1080@60", rotation: 90, gravity: .resizeAspectFill))
        #expect(configuration.audio == .init(enabled: true, device: "hdmi:CARD=PCH,DEV=0", volume: 0.8))
        #expect(configuration.bundles.directory == "/data/bundles")
        #expect(configuration.bundles.trustedKeys == "/etc/vitrine/keys")
        #expect(configuration.bundles.acceptUnsigned)
        #expect(configuration.bundles.keepFreeMegabytes == 512)
    }

    @Test("an empty file is the defaults")
    func defaults() throws {
        let configuration = try #require(ConfigurationReader.parse(text: "", path: "/etc/vitrine/vitrine.toml").configuration)
        #expect(configuration == Configuration())
        #expect(configuration.stateDirectory == "/var/lib/vitrine")
    }

    @Test("every problem is reported with file:line:column, in file order, and nothing is returned")
    func errors() {
        let text = """
            schedul = "a.toml"
            state_directory = "relative/dir"
            [display]
            kind = "wayland"
            mode = "1920by1080"
            rotation = 45
            gravity = 3
            [audio]
            enabled = "yes"
            volume = 2.5
            [import]
            directory = "bundles"
            keep_free_mb = -1
            """
        let result = ConfigurationReader.parse(text: text, path: "vitrine.toml")
        #expect(result.configuration == nil)
        let lines = result.diagnostics.map(\.description)
        #expect(lines == [
            "vitrine.toml:1:1: error: unknown key \"schedul\" in the configuration (did you mean \"schedule\"?)",
            "vitrine.toml:2:1: error: state_directory must be an absolute path, not \"relative/dir\"",
            "vitrine.toml:4:1: error: kind must be \"auto\", \"kms\" or \"headless\", not \"wayland\"",
            "vitrine.toml:5:1: error: mode must be WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. \"1920x1080@60\"), not \"1920by1080\"",
            "vitrine.toml:6:1: error: rotation must be 0, 90, 180 or 270, not 45",
            "vitrine.toml:7:1: error: \"gravity\" must be a string, not an integer",
            "vitrine.toml:9:1: error: \"enabled\" must be true or false, not a string",
            "vitrine.toml:10:1: error: volume must be between 0 and 1, not 2.5",
            "vitrine.toml:12:1: error: directory must be an absolute path, not \"bundles\"",
            "vitrine.toml:13:1: error: keep_free_mb must be between 0 and 1000000, not -1",
        ], "\(lines)")
    }

    @Test("a TOML syntax error names its position; a missing file is unreadable")
    func unreadable() {
        let syntax = ConfigurationReader.parse(text: "schedule = \"a.toml\nx = 1", path: "vitrine.toml")
        #expect(syntax.diagnostics.first?.description.hasPrefix("vitrine.toml:1:") == true)
        #expect(syntax.diagnostics.first?.description.contains("TOML syntax") == true)
        let missing = ConfigurationReader.read(path: "/nonexistent/vitrine.toml")
        #expect(missing.isUnreadable)
        #expect(missing.diagnostics.first?.message == "cannot read the configuration: no such file")
    }
}
