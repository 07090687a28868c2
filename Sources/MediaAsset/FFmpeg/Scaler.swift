internal import CFFmpeg
package import MediaSinks

/// Converts decoded video frames to ``RGBAImage``s at any size (`SwsContext`).
///
/// The context is cached and rebuilt only when the input or output geometry changes.
/// Used by one thread at a time. The corresponding C functions are `sws_getCachedContext`, `sws_scale`.
package final class RGBAScaler: @unchecked Sendable {
    private var context: OpaquePointer?
    private let flags: Int32

    /// A scaler; `accurate` adds exact rounding and full-resolution chroma interpolation.
    /// The default matches the `ffmpeg` command line's automatic conversion (bicubic only),
    /// so images compare equal to what `ffmpeg -i F -frames:v 1 out.png` writes.
    package init(accurate: Bool = false) {
        flags = vitrine_sws_bicubic() | (accurate ? vitrine_sws_accurate_rnd() | vitrine_sws_full_chr_h_int() : 0)
    }

    deinit { sws_freeContext(context) }

    /// The frame's picture scaled to `width` x `height` (its own size when nil), as RGBA.
    package func image(from frame: Frame, width: Int? = nil, height: Int? = nil, source: String = "") throws(MediaError) -> RGBAImage {
        let outputWidth = width ?? frame.width
        let outputHeight = height ?? frame.height
        guard frame.width > 0, frame.height > 0, outputWidth > 0, outputHeight > 0 else {
            throw MediaError(source: source, operation: "cannot convert a frame", reason: .invalidRequest, detail: "(empty picture)")
        }
        context = sws_getCachedContext(
            context, Int32(frame.width), Int32(frame.height), frame.pixelFormat,
            Int32(outputWidth), Int32(outputHeight), AV_PIX_FMT_RGBA, flags, nil, nil, nil)
        guard let context else {
            throw MediaError(source: source, operation: "cannot convert a frame", reason: .other,
                             detail: "(no conversion from pixel format \(frame.format))")
        }
        // swscale's vector code writes whole blocks past the end of a row (and of the last
        // row) for some conversions, e.g. yuvj420p to RGBA: scale into a padded, aligned
        // FFmpeg buffer, then copy the rows out tightly.
        let rowBytes = outputWidth * 4
        let stride = (rowBytes + 63) & ~63
        let bufferSize = stride * (outputHeight + 2) + 64
        guard let buffer = av_malloc(bufferSize)?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError(source: source, operation: "cannot convert a frame", reason: .outOfMemory)
        }
        defer { av_free(buffer) }
        var destination: [UnsafeMutablePointer<UInt8>?] = [buffer, nil, nil, nil]
        var strides: [Int32] = [Int32(stride), 0, 0, 0]
        let status = withUnsafePointer(to: frame.pointer.pointee.data) { data in
            withUnsafePointer(to: frame.pointer.pointee.linesize) { lines in
                let sourcePlanes = UnsafeRawPointer(data).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
                let sourceStrides = UnsafeRawPointer(lines).assumingMemoryBound(to: Int32.self)
                return sws_scale(context, sourcePlanes, sourceStrides, 0, Int32(frame.height), &destination, &strides)
            }
        }
        var pixels = [UInt8](repeating: 0, count: rowBytes * outputHeight)
        if status >= 0 {
            pixels.withUnsafeMutableBytes { output in
                for row in 0..<outputHeight {
                    (output.baseAddress! + row * rowBytes).copyMemory(from: buffer + row * stride, byteCount: rowBytes)
                }
            }
        }
        if status < 0 { throw MediaError.ffmpeg(status, source: source, operation: "cannot convert a frame") }
        return RGBAImage(width: outputWidth, height: outputHeight, pixels: pixels)
    }
}
