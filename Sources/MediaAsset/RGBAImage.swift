internal import CFFmpeg

/// An 8-bit RGBA picture in memory: thumbnails, screenshots, overlay images.
public struct RGBAImage: Sendable, Hashable {
    public let width: Int
    public let height: Int
    /// Rows top to bottom, `width * 4` bytes each, no padding.
    public var pixels: [UInt8]

    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(pixels.count == width * height * 4, "RGBA buffer size does not match \(width)x\(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// The pixel at (x, y) as (r, g, b, a).
    public func pixel(x: Int, y: Int) -> (r: UInt8, g: UInt8, b: UInt8, a: UInt8) {
        let i = (y * width + x) * 4
        return (pixels[i], pixels[i + 1], pixels[i + 2], pixels[i + 3])
    }

    /// Whether every pixel's alpha is 255 (a screen, a video frame).
    public var isOpaque: Bool {
        pixels.withUnsafeBytes { bytes in
            var index = 3
            while index < bytes.count {
                if bytes[index] != 255 { return false }
                index += 4
            }
            return true
        }
    }

    /// The image encoded as PNG by libavcodec's PNG encoder: as RGB when it is opaque (a quarter
    /// less to filter and compress, and nothing lost), else as RGBA, with the Paeth filter on
    /// every row. A 1080p video frame: 411 KB as RGBA unfiltered, 321 KB so, in the same time;
    /// a screenshot polled over the network costs that much less to send.
    public func pngData() throws(ImageCodingError) -> [UInt8] {
        guard width > 0, height > 0 else { throw .emptyImage }
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_PNG) else { throw .encoderUnavailable("png") }
        var context = avcodec_alloc_context3(codec)
        defer { avcodec_free_context(&context) }
        guard let context else { throw .outOfMemory }
        let opaque = isOpaque
        let format = opaque ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_RGBA
        context.pointee.width = Int32(width)
        context.pointee.height = Int32(height)
        context.pointee.pix_fmt = format
        context.pointee.time_base = AVRational(num: 1, den: 1)
        var options: OpaquePointer?
        defer { av_dict_free(&options) }
        av_dict_set(&options, "pred", "paeth", 0)
        var status = avcodec_open2(context, codec, &options)
        guard status >= 0 else { throw .ffmpeg("opening the PNG encoder", status) }

        var frame = av_frame_alloc()
        defer { av_frame_free(&frame) }
        guard let frame else { throw .outOfMemory }
        frame.pointee.width = Int32(width)
        frame.pointee.height = Int32(height)
        frame.pointee.format = format.rawValue
        status = av_frame_get_buffer(frame, 0)
        guard status >= 0 else { throw .ffmpeg("allocating a frame", status) }
        let rowBytes = width * 4
        let destinationStride = Int(frame.pointee.linesize.0)
        pixels.withUnsafeBytes { source in
            let base = source.baseAddress!.assumingMemoryBound(to: UInt8.self)
            for row in 0..<height {
                let destination = frame.pointee.data.0! + row * destinationStride
                let sourceRow = base + row * rowBytes
                if opaque {
                    for x in 0..<width {
                        destination[x * 3] = sourceRow[x * 4]
                        destination[x * 3 + 1] = sourceRow[x * 4 + 1]
                        destination[x * 3 + 2] = sourceRow[x * 4 + 2]
                    }
                } else {
                    destination.update(from: sourceRow, count: rowBytes)
                }
            }
        }
        status = avcodec_send_frame(context, frame)
        guard status >= 0 else { throw .ffmpeg("encoding PNG", status) }
        _ = avcodec_send_frame(context, nil)
        var packet = av_packet_alloc()
        defer { av_packet_free(&packet) }
        guard let packet else { throw .outOfMemory }
        var output: [UInt8] = []
        while true {
            status = avcodec_receive_packet(context, packet)
            if status == vitrine_averror_eof() || status == vitrine_averror_eagain() { break }
            guard status >= 0 else { throw .ffmpeg("encoding PNG", status) }
            output.append(contentsOf: UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
            av_packet_unref(packet)
        }
        return output
    }
}

/// Why an image could not be encoded or decoded.
public enum ImageCodingError: Error, Sendable, Hashable, CustomStringConvertible {
    case emptyImage
    case encoderUnavailable(String)
    case outOfMemory
    /// An FFmpeg call failed: what was being done and FFmpeg's error code.
    case ffmpeg(String, Int32)

    public var description: String {
        switch self {
        case .emptyImage: return "the image has no pixels"
        case .encoderUnavailable(let name): return "FFmpeg has no \(name) encoder"
        case .outOfMemory: return "out of memory"
        case .ffmpeg(let what, let code): return "\(what) failed: \(FFmpegMessage.describe(code))"
        }
    }
}

/// FFmpeg's own text for an error code (av_strerror).
public enum FFmpegMessage {
    /// The corresponding C function is `av_strerror`.
    public static func describe(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        av_strerror(code, &buffer, buffer.count)
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
