internal import CFFmpeg
public import MediaSinks
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A whole audio track decoded and resampled to one format: interleaved Float32.
public struct DecodedAudio: Sendable {
    public var samples: [Float]
    public var sampleRate: Int
    public var channelCount: Int

    public var frameCount: Int { channelCount == 0 ? 0 : samples.count / channelCount }
}

/// Decodes the best audio track of a file (or of bytes in memory) with libavcodec and
/// converts it with libswresample to the output's rate and channel count, for players of
/// short clips and music beds (AudioPlayer) that keep the whole track in memory.
public enum AudioFileDecoder {
    /// Decodes `path`. Throws ``MediaError`` naming the file and the cause (missing,
    /// unrecognised, no audio track, no decoder, corrupt data) with FFmpeg's message.
    public static func decode(path: String, sampleRate: Int, channelCount: Int) throws(MediaError) -> DecodedAudio {
        let demuxer = try Demuxer(source: path)
        guard let streamIndex = demuxer.bestStream(of: AVMEDIA_TYPE_AUDIO) else {
            throw MediaError(source: path, operation: "cannot play audio", reason: .noSuchTrack, detail: "no audio track")
        }
        let decoder = try Decoder(stream: demuxer.stream(at: streamIndex), source: path, threadCount: 1)
        var resampler: Resampler?
        var samples: [Float] = []
        let packet = Packet()
        let frame = Frame()

        func receiveAll() throws(MediaError) -> Bool {
            while true {
                switch try decoder.receive(into: frame) {
                case .frame:
                    if resampler == nil {
                        resampler = try Resampler(from: frame.pointer, sampleRate: sampleRate, channelCount: channelCount, source: path)
                    }
                    try resampler!.convert(frame.pointer, appendingTo: &samples)
                    frame.unref()
                case .needsInput: return false
                case .endOfStream: return true
                }
            }
        }

        while try demuxer.read(into: packet) {
            guard Int(packet.pointer.pointee.stream_index) == streamIndex else { continue }
            while try decoder.send(packet) == .full { _ = try receiveAll() }
            _ = try receiveAll()
        }
        try decoder.drain()
        _ = try receiveAll()
        try resampler?.convert(nil, appendingTo: &samples)
        guard resampler != nil else {
            throw MediaError(source: path, operation: "cannot decode", reason: .corruptData, detail: "the audio track has no decodable frames")
        }
        return DecodedAudio(samples: samples, sampleRate: sampleRate, channelCount: channelCount)
    }

    /// Decodes a file held in memory (a jingle shipped inside a schedule bundle), through a
    /// private temporary file so every container FFmpeg can seek in works.
    public static func decode(data: [UInt8], name: String = "audio data", sampleRate: Int, channelCount: Int) throws(MediaError) -> DecodedAudio {
        var template = Array("/tmp/vitrine-audio-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw MediaError(source: name, operation: "cannot buffer", reason: .other, detail: String(cString: strerror(errno)))
        }
        let path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        defer { unlink(path) }
        let written = data.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == data.count else {
            throw MediaError(source: name, operation: "cannot buffer", reason: .other, detail: "short write")
        }
        do {
            return try decode(path: path, sampleRate: sampleRate, channelCount: channelCount)
        } catch {
            throw MediaError(source: name, operation: error.operation, reason: error.reason, detail: error.detail,
                             ffmpegCode: error.ffmpegCode, ffmpegLog: error.ffmpegLog)
        }
    }
}

/// libswresample from a decoder's frames to interleaved Float32 at a fixed rate and channel count.
/// The corresponding C functions are `swr_alloc_set_opts2`, `swr_init` and `swr_convert`.
final class Resampler {
    private var context: OpaquePointer?
    private let channelCount: Int
    private let outputRate: Int
    private let inputRate: Int
    private let source: String

    init(from frame: UnsafeMutablePointer<AVFrame>, sampleRate: Int, channelCount: Int, source: String) throws(MediaError) {
        self.channelCount = channelCount
        self.source = source
        outputRate = sampleRate
        inputRate = Int(frame.pointee.sample_rate)
        var outputLayout = AVChannelLayout()
        av_channel_layout_default(&outputLayout, Int32(channelCount))
        defer { av_channel_layout_uninit(&outputLayout) }
        var inputLayout = AVChannelLayout()
        if av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout) < 0 || inputLayout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_uninit(&inputLayout)
            av_channel_layout_default(&inputLayout, max(1, frame.pointee.ch_layout.nb_channels))
        }
        defer { av_channel_layout_uninit(&inputLayout) }
        var status = swr_alloc_set_opts2(
            &context, &outputLayout, AV_SAMPLE_FMT_FLT, Int32(sampleRate), &inputLayout,
            AVSampleFormat(rawValue: frame.pointee.format), frame.pointee.sample_rate, 0, nil)
        guard status >= 0, let context else { throw MediaError.ffmpeg(status, source: source, operation: "cannot resample") }
        status = swr_init(context)
        guard status >= 0 else { throw MediaError.ffmpeg(status, source: source, operation: "cannot resample") }
    }

    deinit { swr_free(&context) }

    /// Converts `frame` (or flushes the resampler when `nil`) and appends the output.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>?, appendingTo samples: inout [Float]) throws(MediaError) {
        let inputCount = Int(frame?.pointee.nb_samples ?? 0)
        let capacity = Int(swr_get_out_samples(context, Int32(inputCount))) + 32
        guard capacity > 0 else { return }
        let start = samples.count
        samples.append(contentsOf: repeatElement(0, count: capacity * channelCount))
        let produced = samples.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(buffer.baseAddress! + start)
                .assumingMemoryBound(to: UInt8.self)
            return withUnsafeMutablePointer(to: &output) { outputPlanes in
                if let frame {
                    return frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 1) {
                        swr_convert(context, outputPlanes, Int32(capacity), $0, Int32(inputCount))
                    }
                }
                return swr_convert(context, outputPlanes, Int32(capacity), nil, 0)
            }
        }
        guard produced >= 0 else {
            samples.removeLast(capacity * channelCount)
            throw MediaError.ffmpeg(produced, source: source, operation: "cannot resample")
        }
        samples.removeLast((capacity - Int(produced)) * channelCount)
    }
}
