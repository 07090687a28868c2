public import MediaAsset
public import MediaSinks
public import MediaTime

/// Horizontal alignment of text lines inside their box.
public enum TextAlignment: String, Sendable, Hashable, CaseIterable {
    case leading, center, trailing
}

/// A text overlay's words and looks. Text is UTF-8 (any Swift string), wrapped at word boundaries to the
/// overlay's width; `\n` starts a new line.
public struct TextStyle: Sendable, Hashable {
    /// A TrueType/OpenType font file. The default is Debian's fonts-dejavu-core DejaVu Sans.
    public var fontPath: String
    /// Glyph height in pixels (the em size).
    public var pixelSize: Int
    public var color: RGBAColor
    /// The box drawn behind the lines (hugging them, plus ``padding``); `nil` for none.
    public var background: RGBAColor?
    public var alignment: TextAlignment
    /// Space between the text and its box, in pixels.
    public var padding: Int

    public static let defaultFontPath = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"

    public init(
        fontPath: String = TextStyle.defaultFontPath, pixelSize: Int = 48, color: RGBAColor = .white,
        background: RGBAColor? = nil, alignment: TextAlignment = .leading, padding: Int = 8
    ) {
        self.fontPath = fontPath
        self.pixelSize = pixelSize
        self.color = color
        self.background = background
        self.alignment = alignment
        self.padding = padding
    }
}

/// One overlay layer above the video: an image or a text, its rectangle, stacking order, opacity and fades.
public struct OverlayLayer: Sendable {
    /// What the overlay shows.
    public enum Content: Sendable {
        /// A picture, drawn inside the rectangle with its aspect ratio kept (centred).
        case image(RGBAImage)
        /// Text laid out inside the rectangle.
        case text(String, TextStyle)
    }

    public var content: Content
    public var frame: LayerFrame
    /// Higher values draw above lower ones; equal values keep the order they were added in. Shared
    /// with player layers' `zPosition`: at equal values an overlay draws above a video layer.
    public var zIndex: Int
    /// Opacity at full fade, 0...1.
    public var opacity: Double
    /// Time from invisible to ``opacity`` after the overlay is added.
    public var fadeIn: MediaTime
    /// Time from ``opacity`` to invisible after the overlay is removed.
    public var fadeOut: MediaTime
    /// Only the part inside this rectangle is drawn (a ticker's line stays inside its bar while it
    /// runs through it); `nil` draws all of it.
    public var clip: LayerFrame?

    public init(
        _ content: Content, frame: LayerFrame, zIndex: Int = 0, opacity: Double = 1,
        fadeIn: MediaTime = .zero, fadeOut: MediaTime = .zero, clip: LayerFrame? = nil
    ) {
        self.content = content
        self.frame = frame
        self.zIndex = zIndex
        self.opacity = min(max(opacity, 0), 1)
        self.fadeIn = fadeIn
        self.fadeOut = fadeOut
        self.clip = clip
    }
}

/// Identifies an overlay added to a ``LayerStack``.
public struct OverlayID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: UInt64
    public static func < (lhs: OverlayID, rhs: OverlayID) -> Bool { lhs.rawValue < rhs.rawValue }
    public var description: String { "overlay #\(rawValue)" }
}
