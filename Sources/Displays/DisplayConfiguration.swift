public import Logging
public import MediaSinks
public import MediaTime
#if canImport(Glibc)
import Glibc
#endif

/// What `vitrine play --display … --mode … --rotation … --gravity … --crop …` asks for.
public struct DisplayConfiguration: Sendable, Hashable {
    /// Which display to open.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// EGL surfaceless: no screen, screenshots only.
        case headless
        /// DRM/KMS on a real (or virtual) card.
        case kms
        /// KMS when a usable card exists, else headless (the log says which).
        case auto
    }

    public var kind: Kind
    /// The mode; `nil` for the connector's preferred mode (KMS) or 1920x1080@60 (headless).
    public var mode: DisplayMode?
    /// Whether ``mode`` named a refresh rate (`--mode 1920x1080` matches any rate on KMS).
    public var modeRateGiven: Bool
    public var rotation: Rotation
    public var gravity: VideoGravity
    /// A card path for KMS (`/dev/dri/card1`); `nil` tries each.
    public var card: String?
    /// A connector name for KMS (`HDMI-A-1`); `nil` takes the first connected one.
    public var connector: String?
    /// This screen's part of a video wall's picture (docs/video-walls.md); ``WallTile/whole`` by default.
    public var wall: WallTile

    public init(kind: Kind = .auto, mode: DisplayMode? = nil, modeRateGiven: Bool = true, rotation: Rotation = .none,
                gravity: VideoGravity = .resizeAspect, card: String? = nil, connector: String? = nil, wall: WallTile = .whole) {
        self.kind = kind
        self.mode = mode
        self.modeRateGiven = modeRateGiven
        self.rotation = rotation
        self.gravity = gravity
        self.card = card
        self.connector = connector
        self.wall = wall
    }

    /// Builds a configuration from the command line's words; the error says which option is wrong and
    /// what it accepts.
    public init(display: String = "auto", mode: String? = nil, rotation: String = "0", gravity: String = "fit",
                card: String? = nil, connector: String? = nil, crop: String? = nil) throws(DisplayConfigurationError) {
        guard let kind = Kind(rawValue: display) else {
            throw DisplayConfigurationError(option: "--display", value: display, expected: "headless, kms or auto")
        }
        var parsedMode: DisplayMode? = nil
        if let mode {
            do { parsedMode = try DisplayMode(parsing: mode) } catch {
                throw DisplayConfigurationError(option: "--mode", value: mode, expected: "WxH or WxH@Hz, e.g. 1920x1080@60")
            }
        }
        guard let degrees = Int(rotation), let turn = Rotation(degrees: degrees), [0, 90, 180, 270].contains(degrees) else {
            throw DisplayConfigurationError(option: "--rotation", value: rotation, expected: "0, 90, 180 or 270")
        }
        guard let fill = VideoGravity(commandLineName: gravity) else {
            throw DisplayConfigurationError(option: "--gravity", value: gravity, expected: "fit, fill or stretch")
        }
        var wall = WallTile.whole
        if let crop {
            let numbers = crop.split(separator: ",", omittingEmptySubsequences: false).map { Double(String($0.filter { $0 != " " })) }
            guard numbers.count == 4, let x = numbers[0], let y = numbers[1], let width = numbers[2], let height = numbers[3],
                  let tile = WallTile(x: x, y: y, width: width, height: height) else {
                throw DisplayConfigurationError(option: "--crop", value: crop, expected:
                    "X,Y,WIDTH,HEIGHT in fractions of the whole wall's picture, inside it, e.g. 0.5,0,0.5,1")
            }
            wall = tile
        }
        self.init(kind: kind, mode: parsedMode, modeRateGiven: mode?.contains("@") ?? true, rotation: turn,
                  gravity: fill, card: card, connector: connector, wall: wall)
    }
}

/// A display option the command line could not use.
public struct DisplayConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public var option: String
    public var value: String
    public var expected: String
    public init(option: String, value: String, expected: String) {
        self.option = option
        self.value = value
        self.expected = expected
    }

    public var description: String { "\(option) '\(value)': expected \(expected)" }
}

/// Opens the display a configuration asks for.
///
/// `auto` tries KMS and falls back to headless only when no usable card exists (no DRM device, no
/// connected screen); a card held by another process or a missing mode is an error, not a silent
/// fallback. The choice is logged at `info`. With `startsRendering` false the display's render
/// thread waits for ``Display/startRendering()``.
public func makeDisplay(
    _ configuration: DisplayConfiguration, startsRendering: Bool = true, logger: Logger = Logger(label: "vitrine.display")
) throws(DisplayError) -> any Display {
    func headless() throws(DisplayError) -> any Display {
        try HeadlessDisplay(mode: configuration.mode ?? .fullHD, rotation: configuration.rotation,
                            gravity: configuration.gravity, wall: configuration.wall, startsRendering: startsRendering, logger: logger)
    }
    func kms() throws(DisplayError) -> any Display {
        try KMSDisplay(options: KMSDisplay.Options(card: configuration.card, connector: configuration.connector,
                                                   mode: configuration.mode, modeRateGiven: configuration.modeRateGiven),
                       rotation: configuration.rotation, gravity: configuration.gravity, wall: configuration.wall,
                       startsRendering: startsRendering, logger: logger)
    }
    let display: any Display
    switch configuration.kind {
    case .headless:
        display = try headless()
    case .kms:
        display = try kms()
    case .auto:
        do {
            display = try kms()
        } catch .noDevice(let tried) {
            logger.info("display: no usable KMS device, rendering headless", metadata: ["tried": "\(tried.joined(separator: "; "))"])
            display = try headless()
        }
    }
    logger.info("display: \(display.name)", metadata: ["rotation": "\(configuration.rotation.rawValue)", "gravity": "\(configuration.gravity.rawValue)"])
    return display
}

/// `--screenshot-at TIME=PATH`: a screenshot of the frame presented at item time TIME (seconds), written to PATH.
public struct ScreenshotRequest: Sendable, Hashable {
    public var time: MediaTime
    public var path: String

    public init(time: MediaTime, path: String) {
        self.time = time
        self.path = path
    }

    /// Parses `TIME=PATH` with TIME in seconds (`2.5=/tmp/shot.png`).
    public init(parsing text: String) throws(DisplayConfigurationError) {
        guard let equals = text.firstIndex(of: "="), let seconds = Double(text[..<equals]), seconds >= 0,
              text.index(after: equals) < text.endIndex else {
            throw DisplayConfigurationError(option: "--screenshot-at", value: text, expected: "TIME=PATH, e.g. 2.5=/tmp/frame.png")
        }
        self.init(time: MediaTime(seconds: seconds, preferredTimescale: 1000), path: String(text[text.index(after: equals)...]))
    }
}

extension Screenshot {
    /// Writes the screenshot as a PNG file.
    public func writePNG(to path: String) throws(DisplayError) {
        let bytes = try pngData()
        guard let file = fopen(path, "wb") else { throw .encoding("cannot create \(path): \(errnoText())") }
        defer { fclose(file) }
        let written = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        guard written == bytes.count else { throw .encoding("cannot write \(path): \(errnoText())") }
    }
}
