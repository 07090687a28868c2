import MediaAsset

/// Pixels copied off the device by the render thread, as the device holds them; converting them
/// to a top-down RGBA picture is left to whoever asked (off the render thread).
struct ReadbackPixels: Sendable {
    enum Layout: Sendable {
        /// GL's framebuffer: RGBA rows, the bottom row first.
        case rgbaBottomUp
        /// A KMS scanout buffer (XRGB8888: B, G, R, X bytes), the top row first.
        case xrgbTopDown
    }

    var layout: Layout
    var width: Int
    var height: Int
    /// Tightly packed rows of `width * 4` bytes.
    var bytes: [UInt8]

    /// The picture, top row first, opaque.
    func image() -> RGBAImage {
        let row = width * 4
        var pixels = [UInt8](repeating: 0, count: bytes.count)
        pixels.withUnsafeMutableBufferPointer { destination in
            bytes.withUnsafeBufferPointer { source in
                for y in 0..<height {
                    let from = (layout == .rgbaBottomUp ? height - 1 - y : y) * row, to = y * row
                    var x = 0
                    while x < row {
                        switch layout {
                        case .rgbaBottomUp:
                            destination[to + x] = source[from + x]
                            destination[to + x + 1] = source[from + x + 1]
                            destination[to + x + 2] = source[from + x + 2]
                        case .xrgbTopDown:
                            destination[to + x] = source[from + x + 2]
                            destination[to + x + 1] = source[from + x + 1]
                            destination[to + x + 2] = source[from + x]
                        }
                        destination[to + x + 3] = 255
                        x += 4
                    }
                }
            }
        }
        return RGBAImage(width: width, height: height, pixels: pixels)
    }
}
