package import CFFmpeg
import MediaSinks

/// One decoded frame (`AVFrame`), video or audio, reference-counted by FFmpeg and freed in `deinit`.
///
/// A frame can be the `storage` of a `VideoFrame`: the planes stay valid while the object lives.
/// It belongs to one thread at a time and may move between threads.
/// The corresponding C functions are `av_frame_alloc`, `av_frame_ref`, `av_frame_unref`, `av_frame_free`.
package final class Frame: @unchecked Sendable {
    /// The underlying frame.
    package let pointer: UnsafeMutablePointer<AVFrame>

    /// An empty frame.
    package init() {
        guard let frame = av_frame_alloc() else { fatalError("av_frame_alloc: out of memory") }
        pointer = frame
    }

    deinit {
        var frame: UnsafeMutablePointer<AVFrame>? = pointer
        av_frame_free(&frame)
    }

    /// A new frame that references the same buffers (no copy of the pixels or samples).
    package func reference() -> Frame? {
        let copy = Frame()
        return av_frame_ref(copy.pointer, pointer) >= 0 ? copy : nil
    }

    /// Drops the buffers and resets the fields.
    package func unref() { av_frame_unref(pointer) }

    /// Width in pixels (video).
    package var width: Int { Int(pointer.pointee.width) }
    /// Height in pixels (video).
    package var height: Int { Int(pointer.pointee.height) }
    /// `AVPixelFormat` (video) or `AVSampleFormat` (audio) raw value.
    package var format: Int32 { pointer.pointee.format }
    /// The pixel format of a video frame.
    package var pixelFormat: AVPixelFormat { AVPixelFormat(rawValue: pointer.pointee.format) }
    /// Audio samples per channel.
    package var sampleCount: Int { Int(pointer.pointee.nb_samples) }
    /// Audio sample rate.
    package var sampleRate: Int { Int(pointer.pointee.sample_rate) }
    /// Audio channel count.
    package var channelCount: Int { Int(pointer.pointee.ch_layout.nb_channels) }
    /// The decoder's best guess of the presentation timestamp, in the stream's time base.
    package var bestEffortTimestamp: Int64 { pointer.pointee.best_effort_timestamp }
    /// The presentation timestamp as set by the decoder, in the stream's time base.
    package var pts: Int64 { pointer.pointee.pts }
    /// Duration in the stream's time base (0 when unknown).
    package var duration: Int64 { pointer.pointee.pkt_duration }
    /// Whether this is a keyframe.
    package var isKeyframe: Bool { pointer.pointee.key_frame != 0 }
    /// The sample aspect ratio (0/1 when unknown).
    package var sampleAspectRatio: AVRational { pointer.pointee.sample_aspect_ratio }
    /// The YCbCr matrix.
    package var colorSpace: AVColorSpace { pointer.pointee.colorspace }
    /// Limited or full range.
    package var colorRange: AVColorRange { pointer.pointee.color_range }

    /// Plane `index`'s base address and bytes per row.
    package func plane(_ index: Int) -> (base: UnsafeMutablePointer<UInt8>?, bytesPerRow: Int) {
        withUnsafePointer(to: pointer.pointee.data) { data in
            withUnsafePointer(to: pointer.pointee.linesize) { lines in
                let bases = UnsafeRawPointer(data).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
                let strides = UnsafeRawPointer(lines).assumingMemoryBound(to: Int32.self)
                return (bases[index], Int(strides[index]))
            }
        }
    }
}
