internal import CFFmpeg
package import MediaTime
package import MediaSinks

/// A subtitle with the item-time interval it is shown in.
package struct TimedSubtitle: Sendable {
    package let start: MediaTime
    package let end: MediaTime
    package let content: SubtitleContent
}

/// Decodes one subtitle stream (text or bitmap) on the demux thread: subtitle packets are few
/// and cheap. The corresponding C function is `avcodec_decode_subtitle2`.
// Unchecked: owned by the item's demux thread.
package final class SubtitleDecoder: @unchecked Sendable {
    package let streamIndex: Int
    private let context: UnsafeMutablePointer<AVCodecContext>
    private let timeBase: AVRational
    private let referenceSize: (width: Int, height: Int)

    /// A decoder for subtitle stream `index` of `demuxer`, or nil when FFmpeg has none for its codec.
    package convenience init?(demuxer: Demuxer, index: Int, referenceSize: (width: Int, height: Int)) {
        self.init(stream: demuxer.stream(at: index), index: index, referenceSize: referenceSize)
    }

    init?(stream: UnsafeMutablePointer<AVStream>, index: Int, referenceSize: (width: Int, height: Int)) {
        let parameters = stream.pointee.codecpar!
        guard let codec = avcodec_find_decoder(parameters.pointee.codec_id),
              let context = avcodec_alloc_context3(codec) else { return nil }
        var optional: UnsafeMutablePointer<AVCodecContext>? = context
        guard avcodec_parameters_to_context(context, parameters) >= 0 else { avcodec_free_context(&optional); return nil }
        context.pointee.pkt_timebase = stream.pointee.time_base
        guard avcodec_open2(context, codec, nil) >= 0 else { avcodec_free_context(&optional); return nil }
        self.context = context
        self.streamIndex = index
        self.timeBase = stream.pointee.time_base
        let width = Int(parameters.pointee.width), height = Int(parameters.pointee.height)
        self.referenceSize = width > 0 && height > 0 ? (width, height) : referenceSize
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&pointer)
    }

    package func flush() { avcodec_flush_buffers(context) }

    /// The subtitle in `packet`, if it holds one, in item time.
    package func decode(_ packet: Packet, startTime: MediaTime) -> TimedSubtitle? {
        var subtitle = AVSubtitle()
        var got: Int32 = 0
        guard avcodec_decode_subtitle2(context, &subtitle, &got, packet.pointer) >= 0, got != 0 else { return nil }
        defer { avsubtitle_free(&subtitle) }
        let pts = Demuxer.time(packet.pts, timeBase: timeBase)
        guard pts.isValid else { return nil }
        let base = pts - startTime
        let start = base + MediaTime(value: Int64(subtitle.start_display_time), timescale: 1000)
        var end: MediaTime
        if subtitle.end_display_time > subtitle.start_display_time && subtitle.end_display_time != UInt32.max {
            end = base + MediaTime(value: Int64(subtitle.end_display_time), timescale: 1000)
        } else if packet.duration > 0 {
            end = base + Demuxer.time(packet.duration, timeBase: timeBase)
        } else {
            end = .positiveInfinity
        }
        var lines: [String] = []
        var bitmap: SubtitleContent?
        for index in 0..<Int(subtitle.num_rects) {
            guard let rect = subtitle.rects[index]?.pointee else { continue }
            switch rect.type {
            case SUBTITLE_ASS:
                if let ass = rect.ass { lines.append(Self.plainText(fromASS: String(cString: ass))) }
            case SUBTITLE_TEXT:
                if let text = rect.text { lines.append(String(cString: text)) }
            case SUBTITLE_BITMAP:
                bitmap = bitmap ?? rgba(rect)
            default:
                break
            }
        }
        if let bitmap { return TimedSubtitle(start: start, end: end, content: bitmap) }
        let text = lines.filter { !$0.isEmpty }.joined(separator: "\n")
        guard !text.isEmpty else { return nil }
        if end.isPositiveInfinity { end = start + MediaTime(value: 5, timescale: 1) }
        return TimedSubtitle(start: start, end: end, content: .text(text))
    }

    /// The text of an ASS dialogue event: after the eighth comma, without override tags.
    static func plainText(fromASS ass: String) -> String {
        var commas = 0
        var body = Substring(ass)
        if let index = ass.firstIndex(where: { character in
            if character == "," { commas += 1 }
            return commas == 8
        }) {
            body = ass[ass.index(after: index)...]
        }
        var text = ""
        var inTag = false
        for character in body {
            if character == "{" { inTag = true; continue }
            if character == "}" { inTag = false; continue }
            if !inTag { text.append(character) }
        }
        return text.replacingOccurrences(of: "\\N", with: "\n").replacingOccurrences(of: "\\n", with: "\n")
    }

    /// A palettized subtitle bitmap as an RGBA picture.
    private func rgba(_ rect: AVSubtitleRect) -> SubtitleContent? {
        let width = Int(rect.w), height = Int(rect.h)
        guard width > 0, height > 0, let indices = rect.data.0, let palette = rect.data.1 else { return nil }
        let stride = Int(rect.linesize.0)
        var pixels = [UInt8](repeating: 0, count: width * height * 4)
        palette.withMemoryRebound(to: UInt32.self, capacity: 256) { colours in
            for y in 0..<height {
                for x in 0..<width {
                    let argb = colours[Int(indices[y * stride + x])]
                    let offset = (y * width + x) * 4
                    pixels[offset] = UInt8((argb >> 16) & 0xFF)
                    pixels[offset + 1] = UInt8((argb >> 8) & 0xFF)
                    pixels[offset + 2] = UInt8(argb & 0xFF)
                    pixels[offset + 3] = UInt8(argb >> 24)
                }
            }
        }
        let frame = VideoFrame(planes: [pixels], bytesPerRow: [width * 4], width: width, height: height, pixelFormat: .rgba, colorRange: .full)
        return .bitmap(frame, x: Int(rect.x), y: Int(rect.y), referenceWidth: referenceSize.width, referenceHeight: referenceSize.height)
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
