/// The part of a larger picture one screen of a video wall shows: a rectangle in fractions of the
/// whole wall's picture. The whole is laid out (video gravity, overlays' rectangles) as if one big
/// screen showed it, bezels included, and each screen draws only its rectangle, so a picture or an
/// overlay spanning two screens is cut where the bezels hide it. One type for the schedule format,
/// the configuration and the displays.
public struct WallTile: Sendable, Hashable, CustomStringConvertible {
    /// The rectangle's left edge and top edge, width and height, in fractions of the whole (0…1).
    public var x: Double, y: Double, width: Double, height: Double

    /// A screen showing `[x, y, width, height]` of the whole (`[display] crop`).
    public init?(x: Double, y: Double, width: Double, height: Double) {
        guard [x, y, width, height].allSatisfy(\.isFinite), x >= 0, y >= 0, width > 0, height > 0,
              x + width <= 1 + 1e-9, y + height <= 1 + 1e-9 else { return nil }
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The screen at `column`, `row` (from 0, left to right, top to bottom) of a wall of `columns`
    /// by `rows` identical screens (`[display] wall`). `bezel` is the gap between the pictures of
    /// two neighbouring screens — both bezels together — as a fraction of one screen's width
    /// (`bezel.horizontal`, between columns) and height (`bezel.vertical`, between rows): the
    /// picture behind the gap is not shown, as if seen through a window frame.
    public init?(columns: Int, rows: Int, column: Int, row: Int, bezel: (horizontal: Double, vertical: Double) = (0, 0)) {
        guard columns >= 1, rows >= 1, columns <= 64, rows <= 64, (0..<columns).contains(column), (0..<rows).contains(row),
              bezel.horizontal.isFinite, bezel.vertical.isFinite, (0...1).contains(bezel.horizontal), (0...1).contains(bezel.vertical)
        else { return nil }
        // In screen widths and heights: the whole is n screens plus n-1 gaps.
        let wholeWidth = Double(columns) + Double(columns - 1) * bezel.horizontal
        let wholeHeight = Double(rows) + Double(rows - 1) * bezel.vertical
        self.x = Double(column) * (1 + bezel.horizontal) / wholeWidth
        self.y = Double(row) * (1 + bezel.vertical) / wholeHeight
        self.width = 1 / wholeWidth
        self.height = 1 / wholeHeight
    }

    /// The whole picture on one screen (no wall).
    public static let whole = WallTile(x: 0, y: 0, width: 1, height: 1)!

    public var isWhole: Bool { self == .whole }

    /// The whole picture's size in this screen's pixels, for a screen of `width`×`height` upright
    /// pixels showing this tile: the canvas the layers are laid out on.
    public func canvas(screenWidth width: Int, screenHeight height: Int) -> (width: Double, height: Double) {
        (Double(width) / self.width, Double(height) / self.height)
    }

    /// Where this screen's top-left pixel is on that canvas.
    public func origin(screenWidth width: Int, screenHeight height: Int) -> (x: Double, y: Double) {
        let canvas = canvas(screenWidth: width, screenHeight: height)
        return (x * canvas.width, y * canvas.height)
    }

    public var description: String { "[\(x), \(y), \(width), \(height)] of the wall" }
}
