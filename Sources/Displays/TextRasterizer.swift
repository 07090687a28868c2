internal import CFreeType
import MediaSinks
import MediaAsset

/// Why text could not be drawn.
enum TextRasterizerError: Error, CustomStringConvertible {
    case freeType(String, Int32)
    var description: String {
        switch self {
        case .freeType(let what, let code): return "FreeType: \(what) failed (error \(code))"
        }
    }
}

/// Lays out and rasterises UTF-8 text with FreeType into an RGBA picture the size of its box.
///
/// Lines wrap at spaces to the box width (a word wider than the box breaks between characters);
/// `\n` starts a new line. The block is centred vertically (or sits on the bottom, for subtitles); each line is aligned as asked. The
/// background box hugs the block plus padding. Owned by the render thread.
final class TextRasterizer {
    private var library: FT_Library?
    private var faces: [String: FT_Face] = [:]

    init() throws(TextRasterizerError) {
        var library: FT_Library?
        let status = FT_Init_FreeType(&library)
        guard status == 0, library != nil else { throw .freeType("initialising the library", status) }
        self.library = library
    }

    deinit {
        for face in faces.values { FT_Done_Face(face) }
        FT_Done_FreeType(library)
    }

    private func face(path: String) throws(TextRasterizerError) -> FT_Face {
        if let face = faces[path] { return face }
        var face: FT_Face?
        let status = FT_New_Face(library, path, 0, &face)
        guard status == 0, let face else { throw .freeType("opening the font \(path)", status) }
        faces[path] = face
        return face
    }

    private struct Line {
        var scalars: [Unicode.Scalar]
        var width: Int
    }

    /// Draws `text` into a `width`×`height` RGBA image (transparent where there is neither text nor box).
    func render(_ text: String, style: TextStyle, width: Int, height: Int, anchoredToBottom: Bool = false) throws(TextRasterizerError) -> RGBAImage {
        let width = max(width, 1), height = max(height, 1)
        var canvas = [UInt8](repeating: 0, count: width * height * 4)
        let face = try face(path: style.fontPath)
        FT_Set_Pixel_Sizes(face, 0, FT_UInt(max(style.pixelSize, 1)))
        let metrics = face.pointee.size.pointee.metrics
        let lineHeight = Int(metrics.height >> 6)
        let ascender = Int(metrics.ascender >> 6)

        var advances: [Unicode.Scalar: Int] = [:]
        func advance(_ scalar: Unicode.Scalar) -> Int {
            if let known = advances[scalar] { return known }
            let value = FT_Load_Char(face, FT_ULong(scalar.value), vitrine_ft_load_default()) == 0
                ? Int(face.pointee.glyph.pointee.advance.x >> 6) : 0
            advances[scalar] = value
            return value
        }

        // Greedy wrapping to the width inside the padding.
        let maximumWidth = max(width - 2 * style.padding, 1)
        var lines: [Line] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current = Line(scalars: [], width: 0)
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let scalars = Array(word.unicodeScalars)
                let wordWidth = scalars.reduce(0) { $0 + advance($1) }
                let spaceWidth = current.scalars.isEmpty ? 0 : advance(" ")
                if current.width + spaceWidth + wordWidth <= maximumWidth {
                    if !current.scalars.isEmpty { current.scalars.append(" ") }
                    current.scalars += scalars
                    current.width += spaceWidth + wordWidth
                    continue
                }
                if !current.scalars.isEmpty { lines.append(current) }
                current = Line(scalars: [], width: 0)
                for scalar in scalars {  // a word wider than the line breaks between characters
                    let step = advance(scalar)
                    if current.width + step > maximumWidth, !current.scalars.isEmpty {
                        lines.append(current)
                        current = Line(scalars: [], width: 0)
                    }
                    current.scalars.append(scalar)
                    current.width += step
                }
            }
            lines.append(current)
        }

        let blockHeight = lines.count * lineHeight
        let blockTop = anchoredToBottom
            ? max(height - style.padding - blockHeight, 0) : max((height - blockHeight) / 2, 0)
        func lineLeft(_ line: Line) -> Int {
            switch style.alignment {
            case .leading: return style.padding
            case .center: return (width - line.width) / 2
            case .trailing: return width - style.padding - line.width
            }
        }
        if let background = style.background, !lines.isEmpty {
            let left = max((lines.map(lineLeft).min() ?? 0) - style.padding, 0)
            let right = min((lines.map { lineLeft($0) + $0.width }.max() ?? 0) + style.padding, width)
            let top = max(blockTop - style.padding, 0)
            let bottom = min(blockTop + blockHeight + style.padding, height)
            for y in top..<max(bottom, top) {
                for x in left..<max(right, left) {
                    let index = (y * width + x) * 4
                    canvas[index] = background.red
                    canvas[index + 1] = background.green
                    canvas[index + 2] = background.blue
                    canvas[index + 3] = background.alpha
                }
            }
        }

        let color = style.color
        for (number, line) in lines.enumerated() {
            var penX = lineLeft(line)
            let baseline = blockTop + number * lineHeight + ascender
            for scalar in line.scalars {
                guard FT_Load_Char(face, FT_ULong(scalar.value), vitrine_ft_load_render()) == 0 else { continue }
                let glyph = face.pointee.glyph.pointee
                let bitmap = glyph.bitmap
                if let buffer = bitmap.buffer {
                    let originX = penX + Int(glyph.bitmap_left), originY = baseline - Int(glyph.bitmap_top)
                    for row in 0..<Int(bitmap.rows) {
                        let y = originY + row
                        guard y >= 0, y < height else { continue }
                        for column in 0..<Int(bitmap.width) {
                            let x = originX + column
                            guard x >= 0, x < width else { continue }
                            let coverage = Double(buffer[row * Int(bitmap.pitch) + column]) / 255
                            guard coverage > 0 else { continue }
                            TextRasterizer.blend(color, coverage: coverage, into: &canvas, at: (y * width + x) * 4)
                        }
                    }
                }
                penX += Int(glyph.advance.x >> 6)
            }
        }
        return RGBAImage(width: width, height: height, pixels: canvas)
    }

    /// Source-over of `color` at `coverage` onto a non-premultiplied RGBA pixel.
    private static func blend(_ color: RGBAColor, coverage: Double, into canvas: inout [UInt8], at index: Int) {
        let sourceAlpha = Double(color.alpha) / 255 * coverage
        let destinationAlpha = Double(canvas[index + 3]) / 255
        let outAlpha = sourceAlpha + destinationAlpha * (1 - sourceAlpha)
        guard outAlpha > 0 else { return }
        let source = [color.red, color.green, color.blue]
        for channel in 0..<3 {
            let value = (Double(source[channel]) * sourceAlpha + Double(canvas[index + channel]) * destinationAlpha * (1 - sourceAlpha)) / outAlpha
            canvas[index + channel] = UInt8(min(max(value.rounded(), 0), 255))
        }
        canvas[index + 3] = UInt8(min(max((outAlpha * 255).rounded(), 0), 255))
    }
}
