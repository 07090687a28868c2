import FoundationEssentials
import MediaSinks
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

    static let topKeys = ["schedule", "state_directory", "presentation_log", "display", "audio"]
    static let displayKeys = ["kind", "connector", "mode", "rotation", "gravity"]
    static let audioKeys = ["enabled", "device", "volume"]

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
            checkKeys(table, ConfigurationReader.topKeys, context: "the configuration")
            if let node = table["schedule"], let text = string(node, "schedule") { configuration.schedule = resolved(text) }
            if let node = table["state_directory"], let text = string(node, "state_directory") {
                if text.hasPrefix("/") { configuration.stateDirectory = text } else {
                    log.error(.invalidValue, node.location, "state_directory must be an absolute path, not \"\(text)\"")
                }
            }
            if let node = table["presentation_log"], let text = string(node, "presentation_log") {
                configuration.presentationLog = text == "-" ? text : resolved(text)
            }
            if let node = table["display"], let display = self.table(node, "[display]") {
                checkKeys(display, ConfigurationReader.displayKeys, context: "[display]")
                if let node = display["kind"], let kind = string(node, "kind") {
                    if ["auto", "kms", "headless"].contains(kind) { configuration.display.kind = kind } else {
                        log.error(.invalidValue, node.location, "kind must be \"auto\", \"kms\" or \"headless\", not \"\(kind)\"")
                    }
                }
                if let node = display["connector"], let connector = string(node, "connector") { configuration.display.connector = connector }
                if let node = display["mode"], let mode = string(node, "mode") {
                    if Self.isMode(mode) { configuration.display.mode = mode } else {
                        log.error(.invalidValue, node.location, "mode must be WIDTHxHEIGHT or WIDTHxHEIGHT@HZ (e.g. \"1920x1080@60\"), not \"\(mode)\"")
                    }
                }
                if let node = display["rotation"], let degrees = integer(node, "rotation") {
                    if [0, 90, 180, 270].contains(degrees) { configuration.display.rotation = Int(degrees) } else {
                        log.error(.outOfRange, node.location, "rotation must be 0, 90, 180 or 270, not \(degrees)")
                    }
                }
                if let node = display["gravity"], let text = string(node, "gravity") {
                    if let gravity = VideoGravity(rawValue: text) { configuration.display.gravity = gravity } else {
                        log.error(.invalidValue, node.location, "gravity must be \"fit\", \"fill\" or \"stretch\", not \"\(text)\"")
                    }
                }
            }
            if let node = table["audio"], let audio = self.table(node, "[audio]") {
                checkKeys(audio, ConfigurationReader.audioKeys, context: "[audio]")
                if let node = audio["enabled"] {
                    if case .bool(let enabled) = node.value { configuration.audio.enabled = enabled } else {
                        log.error(.wrongType, node.location, "enabled must be true or false, not \(node.typeName)")
                    }
                }
                if let node = audio["device"], let device = string(node, "device") { configuration.audio.device = device }
                if let node = audio["volume"] {
                    let volume: Double?
                    switch node.value {
                    case .float(let value): volume = value
                    case .integer(let value): volume = Double(value)
                    default:
                        log.error(.wrongType, node.location, "volume must be a number, not \(node.typeName)")
                        volume = nil
                    }
                    if let volume {
                        if (0...1).contains(volume) { configuration.audio.volume = volume } else {
                            log.error(.outOfRange, node.location, "volume must be between 0 and 1, not \(volume)")
                        }
                    }
                }
            }
            return configuration
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

        mutating func checkKeys(_ table: DocumentTable, _ known: [String], context: String) {
            for key in table.keys where !known.contains(key) {
                let hint = nearestMatch(to: key, in: known).map { " (did you mean \"\($0)\"?)" } ?? ""
                log.error(.unknownKey, table.keyLocations[key] ?? SourceLocation(file: path, line: 0, column: 0),
                          "unknown key \"\(key)\" in \(context)\(hint)")
            }
        }

        mutating func string(_ node: DocumentNode, _ key: String) -> String? {
            if case .string(let text) = node.value { return text }
            log.error(.wrongType, node.location, "\(key) must be a string, not \(node.typeName)")
            return nil
        }

        mutating func integer(_ node: DocumentNode, _ key: String) -> Int64? {
            if case .integer(let value) = node.value { return value }
            log.error(.wrongType, node.location, "\(key) must be an integer, not \(node.typeName)")
            return nil
        }

        mutating func table(_ node: DocumentNode, _ name: String) -> DocumentTable? {
            if case .table(let table) = node.value { return table }
            log.error(.wrongType, node.location, "\(name) must be a table, not \(node.typeName)")
            return nil
        }
    }
}
