public import MediaTime

/// A display mode: size in pixels and refresh rate, written `1920x1080@60`.
public struct DisplayMode: Sendable, Hashable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    /// Refresh rate in millihertz (59940 for 59.94 Hz), so NTSC rates stay exact.
    public var refreshMillihertz: Int

    public init(width: Int, height: Int, refreshMillihertz: Int = 60_000) {
        self.width = width
        self.height = height
        self.refreshMillihertz = refreshMillihertz
    }

    /// 1920x1080 at 60 Hz: the headless display's default.
    public static let fullHD = DisplayMode(width: 1920, height: 1080)

    /// Parses `WxH` or `WxH@Hz` (Hz may have decimals: `1920x1080@59.94`).
    public init(parsing text: String) throws(DisplayError) {
        let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
        let size = parts[0].lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard size.count == 2, let width = Int(size[0]), let height = Int(size[1]), width > 0, height > 0 else {
            throw .invalidMode(text)
        }
        var millihertz = 60_000
        if parts.count == 2 {
            guard let hertz = Double(parts[1]), hertz > 0, hertz < 1000 else { throw .invalidMode(text) }
            millihertz = Int((hertz * 1000).rounded())
        }
        self.init(width: width, height: height, refreshMillihertz: millihertz)
    }

    /// The refresh rate in hertz.
    public var refreshRate: Double { Double(refreshMillihertz) / 1000 }

    /// Time between refreshes, exact (1000/60000 s at 60 Hz).
    public var refreshInterval: MediaTime { MediaTime(value: 1000, timescale: Int32(refreshMillihertz)) }

    public var description: String {
        let hertz = refreshMillihertz % 1000 == 0
            ? String(refreshMillihertz / 1000) : MediaTime.format(seconds: refreshRate, decimals: 2)
        return "\(width)x\(height)@\(hertz)"
    }

    /// Whether `other` matches this mode, where a requested mode without an explicit rate matches any rate
    /// and rates match within 0.5 Hz (59.94 matches 60 only when asked for loosely).
    func matches(_ requested: DisplayMode, rateGiven: Bool) -> Bool {
        guard width == requested.width, height == requested.height else { return false }
        return !rateGiven || abs(refreshMillihertz - requested.refreshMillihertz) < 500
    }
}

/// A clockwise rotation by a multiple of 90 degrees.
public enum Rotation: Int, Sendable, Hashable, CaseIterable {
    case none = 0
    case clockwise90 = 90
    case upsideDown = 180
    case clockwise270 = 270

    /// Rotation from degrees (any multiple of 90, negative allowed); `nil` otherwise.
    public init?(degrees: Int) {
        guard degrees % 90 == 0 else { return nil }
        self.init(rawValue: ((degrees % 360) + 360) % 360)
    }

    /// Number of clockwise quarter turns.
    var quarterTurns: Int { rawValue / 90 }

    /// Whether width and height swap.
    var swapsAxes: Bool { self == .clockwise90 || self == .clockwise270 }
}
