import MediaSinks

/// The YCbCr→RGB conversion for a frame's matrix, range and sample container, as GL uniforms.
///
/// The shader computes `rgb = matrix * (raw - offset)` where `raw` are the samples normalised
/// to 0...1 by the texture (8-bit: /255; P010's 16-bit container: /65535). The range's scale is
/// folded into the matrix columns.
struct ColorConversion: Equatable {
    /// Column-major 3x3 (columns: Y, Cb, Cr; rows: R, G, B), as `glUniformMatrix3fv` wants it.
    var matrix: [Float]
    /// Subtracted from (Y, Cb, Cr) before the matrix.
    var offset: [Float]

    /// Luma coefficients (Kr, Kb) of each matrix.
    static func coefficients(_ matrix: VideoFrame.ColorMatrix) -> (kr: Double, kb: Double) {
        switch matrix {
        case .bt601: return (0.299, 0.114)
        case .bt709: return (0.2126, 0.0722)
        case .bt2020: return (0.2627, 0.0593)
        }
    }

    /// The conversion for `matrix` and `range`; `sixteenBit` for P010's container (10 bits in the high bits).
    init(matrix colorMatrix: VideoFrame.ColorMatrix, range: VideoFrame.ColorRange, sixteenBit: Bool) {
        let (kr, kb) = ColorConversion.coefficients(colorMatrix)
        let kg = 1 - kr - kb
        let maximum: Double = sixteenBit ? 65535 : 255
        let step: Double = sixteenBit ? 256 : 1  // one 8-bit code value in the container
        let lumaOffset: Double, lumaScale: Double, chromaScale: Double
        switch range {
        case .limited:
            lumaOffset = 16 * step / maximum
            lumaScale = maximum / (219 * step)
            chromaScale = maximum / (224 * step)
        case .full:
            lumaOffset = 0
            lumaScale = 1
            chromaScale = 1
        }
        let chromaOffset = 128 * step / maximum
        let columns: [[Double]] = [
            [lumaScale, lumaScale, lumaScale],
            [0, -2 * kb * (1 - kb) / kg * chromaScale, 2 * (1 - kb) * chromaScale],
            [2 * (1 - kr) * chromaScale, -2 * kr * (1 - kr) / kg * chromaScale, 0],
        ]
        self.matrix = columns.flatMap { $0.map(Float.init) }
        self.offset = [Float(lumaOffset), Float(chromaOffset), Float(chromaOffset)]
    }
}
