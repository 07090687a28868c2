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
