import MediaSinks

/// Where a picture lands on the (logical, already output-rotated) canvas and which texture corner each
/// screen corner shows: the gravity and the picture's own rotation, as plain arithmetic.
struct VideoLayout: Equatable {
    /// The picture's rectangle in canvas pixels (may extend past the canvas with `resizeAspectFill`).
    var x: Double, y: Double, width: Double, height: Double
    /// Texture coordinates (u, v; v = 0 is the picture's first row) at the top-left, top-right,
    /// bottom-left and bottom-right corners of the rectangle.
    var textureCorners: [(Double, Double)]

    static func == (lhs: VideoLayout, rhs: VideoLayout) -> Bool {
        lhs.x == rhs.x && lhs.y == rhs.y && lhs.width == rhs.width && lhs.height == rhs.height
            && zip(lhs.textureCorners, rhs.textureCorners).allSatisfy { $0 == $1 }
    }

    /// Whether each picture sample lands on exactly one canvas pixel: the rectangle has the picture's
    /// size (swapped when the picture is turned a quarter) and starts on a pixel boundary.
    func isPixelExact(pictureWidth: Int, pictureHeight: Int, rotation: Rotation) -> Bool {
        let quarterTurn = rotation == .clockwise90 || rotation == .clockwise270
        let (w, h) = quarterTurn ? (pictureHeight, pictureWidth) : (pictureWidth, pictureHeight)
        return width == Double(w) && height == Double(h) && x == x.rounded() && y == y.rounded()
    }

    /// Lays a `pictureWidth`×`pictureHeight` picture with square-pixel aspect `sampleAspectRatio`,
    /// rotated clockwise by `rotation`, into `bounds` (x, y, width, height) with `gravity`.
    static func place(
        pictureWidth: Int, pictureHeight: Int, sampleAspectRatio: Double = 1, rotation: Rotation = .none,
        in bounds: (x: Double, y: Double, width: Double, height: Double), gravity: VideoGravity
    ) -> VideoLayout {
        var displayWidth = Double(pictureWidth) * (sampleAspectRatio > 0 ? sampleAspectRatio : 1)
        var displayHeight = Double(pictureHeight)
        if rotation.swapsAxes { swap(&displayWidth, &displayHeight) }
        var width = bounds.width, height = bounds.height
        if gravity != .resize, displayWidth > 0, displayHeight > 0 {
            let scaleToWidth = bounds.width / displayWidth, scaleToHeight = bounds.height / displayHeight
            let scale = gravity == .resizeAspect ? min(scaleToWidth, scaleToHeight) : max(scaleToWidth, scaleToHeight)
            width = displayWidth * scale
            height = displayHeight * scale
        }
        let x = bounds.x + (bounds.width - width) / 2
        let y = bounds.y + (bounds.height - height) / 2
        // Screen corner (u', v') of the rotated picture shows source texel (u, v).
        let source: ((Double, Double)) -> (Double, Double) = { corner in
            let (u, v) = corner
            switch rotation {
            case .none: return (u, v)
            case .clockwise90: return (v, 1 - u)
            case .upsideDown: return (1 - u, 1 - v)
            case .clockwise270: return (1 - v, u)
            }
        }
        let corners = [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)].map(source)
        return VideoLayout(x: x, y: y, width: width, height: height, textureCorners: corners)
    }

    /// The part of the rectangle inside `bounds`, with the texture corners that keep every sample
    /// where it was (the corners are interpolated across the rectangle); `nil` when nothing is inside.
    /// `resizeAspectFill` in a zone is cropped to the zone this way.
    func clipped(to bounds: ScreenRect) -> VideoLayout? {
        guard width > 0, height > 0,
              let visible = ScreenRect(x: x, y: y, width: width, height: height).intersection(bounds) else { return nil }
        if visible.x == x, visible.y == y, visible.width == width, visible.height == height { return self }
        let corners = textureCorners
        // Bilinear across the four corners: exact for the rotations and flips the corners encode.
        func texture(at s: Double, _ t: Double) -> (Double, Double) {
            let top = (corners[0].0 + (corners[1].0 - corners[0].0) * s, corners[0].1 + (corners[1].1 - corners[0].1) * s)
            let bottom = (corners[2].0 + (corners[3].0 - corners[2].0) * s, corners[2].1 + (corners[3].1 - corners[2].1) * s)
            return (top.0 + (bottom.0 - top.0) * t, top.1 + (bottom.1 - top.1) * t)
        }
        let s0 = (visible.x - x) / width, s1 = (visible.maxX - x) / width
        let t0 = (visible.y - y) / height, t1 = (visible.maxY - y) / height
        return VideoLayout(x: visible.x, y: visible.y, width: visible.width, height: visible.height,
                           textureCorners: [texture(at: s0, t0), texture(at: s1, t0), texture(at: s0, t1), texture(at: s1, t1)])
    }

    /// Interleaved (x, y, u, v) for a triangle strip TL, TR, BL, BR in normalised device coordinates of a
    /// `canvasWidth`×`canvasHeight` screen (y up) whose top-left pixel is at `origin` of the canvas
    /// the rectangle is laid out on (a video wall's tile; (0, 0) otherwise).
    func vertices(canvasWidth: Int, canvasHeight: Int, origin: (x: Double, y: Double) = (0, 0)) -> [Float] {
        let w = Double(canvasWidth), h = Double(canvasHeight)
        let x = self.x - origin.x, y = self.y - origin.y
        let left = 2 * x / w - 1, right = 2 * (x + width) / w - 1
        let top = 1 - 2 * y / h, bottom = 1 - 2 * (y + height) / h
        let positions = [(left, top), (right, top), (left, bottom), (right, bottom)]
        var result: [Float] = []
        result.reserveCapacity(16)
        for (position, texture) in zip(positions, textureCorners) {
            result += [Float(position.0), Float(position.1), Float(texture.0), Float(texture.1)]
        }
        return result
    }
}

extension Rotation {
    /// Column-major 2x2 matrix turning canvas NDC into framebuffer NDC: the canvas is turned clockwise.
    var outputMatrix: [Float] {
        // Clockwise by 90 in y-up coordinates: (x, y) -> (y, -x).
        switch self {
        case .none: return [1, 0, 0, 1]
        case .clockwise90: return [0, -1, 1, 0]
        case .upsideDown: return [-1, 0, 0, -1]
        case .clockwise270: return [0, 1, -1, 0]
        }
    }
}
