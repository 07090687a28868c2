package import CFFmpeg

/// One compressed packet (`AVPacket`), reference-counted by FFmpeg and freed in `deinit`.
///
/// A packet belongs to one thread at a time; handing it to another (a demux thread to a
/// decode thread) is safe because nothing else holds the Swift object.
/// The corresponding C functions are `av_packet_alloc`, `av_packet_ref`, `av_packet_unref`, `av_packet_free`.
package final class Packet: @unchecked Sendable {
    /// The underlying packet.
    package let pointer: UnsafeMutablePointer<AVPacket>

    /// An empty packet.
    package init() {
        guard let packet = av_packet_alloc() else { fatalError("av_packet_alloc: out of memory") }
        pointer = packet
    }

    deinit {
        var packet: UnsafeMutablePointer<AVPacket>? = pointer
        av_packet_free(&packet)
    }

    /// A new packet that references the same data (no copy of the payload).
    package func reference() -> Packet? {
        let copy = Packet()
        return av_packet_ref(copy.pointer, pointer) >= 0 ? copy : nil
    }

    /// Drops the payload and resets the fields.
    package func unref() { av_packet_unref(pointer) }

    /// The index of the stream the packet belongs to.
    package var streamIndex: Int { Int(pointer.pointee.stream_index) }
    /// Presentation timestamp in the stream's time base (`AV_NOPTS_VALUE` when unknown).
    package var pts: Int64 { pointer.pointee.pts }
    /// Decoding timestamp in the stream's time base (`AV_NOPTS_VALUE` when unknown).
    package var dts: Int64 { pointer.pointee.dts }
    /// Duration in the stream's time base (0 when unknown).
    package var duration: Int64 { pointer.pointee.duration }
    /// The payload size in bytes.
    package var size: Int { Int(pointer.pointee.size) }
    /// Whether the packet starts a keyframe.
    package var isKeyframe: Bool { pointer.pointee.flags & vitrine_av_pkt_flag_key() != 0 }
    /// Whether the demuxer flagged the packet as corrupt.
    package var isCorrupt: Bool { pointer.pointee.flags & vitrine_av_pkt_flag_corrupt() != 0 }
}
