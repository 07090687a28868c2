/// Where a layer sits on the (upright, logical) screen: a player layer's zone, an overlay's box.
///
/// The screen is the output after its rotation: on a portrait screen (90 or 270 degrees) the
/// upright width is the panel's height. One type serves video layers and overlays alike, so a zone
/// and the logo inside it are given the same way.
public enum LayerFrame: Sendable, Hashable {
    /// Fractions of the screen's width and height (0...1), from the top-left corner.
    case relative(x: Double, y: Double, width: Double, height: Double)
    /// Pixels of the upright screen (after output rotation), from the top-left corner.
    case pixels(x: Int, y: Int, width: Int, height: Int)

    /// The whole screen.
    public static let fullScreen = LayerFrame.relative(x: 0, y: 0, width: 1, height: 1)

    /// The rectangle in pixels of a `canvasWidth`×`canvasHeight` upright screen; each of the four
    /// fractions becomes whole pixels on its own.
    public func resolve(canvasWidth: Int, canvasHeight: Int) -> ScreenRect {
        resolve(canvasWidth: Double(canvasWidth), canvasHeight: Double(canvasHeight))
    }

    /// The rectangle in pixels of a canvas whose size need not be whole pixels (a video wall's
    /// whole picture measured in one screen's pixels, bezels included).
    public func resolve(canvasWidth w: Double, canvasHeight h: Double) -> ScreenRect {
        switch self {
        case .relative(let x, let y, let width, let height):
            return ScreenRect(x: (x * w).rounded(), y: (y * h).rounded(), width: (width * w).rounded(), height: (height * h).rounded())
        case .pixels(let x, let y, let width, let height):
            return ScreenRect(x: Double(x), y: Double(y), width: Double(width), height: Double(height))
        }
    }
}

/// A rectangle on the upright screen, in pixels (fractional where scaling puts an edge between
/// pixels), from the top-left corner.
public struct ScreenRect: Sendable, Hashable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var width: Double
    public var height: Double

    public init(x: Double, y: Double, width: Double, height: Double) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// No rectangle: what a layer's video rectangle is while it shows no picture.
    public static let zero = ScreenRect(x: 0, y: 0, width: 0, height: 0)

    public var maxX: Double { x + width }
    public var maxY: Double { y + height }
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The part inside `other`, or `nil` when they do not overlap.
    public func intersection(_ other: ScreenRect) -> ScreenRect? {
        let left = max(x, other.x), right = min(maxX, other.maxX)
        let top = max(y, other.y), bottom = min(maxY, other.maxY)
        guard right > left, bottom > top else { return nil }
        return ScreenRect(x: left, y: top, width: right - left, height: bottom - top)
    }

    public var description: String { "\(x),\(y) \(width)x\(height)" }
}
