import FoundationEssentials
public import Scheduling

/// Reads and checks a configuration file the way schedules are checked: TOML 1.0 with positions,
/// unknown keys (with a "did you mean"), wrong types and out-of-range values each reported as
/// `file:line:column: error: …`, every problem in one pass.
public enum ConfigurationReader {
    /// What reading gave: the configuration when there is no error, and every diagnostic.
    public struct Result: Sendable {
        public var configuration: Configuration?
        public var diagnostics: [ScheduleDiagnostic]
        /// The file could not be read at all (missing, unreadable, not UTF-8).
        public var isUnreadable: Bool
    }

    static let topKeys = ["schedule", "state_directory", "presentation_log", "display", "audio", "import", "inspector"]
    static let inspectorKeys = ["listen", "token_file", "tls_certificate", "tls_key", "allow_plain_http"]
    static let importKeys = ["directory", "trusted_keys", "accept_unsigned", "keep_free_mb", "setup_hint"]
    static let displayKeys = ["kind", "connector", "mode", "rotation", "gravity", "wall", "crop"]
    static let audioKeys = ["enabled", "device", "volume", "ambient"]
    static let ambientKeys = ["device", "level_range", "volume_range", "max_change_per_second", "time_constant", "quiet_hours", "timezone"]
    static let quietHoursKeys = ["start", "end", "volume"]

    /// Reads the file at `path`.
    public static func read(path: String) -> Result {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "permission denied or not a regular file" : "no such file"
            return unreadable(path, "cannot read the configuration: \(reason)")
        }
        guard let text = String(validating: data, as: UTF8.self) else {
            return unreadable(path, "cannot read the configuration: not UTF-8 text")
        }
        return parse(text: text, path: path)
    }

    /// Decodes configuration `text`; `path` names the file in messages and is the base of relative paths.
    public static func parse(text: String, path: String) -> Result {
        let root: DocumentNode
        do {
            root = try TOMLPositionReader.read(text, file: path)
        } catch {
            let location = SourceLocation(file: path, line: error.line, column: error.column)
            return Result(configuration: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: location, "TOML syntax: \(error.message)")],
                          isUnreadable: false)
        }
        var decoder = Decoder(path: path)
        let configuration = decoder.decode(root)
        return Result(configuration: decoder.log.hasErrors ? nil : configuration, diagnostics: decoder.log.sorted, isUnreadable: false)
    }

    private static func unreadable(_ path: String, _ message: String) -> Result {
        Result(configuration: nil, diagnostics: [ScheduleDiagnostic(.error, .syntax, at: SourceLocation(file: path, line: 0, column: 0), message)],
               isUnreadable: true)
    }

    /// The checks, key by key.
    struct Decoder {
        let path: String
        var log = DiagnosticLog()

        mutating func decode(_ root: DocumentNode) -> Configuration {
            var configuration = Configuration()
            guard case .table(let table) = root.value else { return configuration }
            log.checkKeys(table, ConfigurationReader.topKeys, context: "the configuration")
            if let node = table["schedule"], let text = log.string(node, "schedule") { configuration.schedule = resolved(text) }
            if let node = table["state_directory"], let text = log.string(node, "state_directory") {
                if text.hasPrefix("/") { configuration.stateDirectory = text } else {
                    log.error(.invalidValue, node.location, "state_directory must be an absolute path, not \"\(text)\"")
                }
            }
            if let node = table["presentation_log"], let text = log.string(node, "presentation_log") {
                configuration.presentationLog = text == "-" ? text : resolved(text)
            }
            if let node = table["display"], let display = log.table(node, "display") {
                log.checkKeys(display, ConfigurationReader.displayKeys, context: "[display]")
                if let node = display["kind"], let kind = log.string(node, "kind") {
                    if ["auto", "kms", "headless"].contains(kind) { configuration.display.kind = kind } else {
                        log.error(.invalidValue, node.location, "kind must be \"auto\", \"kms\" or \"headless\", not \"\(kind)\"")
                    }
                }
                if let node = display["connector"], let connector = log.string(node, "connector") { configuration.display.connector = connector }
                if let node = display["mode"], let mode = log.string(node, "mode") {
                    if Self.isMode(mode) { configuration.display.mode = mode } else {
                        log.error(.invalidValue, node.location, "mode must be WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. \"1920x1080@60\"), not \"\(mode)\"")
                    }
                }
                if let node = display["rotation"], let degrees = log.integer(node, "rotation") {
                    if [0, 90, 180, 270].contains(degrees) { configuration.display.rotation = Int(degrees) } else {
                        log.error(.outOfRange, node.location, "rotation must be 0, 90, 180 or 270, not \(degrees)")
                    }
                }
                if let node = display["gravity"], let gravity = log.gravity(node) { configuration.display.gravity = gravity }
                if let wall = display["wall"], let crop = display["crop"] {
                    log.error(.invalidValue, crop.location, "give [display] wall or crop, not both (wall at line \(wall.location.line))")
                } else if let node = display["wall"] {
                    configuration.display.wall = log.wallTile(node)
                } else if let node = display["crop"] {
                    configuration.display.wall = log.wallCrop(node)
                }
            }
            if let node = table["audio"], let audio = log.table(node, "audio") {
                log.checkKeys(audio, ConfigurationReader.audioKeys, context: "[audio]")
                if let node = audio["enabled"], let enabled = log.bool(node, "enabled") { configuration.audio.enabled = enabled }
                if let node = audio["device"], let device = log.string(node, "device") { configuration.audio.device = device }
                if let node = audio["volume"], let volume = log.number(node, "volume") {
                    if (0...1).contains(volume) { configuration.audio.volume = volume } else {
                        log.error(.outOfRange, node.location, "volume must be between 0 and 1, not \(volume)")
                    }
                }
                if let node = audio["ambient"], let ambient = log.table(node, "ambient") {
                    configuration.audio.ambient = decodeAmbient(ambient, at: node)
                    if configuration.audio.ambient != nil, !configuration.audio.enabled {
                        log.warning(.invalidValue, node.location, "[audio.ambient] has no effect: the sound is off (enabled = false)")
                    }
                }
            }
            if let node = table["import"], let bundles = log.table(node, "import") {
                log.checkKeys(bundles, ConfigurationReader.importKeys, context: "[import]")
                if let path = absolutePath(bundles, "directory") { configuration.bundles.directory = path }
                if let path = absolutePath(bundles, "trusted_keys") { configuration.bundles.trustedKeys = path }
                if let node = bundles["accept_unsigned"], let accept = log.bool(node, "accept_unsigned") {
                    configuration.bundles.acceptUnsigned = accept
                }
                if let node = bundles["setup_hint"], let hint = log.bool(node, "setup_hint") {
                    configuration.bundles.setupHint = hint
                }
                if let node = bundles["keep_free_mb"], let megabytes = log.integer(node, "keep_free_mb") {
                    if (0...1_000_000).contains(megabytes) { configuration.bundles.keepFreeMegabytes = Int(megabytes) } else {
                        log.error(.outOfRange, node.location, "keep_free_mb must be between 0 and 1000000, not \(megabytes)")
                    }
                }
            }
            if let node = table["inspector"], let inspector = log.table(node, "inspector") {
                log.checkKeys(inspector, ConfigurationReader.inspectorKeys, context: "[inspector]")
                if let node = inspector["listen"], let text = log.string(node, "listen") {
                    if let address = Configuration.ListenAddress(parsing: text) { configuration.inspector.listen = address } else {
                        log.error(.invalidValue, node.location, "listen must be ADDRESS:PORT (e.g. \"0.0.0.0:8443\" or \"[::1]:8080\"), not \"\(text)\"")
                    }
                }
                if let node = inspector["token_file"], let text = log.string(node, "token_file") { configuration.inspector.tokenFile = resolved(text) }
                if let node = inspector["tls_certificate"], let text = log.string(node, "tls_certificate") { configuration.inspector.tlsCertificate = resolved(text) }
                if let node = inspector["tls_key"], let text = log.string(node, "tls_key") { configuration.inspector.tlsKey = resolved(text) }
                if let node = inspector["allow_plain_http"], let allow = log.bool(node, "allow_plain_http") { configuration.inspector.allowPlainHTTP = allow }
                let settings = configuration.inspector
                if let listen = settings.listen {
                    if settings.tokenFile == nil {
                        log.error(.invalidValue, node.location, "[inspector] with listen needs token_file (the bearer token's file)")
                    }
                    if (settings.tlsCertificate == nil) != (settings.tlsKey == nil) {
                        log.error(.invalidValue, node.location, "[inspector] needs both tls_certificate and tls_key, or neither")
                    } else if settings.tlsCertificate == nil, !listen.isLoopback, !settings.allowPlainHTTP {
                        log.error(.invalidValue, node.location,
                                  "[inspector] listens on \(listen) without TLS: the token would cross the network in clear text; set tls_certificate and tls_key, or allow_plain_http = true")
                    }
                }
            }
            return configuration
        }

        /// `[audio.ambient]`; `nil` (with errors logged) when its device is missing.
        mutating func decodeAmbient(_ table: DocumentTable, at node: DocumentNode) -> Configuration.Ambient? {
            log.checkKeys(table, ConfigurationReader.ambientKeys, context: "[audio.ambient]")
            var device: String?
            if let node = table["device"], let text = log.string(node, "device") {
                if text.isEmpty { log.error(.invalidValue, node.location, "device must name an ALSA capture PCM, e.g. \"plughw:CARD=Mic,DEV=0\"") } else {
                    device = text
                }
            } else if table["device"] == nil {
                log.error(.missingKey, node.location, "[audio.ambient] needs device: the ALSA capture PCM of the microphone")
            }
            var ambient = Configuration.Ambient(device: device ?? "")
            if let node = table["level_range"], let range = numberPair(node, "level_range") {
                if range.0 < range.1, range.0 >= -160, range.1 <= 0 { ambient.levelRange = range.0...range.1 } else {
                    log.error(.outOfRange, node.location,
                              "level_range must be two levels in dBFS, quiet before loud, within -160...0 (e.g. [-60, -30]), not [\(range.0), \(range.1)]")
                }
            }
            if let node = table["volume_range"], let range = numberPair(node, "volume_range") {
                if range.0 <= range.1, range.0 >= 0, range.1 <= 1 { ambient.volumeRange = range.0...range.1 } else {
                    log.error(.outOfRange, node.location,
                              "volume_range must be two volumes within 0...1, the quiet room's first (e.g. [0.3, 1.0]), not [\(range.0), \(range.1)]")
                }
            }
            if let node = table["max_change_per_second"], let rate = log.number(node, "max_change_per_second") {
                if rate > 0, rate <= 1 { ambient.maximumChangePerSecond = rate } else {
                    log.error(.outOfRange, node.location, "max_change_per_second must be above 0 and at most 1, not \(rate)")
                }
            }
            if let node = table["time_constant"], let seconds = durationSeconds(node, "time_constant") {
                if seconds >= 0.1, seconds <= 3_600 { ambient.timeConstant = seconds } else {
                    log.error(.outOfRange, node.location, "time_constant must be between 0.1 s and 1 h, not \(seconds) s")
                }
            }
            if let node = table["quiet_hours"], let quiet = log.table(node, "quiet_hours") {
                log.checkKeys(quiet, ConfigurationReader.quietHoursKeys, context: "quiet_hours")
                var times: [String: Int] = [:]
                for key in ["start", "end"] {
                    guard let timeNode = quiet[key] else {
                        log.error(.missingKey, node.location, "quiet_hours needs \(key), a time of day such as \"22:00\"")
                        continue
                    }
                    times[key] = timeOfDay(timeNode, key)
                }
                let start = times["start"], end = times["end"]
                var volume: Double?
                if let volumeNode = quiet["volume"] {
                    if let value = log.number(volumeNode, "volume") {
                        if (0...1).contains(value) { volume = value } else {
                            log.error(.outOfRange, volumeNode.location, "the quiet hours' volume must be between 0 and 1, not \(value)")
                        }
                    }
                } else {
                    log.error(.missingKey, node.location, "quiet_hours needs volume: the highest volume during them, 0...1")
                }
                if let start, let end, start == end {
                    log.error(.invalidValue, node.location, "quiet_hours starts and ends at the same time: give two different times")
                } else if let start, let end, let volume {
                    ambient.quietHours = Configuration.QuietHours(start: start, end: end, volume: volume)
                }
            }
            if let node = table["timezone"], let name = log.string(node, "timezone") {
                do {
                    _ = try ZoneInfo(identifier: name)
                    ambient.timeZone = name
                } catch {
                    log.error(.unknownTimeZone, node.location, "timezone \"\(name)\": \(error)")
                }
            }
            return device == nil ? nil : ambient
        }

        /// `[low, high]`: an array of two numbers.
        mutating func numberPair(_ node: DocumentNode, _ key: String) -> (Double, Double)? {
            guard let values = log.array(node, key) else { return nil }
            guard values.count == 2 else {
                log.error(.invalidValue, node.location, "\(key) must be two numbers [low, high], not \(values.count)")
                return nil
            }
            guard let low = log.number(values[0], key), let high = log.number(values[1], key) else { return nil }
            return (low, high)
        }

        /// A duration in seconds: a number, or a string such as "30s", "2m", "00:00:30".
        mutating func durationSeconds(_ node: DocumentNode, _ key: String) -> Double? {
            switch node.value {
            case .integer, .float:
                return log.number(node, key)
            case .string(let text):
                if let duration = TimeSyntax.duration(text) { return duration.seconds }
                log.error(.malformedDuration, node.location, "\(key) \"\(text)\" is not a duration such as \"30s\", \"2m\" or \"00:00:30\"")
                return nil
            default:
                log.wrongType(node, key, "a duration such as \"30s\" or a number of seconds")
                return nil
            }
        }

        /// A time of day as seconds after midnight: a TOML local time (`22:00:00`) or a string ("22:00").
        mutating func timeOfDay(_ node: DocumentNode, _ key: String) -> Int? {
            switch node.value {
            case .time(let time): return time.secondsIntoDay
            case .string(let text):
                if let time = LocalTime(parsing: text), time.secondsIntoDay < 86_400 { return time.secondsIntoDay }
                log.error(.malformedTimeOfDay, node.location, "\(key) \"\(text)\" is not a time of day HH:MM or HH:MM:SS (00:00...23:59)")
                return nil
            default:
                log.wrongType(node, key, "a time of day such as \"22:00\"")
                return nil
            }
        }

        /// The absolute path at `key`, if given (a relative one is an error).
        mutating func absolutePath(_ table: DocumentTable, _ key: String) -> String? {
            guard let node = table[key], let text = log.string(node, key) else { return nil }
            guard text.hasPrefix("/") else {
                log.error(.invalidValue, node.location, "\(key) must be an absolute path, not \"\(text)\"")
                return nil
            }
            return text
        }

        /// A path relative to the configuration file's folder, made absolute.
        func resolved(_ text: String) -> String {
            guard !text.hasPrefix("/") else { return text }
            let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? FileManager.default.currentDirectoryPath
            return folder + "/" + text
        }

        static func isMode(_ text: String) -> Bool {
            let parts = text.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { return false }
            if parts.count == 2 { guard let rate = Double(parts[1]), rate > 0, rate <= 480 else { return false } }
            let size = parts[0].split(separator: "x", omittingEmptySubsequences: false)
            guard size.count == 2, let width = Int(size[0]), let height = Int(size[1]) else { return false }
            return (1...16_384).contains(width) && (1...16_384).contains(height)
        }
    }
}
