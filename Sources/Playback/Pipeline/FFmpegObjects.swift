internal import CFFmpeg
import MediaTime
import MediaAsset

/// Why an item could not play: the file, the step, and FFmpeg's own words.
public struct PlaybackError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public enum Kind: String, Sendable, Hashable {
        /// The input could not be opened or probed (missing file, not a media file, I/O timeout).
        case open
        /// The input has neither a decodable video nor audio track.
        case noPlayableTrack
        /// A decoder could not be set up.
        case decoderSetup
        /// Reading the input failed part-way (truncated or corrupt file, network loss).
        case read
        /// The item was removed or its player released before it finished loading.
        case cancelled
    }

    public let kind: Kind
    /// The input's URL or path.
    public let source: String
    /// What went wrong, with FFmpeg's message where there is one.
    public let reason: String

    public init(_ kind: Kind, source: String, reason: String) {
        self.kind = kind
        self.source = source
        self.reason = reason
    }

    public var description: String { "\(source): \(reason)" }
}

/// An `AVFrame` reference, freed when the last Swift reference goes: the ``VideoFrame/storage``
/// of every frame the engine hands to a sink, so planes are never copied.
// Unchecked: the frame is written by its decoder before the box is shared, then only read.
final class FrameBox: @unchecked Sendable {
    let frame: UnsafeMutablePointer<AVFrame>

    init?() {
        guard let frame = av_frame_alloc() else { return nil }
        self.frame = frame
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&pointer)
    }
}

/// An `AVPacket` owned by Swift, with the seek serial it was read under.
// Unchecked: handed from the demux thread to one decode thread, never shared.
final class PacketBox: @unchecked Sendable {
    let packet: UnsafeMutablePointer<AVPacket>
    let serial: Int

    init?(serial: Int) {
        guard let packet = av_packet_alloc() else { return nil }
        self.packet = packet
        self.serial = serial
    }

    deinit {
        var pointer: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&pointer)
    }
}

extension MediaTime {
    /// `ticks` of a stream's time base, as an exact rational time.
    init(ticks: Int64, timeBase: AVRational) {
        if timeBase.num == 1 || timeBase.num == 0 {
            self.init(value: ticks, timescale: timeBase.den)
        } else {
            self.init(value: ticks * Int64(timeBase.num), timescale: timeBase.den)
        }
    }

    /// This time in ticks of `timeBase`, rounded to nearest.
    func ticks(in timeBase: AVRational) -> Int64 {
        guard isNumeric, timeBase.num > 0 else { return 0 }
        return av_rescale_q(value, AVRational(num: 1, den: timescale), timeBase)
    }
}

/// FFmpeg's text for an error code.
func describeAVError(_ code: Int32) -> String { FFmpegMessage.describe(code) }
