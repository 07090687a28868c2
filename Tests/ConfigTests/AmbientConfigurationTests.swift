import Config
import Testing

@Suite("Configuration: [audio.ambient]")
struct AmbientConfigurationTests {
    @Test("every key of [audio.ambient] is read, times of day as strings or TOML times")
    func readsEverything() throws {
        let text = """
            [audio]
            device = "hdmi:CARD=PCH,DEV=0"
            volume = 0.7

            [audio.ambient]
            device = "plughw:CARD=Mic,DEV=0"
            level_range = [-55, -25.5]
            volume_range = [0.25, 0.9]
            max_change_per_second = 0.02
            time_constant = "45s"
            quiet_hours = { start = "22:30", end = 07:00:00, volume = 0.3 }
            timezone = "Europe/Paris"
            """
        let result = ConfigurationReader.parse(text: text, path: "/etc/vitrine/vitrine.toml")
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics)")
        let ambient = try #require(result.configuration?.audio.ambient)
        #expect(ambient.device == "plughw:CARD=Mic,DEV=0")
        #expect(ambient.levelRange == -55 ... -25.5)
        #expect(ambient.volumeRange == 0.25...0.9)
        #expect(ambient.maximumChangePerSecond == 0.02)
        #expect(ambient.timeConstant == 45)
        #expect(ambient.quietHours == Configuration.QuietHours(start: 22 * 3_600 + 30 * 60, end: 7 * 3_600, volume: 0.3))
        #expect(ambient.timeZone == "Europe/Paris")
        #expect(result.configuration?.audio.volume == 0.7)
    }

    @Test("a device alone takes the defaults")
    func defaults() throws {
        let result = ConfigurationReader.parse(text: "[audio.ambient]\ndevice = \"default\"\n", path: "vitrine.toml")
        let ambient = try #require(result.configuration?.audio.ambient)
        #expect(ambient == Configuration.Ambient(device: "default"))
        #expect(ambient.levelRange == -60 ... -30)
        #expect(ambient.volumeRange == 0.3...1)
        #expect(ambient.timeConstant == 30)
        #expect(ambient.quietHours == nil)
        #expect(ConfigurationReader.parse(text: "", path: "vitrine.toml").configuration?.audio.ambient == nil)
    }

    @Test("every problem in [audio.ambient] is reported at its file:line:column")
    func errors() {
        let text = """
            [audio.ambient]
            devise = "plughw:1"
            level_range = [-30, -60]
            volume_range = [0.2, 1.5]
            max_change_per_second = 0
            time_constant = "soon"
            quiet_hours = { start = "25:00", volume = 2 }
            timezone = "Mars/Olympus"
            """
        let result = ConfigurationReader.parse(text: text, path: "vitrine.toml")
        #expect(result.configuration == nil)
        let lines = result.diagnostics.map(\.description)
        #expect(Array(lines.dropLast()) == [
            "vitrine.toml:1:1: error: [audio.ambient] needs device: the ALSA capture PCM of the microphone",
            "vitrine.toml:2:1: error: unknown key \"devise\" in [audio.ambient] (did you mean \"device\"?)",
            "vitrine.toml:3:1: error: level_range must be two levels in dBFS, quiet before loud, within -160...0 (e.g. [-60, -30]), not [-30.0, -60.0]",
            "vitrine.toml:4:1: error: volume_range must be two volumes within 0...1, the quiet room's first (e.g. [0.3, 1.0]), not [0.2, 1.5]",
            "vitrine.toml:5:1: error: max_change_per_second must be above 0 and at most 1, not 0.0",
            "vitrine.toml:6:1: error: time_constant \"soon\" is not a duration such as \"30s\", \"2m\" or \"00:00:30\"",
            "vitrine.toml:7:1: error: quiet_hours needs end, a time of day such as \"22:00\"",
            "vitrine.toml:7:17: error: start \"25:00\" is not a time of day HH:MM or HH:MM:SS (00:00...23:59)",
            "vitrine.toml:7:34: error: the quiet hours' volume must be between 0 and 1, not 2.0",
        ], "\(lines)")
        #expect(lines.last?.hasPrefix("vitrine.toml:8:1: error: timezone \"Mars/Olympus\": ") == true, "\(lines)")
    }

    @Test("an ambient table with the sound off is a warning, not an error")
    func ambientWithoutSound() throws {
        let result = ConfigurationReader.parse(text: "[audio]\nenabled = false\n[audio.ambient]\ndevice = \"default\"\n", path: "vitrine.toml")
        #expect(result.configuration != nil)
        #expect(result.diagnostics.map(\.description) == [
            "vitrine.toml:3:1: warning: [audio.ambient] has no effect: the sound is off (enabled = false)"
        ])
    }
}
