internal import CFFmpeg
public import MediaSinks

/// The kind of file a recording is written as.
public enum AudioFileFormat: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// WAV, uncompressed PCM (RF64 past 4 GB).
    case wav
    /// FLAC, lossless.
    case flac
    /// AAC in an MPEG-4 audio file (`.m4a`), lossy.
    case m4a

    /// The format a file name's extension says (`.wav`, `.flac`, `.m4a`/`.mp4`/`.aac`), or `nil`.
    public init?(pathExtensionOf path: String) {
        guard let dot = path.lastIndex(of: "."), !path[dot...].contains("/") else { return nil }
        switch path[path.index(after: dot)...].lowercased() {
        case "wav", "wave": self = .wav
        case "flac": self = .flac
        case "m4a", "mp4", "aac": self = .m4a
        default: return nil
        }
    }

    public var description: String { rawValue }
}

/// How much effort or how many bits encoding spends (AVAudioQuality's five steps): for AAC the bit
/// rate (32, 48, 64, 96 or 128 kbit/s per channel), for FLAC the compression level (0, 2, 5, 8, 12:
/// the samples are the same, the file smaller for more CPU), nothing for WAV.
public enum AudioQuality: Int, Sendable, Hashable, CaseIterable, Comparable, CustomStringConvertible {
    case min, low, medium, high, max

    public static func < (lhs: AudioQuality, rhs: AudioQuality) -> Bool { lhs.rawValue < rhs.rawValue }

    /// AAC bits per second for each channel.
    public var aacBitRatePerChannel: Int { [32_000, 48_000, 64_000, 96_000, 128_000][rawValue] }
    /// FLAC's compression level (FFmpeg's default, 5, is ``medium``).
    public var flacCompressionLevel: Int { [0, 2, 5, 8, 12][rawValue] }

    public var description: String { ["min", "low", "medium", "high", "max"][rawValue] }
}

/// Writes interleaved PCM samples to a WAV, FLAC or M4A (AAC) file with libavcodec and
/// libavformat: what a recorder hands it, in the order captured, it encodes and muxes; ``finish()``
/// drains the encoder and writes the trailer, after which the file is complete and playable.
///
/// Samples come in as 16-bit integers for 16-bit files, and as 32-bit integers whose upper 24 bits
/// carry the sample for 24-bit files (ALSA's `S32_LE` layout). WAV and FLAC keep them bit for bit;
/// AAC converts them to floating point. Used by one thread at a time (a recorder's capture thread).
///
/// ```swift
/// let writer = try AudioFileWriter(path: "room.flac", format: .flac, sampleRate: 48_000, channelCount: 2)
/// try samples.withUnsafeBufferPointer { try writer.append($0) }
/// try writer.finish()
/// ```
public final class AudioFileWriter {
    public let path: String
    public let format: AudioFileFormat
    public let sampleRate: Int
    public let channelCount: Int
    /// 16, or 24 (samples given as 32-bit words).
    public let bitDepth: Int
    /// The short name of the codec written: `pcm_s16le`, `pcm_s24le`, `flac`, `aac`.
    public var codecName: String { encoder.name }
    /// Frames appended so far.
    public private(set) var framesAppended: Int64 = 0

    private let encoder: Encoder
    private let muxer: Muxer
    private let staging = Frame()
    private let packet = Packet()
    /// Frames per encoder frame (the codec's frame size, or a chunk for PCM).
    private let stagingCapacity: Int
    private let isPlanarFloat: Bool
    private var stagedFrames = 0
    private var framesSent: Int64 = 0
    private var isFinished = false

    /// Creates `path` (replacing it) and writes the container's header.
    ///
    /// - Throws: ``MediaError`` naming the file: it cannot be created, the bit depth does not fit
    ///   the format, or FFmpeg refuses the encoder's parameters.
    public init(path: String, format: AudioFileFormat, sampleRate: Int, channelCount: Int, bitDepth: Int = 16,
                quality: AudioQuality = .medium) throws(MediaError) {
        guard [16, 24].contains(bitDepth) else {
            throw MediaError(source: path, operation: "cannot record", reason: .invalidRequest, detail: "a \(format) file holds 16- or 24-bit samples, not \(bitDepth)-bit")
        }
        guard sampleRate > 0, (1...8).contains(channelCount) else {
            throw MediaError(source: path, operation: "cannot record", reason: .invalidRequest,
                             detail: "\(sampleRate) Hz with \(channelCount) channels (1 to 8 channels)")
        }
        self.path = path
        self.format = format
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.bitDepth = bitDepth
        let packedFormat = bitDepth == 16 ? AV_SAMPLE_FMT_S16 : AV_SAMPLE_FMT_S32
        var parameters: Encoder.AudioParameters
        let container: String
        var options: [String: String] = [:]
        switch format {
        case .wav:
            parameters = .init(encoderName: bitDepth == 16 ? "pcm_s16le" : "pcm_s24le", sampleFormat: packedFormat,
                               sampleRate: sampleRate, channelCount: channelCount)
            container = "wav"
            options["rf64"] = "auto"
        case .flac:
            parameters = .init(encoderName: "flac", sampleFormat: packedFormat, sampleRate: sampleRate, channelCount: channelCount)
            parameters.compressionLevel = quality.flacCompressionLevel
            if bitDepth == 24 { parameters.bitsPerRawSample = 24 }
            container = "flac"
        case .m4a:
            parameters = .init(encoderName: "aac", sampleFormat: AV_SAMPLE_FMT_FLTP, sampleRate: sampleRate, channelCount: channelCount)
            parameters.bitRate = quality.aacBitRatePerChannel * channelCount
            container = "ipod"
            // Everything is in the file when it is closed; the index goes first for players that stream it.
            options["movflags"] = "+faststart"
        }
        parameters.globalHeader = Muxer.wantsGlobalHeader(formatName: container)
        encoder = try Encoder(audio: parameters, destination: path)
        muxer = try Muxer(path: path, formatName: container, encoder: encoder, options: options)
        isPlanarFloat = format == .m4a
        stagingCapacity = encoder.frameSize > 0 ? encoder.frameSize : 4_096
        let frame = staging.pointer
        frame.pointee.nb_samples = Int32(stagingCapacity)
        frame.pointee.format = parameters.sampleFormat.rawValue
        frame.pointee.sample_rate = Int32(sampleRate)
        av_channel_layout_copy(&frame.pointee.ch_layout, &encoder.context.pointee.ch_layout)
        let status = av_frame_get_buffer(frame, 0)
        guard status >= 0 else { throw MediaError.ffmpeg(status, source: path, operation: "cannot record") }
    }

    /// Appends interleaved 16-bit frames (a 16-bit file).
    public func append(_ samples: UnsafeBufferPointer<Int16>) throws(MediaError) {
        precondition(bitDepth == 16, "a \(bitDepth)-bit writer takes 32-bit words")
        try append(count: samples.count) { destination, offset, count in
            if isPlanarFloat {
                deinterleave(samples.baseAddress! + offset, count: count, scale: 1 / 32_768, into: destination)
            } else {
                destination.0.withMemoryRebound(to: Int16.self, capacity: (stagedFrames + count) * channelCount) {
                    ($0 + stagedFrames * channelCount).update(from: samples.baseAddress! + offset * channelCount, count: count * channelCount)
                }
            }
        }
    }

    /// Appends interleaved 32-bit words whose upper 24 bits are the samples (a 24-bit file).
    public func append(_ samples: UnsafeBufferPointer<Int32>) throws(MediaError) {
        precondition(bitDepth == 24, "a 16-bit writer takes 16-bit samples")
        try append(count: samples.count) { destination, offset, count in
            if isPlanarFloat {
                deinterleave(samples.baseAddress! + offset, count: count, scale: 1 / 2_147_483_648, into: destination)
            } else {
                destination.0.withMemoryRebound(to: Int32.self, capacity: (stagedFrames + count) * channelCount) {
                    let target = $0 + stagedFrames * channelCount
                    let source = samples.baseAddress! + offset * channelCount
                    // Only 24 bits count: the low byte is cleared so FLAC and WAV see the same samples.
                    for index in 0..<(count * channelCount) { target[index] = source[index] & ~0xFF }
                }
            }
        }
    }

    /// Copies `sampleCount` interleaved samples into staging frames (`fill(planes, offset, frames)`
    /// copies `frames` frames from input frame `offset`), encoding each full one.
    private func append(
        count sampleCount: Int, fill: (_ planes: (UnsafeMutablePointer<UInt8>, [UnsafeMutablePointer<UInt8>]), _ offset: Int, _ frames: Int) -> Void
    ) throws(MediaError) {
        precondition(!isFinished, "appending to a finished recording")
        precondition(sampleCount % channelCount == 0, "a partial frame")
        let total = sampleCount / channelCount
        var offset = 0
        while offset < total {
            if stagedFrames == 0 {
                let status = av_frame_make_writable(staging.pointer)
                guard status >= 0 else { throw MediaError.ffmpeg(status, source: path, operation: "cannot record") }
            }
            let count = min(total - offset, stagingCapacity - stagedFrames)
            fill(planes(), offset, count)
            stagedFrames += count
            offset += count
            framesAppended += Int64(count)
            if stagedFrames == stagingCapacity { try sendStaged() }
        }
    }

    /// The staging frame's data pointers: the first, and every plane (one per channel for planar float).
    private func planes() -> (UnsafeMutablePointer<UInt8>, [UnsafeMutablePointer<UInt8>]) {
        let frame = staging.pointer
        let first = frame.pointee.data.0!
        guard isPlanarFloat else { return (first, []) }
        let all = (0..<channelCount).map { frame.pointee.extended_data[$0]! }
        return (first, all)
    }

    private func deinterleave<Sample: BinaryInteger>(
        _ source: UnsafePointer<Sample>, count: Int, scale: Float, into planes: (UnsafeMutablePointer<UInt8>, [UnsafeMutablePointer<UInt8>])
    ) {
        for channel in 0..<channelCount {
            planes.1[channel].withMemoryRebound(to: Float.self, capacity: stagedFrames + count) { plane in
                var index = channel
                for frame in stagedFrames..<(stagedFrames + count) {
                    plane[frame] = Float(source[index]) * scale
                    index += channelCount
                }
            }
        }
    }

    /// Encodes the staged frames and writes what the encoder gives back.
    private func sendStaged() throws(MediaError) {
        guard stagedFrames > 0 else { return }
        let frame = staging.pointer
        frame.pointee.nb_samples = Int32(stagedFrames)
        frame.pointee.pts = framesSent
        try encoder.send(staging)
        framesSent += Int64(stagedFrames)
        stagedFrames = 0
        frame.pointee.nb_samples = Int32(stagingCapacity)
        try writePackets()
    }

    private func writePackets() throws(MediaError) {
        while true {
            switch try encoder.receive(into: packet) {
            case .packet:
                try muxer.write(packet)
                packet.unref()
            case .needsInput, .endOfStream:
                return
            }
        }
    }

    /// Encodes what is staged, drains the encoder, writes the trailer and closes the file: from
    /// now on it is complete and playable. Later calls do nothing.
    public func finish() throws(MediaError) {
        guard !isFinished else { return }
        isFinished = true
        if stagedFrames > 0 {
            if !encoder.acceptsShortLastFrame, encoder.frameSize > 0 {
                // Pad a codec that takes whole frames only with silence (none of ours does).
                let missing = stagingCapacity - stagedFrames
                av_samples_set_silence(staging.pointer.pointee.extended_data, Int32(stagedFrames), Int32(missing),
                                       Int32(channelCount), AVSampleFormat(rawValue: staging.pointer.pointee.format))
                stagedFrames = stagingCapacity
            }
            try sendStaged()
        }
        try encoder.send(nil)
        try writePackets()
        try muxer.finish()
    }
}
