public import MediaSinks

/// The player's settings on an appliance: `/etc/vitrine/vitrine.toml`, read by
/// `vitrine play --config FILE` and checked by `vitrine validate`. Every key is optional; the
/// command line overrides what it also gives. The format is documented in docs/configuration.md.
public struct Configuration: Sendable, Hashable {
    /// Where the file normally is.
    public static let defaultPath = "/etc/vitrine/vitrine.toml"
    /// Where state (persisted counters, the current schedule choice) goes by default.
    public static let defaultStateDirectory = "/var/lib/vitrine"

    /// The schedule to play (absolute, or relative to the configuration file's folder).
    public var schedule: String?
    /// Where the player keeps its state; created when missing.
    public var stateDirectory: String = Configuration.defaultStateDirectory
    /// Where the presentation log goes (JSON lines), if anywhere.
    public var presentationLog: String?
    public var display = Display()
    public var audio = Audio()
    /// `[import]`: schedule bundles from USB sticks.
    public var bundles = Bundles()
    /// `[inspector]`: the HTTP inspector; off unless `listen` is set.
    public var inspector = Inspector()

    /// `[inspector]`: remote status, logs, screenshot and metrics over HTTP(S) (docs/inspector.md).
    public struct Inspector: Sendable, Hashable {
        /// Where to listen; `nil`: the inspector is off.
        public var listen: ListenAddress?
        /// The bearer token's file (required with `listen`).
        public var tokenFile: String?
        /// PEM certificate chain and key: both, for HTTPS.
        public var tlsCertificate: String?
        public var tlsKey: String?
        /// Plain HTTP on an address other than loopback.
        public var allowPlainHTTP = false

        public init() {}
    }

    /// `ADDRESS:PORT` (`127.0.0.1:8080`, `0.0.0.0:8443`, `[::1]:8080`).
    public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Splits `ADDRESS:PORT` (IPv6 in brackets); `nil` when it is not one.
        public init?(parsing text: String) {
            let host: Substring, portText: Substring
            if text.hasPrefix("[") {
                guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else { return nil }
                host = text[text.index(after: text.startIndex)..<close]
                portText = text[text.index(close, offsetBy: 2)...]
            } else {
                guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else { return nil }
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, let port = Int(portText), (1...65_535).contains(port) else { return nil }
            self.host = String(host)
            self.port = port
        }

        public var isLoopback: Bool { host == "localhost" || host == "::1" || host.hasPrefix("127.") }

        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    /// `[import]`: where imported bundles live, whose signatures are trusted.
    public struct Bundles: Sendable, Hashable {
        public static let defaultDirectory = "/var/lib/vitrine/bundles"
        public static let defaultTrustedKeys = "/etc/vitrine/trusted-keys"

        /// The data partition's folder holding `current`, `previous` and `bundles/`.
        public var directory: String = Bundles.defaultDirectory
        /// The folder of trusted minisign public keys (`*.pub`).
        public var trustedKeys: String = Bundles.defaultTrustedKeys
        /// Accept bundles without a signature (a bad signature is refused regardless).
        public var acceptUnsigned = false
        /// Until a bundle is imported, say on screen how to configure the screen (a USB stick, the
        /// inspector's URL): for an appliance whose schedule is the built-in demo.
        public var setupHint = false
        /// Megabytes that must stay free on the data partition after an import.
        public var keepFreeMegabytes = 64

        public init() {}
    }

    /// `[display]`: which screen and how.
    public struct Display: Sendable, Hashable {
        /// `auto` (KMS when a screen is connected, else headless), `kms` or `headless`.
        public var kind: String?
        /// The DRM connector to use (`HDMI-A-1`); the first connected one when absent.
        public var connector: String?
        /// `WxH` or `WxH@Hz`; the screen's preferred mode when absent.
        public var mode: String?
        /// 0, 90, 180 or 270 degrees clockwise.
        public var rotation: Int?
        public var gravity: VideoGravity?
        /// This screen's part of a video wall (`wall` or `crop`), over what the schedule says.
        public var wall: WallTile?

        public init(kind: String? = nil, connector: String? = nil, mode: String? = nil, rotation: Int? = nil, gravity: VideoGravity? = nil,
                    wall: WallTile? = nil) {
            self.kind = kind
            self.connector = connector
            self.mode = mode
            self.rotation = rotation
            self.gravity = gravity
            self.wall = wall
        }
    }

    /// `[audio]`: where sound goes.
    public struct Audio: Sendable, Hashable {
        /// `false` plays without sound (as `--no-audio`).
        public var enabled: Bool = true
        /// The ALSA PCM (`default`, `hdmi:CARD=PCH,DEV=0`, `hw:0,3`).
        public var device: String?
        /// The master volume, 0...1 (with ``ambient``, the volume until the room is first measured).
        public var volume: Double?
        /// `[audio.ambient]`: the volume follows the room, measured with a microphone.
        public var ambient: Ambient?

        public init(enabled: Bool = true, device: String? = nil, volume: Double? = nil, ambient: Ambient? = nil) {
            self.enabled = enabled
            self.device = device
            self.volume = volume
            self.ambient = ambient
        }
    }

    /// `[audio.ambient]`: louder when the room is loud, softer when it is quiet and in the quiet
    /// hours (docs/audio.md says how the room is measured while the screen itself plays).
    public struct Ambient: Sendable, Hashable {
        /// The ALSA capture PCM of the microphone (`plughw:CARD=Mic,DEV=0`, `default`).
        public var device: String
        /// Room levels in dBFS (RMS at the microphone) for the quiet and the loud end.
        public var levelRange: ClosedRange<Double> = -60 ... -30
        /// The master volume, 0...1, at the quiet and the loud end.
        public var volumeRange: ClosedRange<Double> = 0.3 ... 1
        /// How far the volume may move in a second (0...1 scale).
        public var maximumChangePerSecond: Double = 0.05
        /// The room level's averaging time constant, in seconds.
        public var timeConstant: Double = 30
        /// The hours with a volume cap, if any.
        public var quietHours: QuietHours?
        /// The IANA time zone the quiet hours are in; `nil`: the schedule's (UTC for plain files).
        public var timeZone: String?

        public init(device: String) {
            self.device = device
        }
    }

    /// `quiet_hours = { start = "22:00", end = "07:00", volume = 0.2 }`.
    public struct QuietHours: Sendable, Hashable {
        /// Seconds after local midnight.
        public var start: Int
        public var end: Int
        /// The highest master volume during them.
        public var volume: Double

        public init(start: Int, end: Int, volume: Double) {
            self.start = start
            self.end = end
            self.volume = volume
        }
    }

    public init(schedule: String? = nil, stateDirectory: String = Configuration.defaultStateDirectory, presentationLog: String? = nil,
                display: Display = Display(), audio: Audio = Audio()) {
        self.schedule = schedule
        self.stateDirectory = stateDirectory
        self.presentationLog = presentationLog
        self.display = display
        self.audio = audio
    }
}
