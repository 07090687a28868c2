extension RGBAImage {
    /// The image turned clockwise by `degrees` (0, 90, 180 or 270; other values are rounded to a quarter turn).
    public func rotated(clockwise degrees: Int) -> RGBAImage {
        let quarterTurns = ((Int((Double(degrees) / 90).rounded()) % 4) + 4) % 4
        if quarterTurns == 0 { return self }
        let newWidth = quarterTurns == 2 ? width : height
        let newHeight = quarterTurns == 2 ? height : width
        var output = [UInt8](repeating: 0, count: pixels.count)
        pixels.withUnsafeBytes { sourceBytes in
            let source = sourceBytes.bindMemory(to: UInt32.self)
            output.withUnsafeMutableBytes { destinationBytes in
                let destination = destinationBytes.bindMemory(to: UInt32.self)
                for y in 0..<height {
                    for x in 0..<width {
                        let (nx, ny): (Int, Int)
                        switch quarterTurns {
                        case 1: (nx, ny) = (height - 1 - y, x)
                        case 2: (nx, ny) = (width - 1 - x, height - 1 - y)
                        default: (nx, ny) = (y, width - 1 - x)
                        }
                        destination[ny * newWidth + nx] = source[y * width + x]
                    }
                }
            }
        }
        return RGBAImage(width: newWidth, height: newHeight, pixels: output)
    }
}
