internal import CFFmpeg
package import MediaTime
package import MediaSinks

/// Turns decoded `AVFrame`s into ``VideoFrame``s without copying pixels when the format is one a
/// sink understands, and through swscale to YUV 4:2:0 otherwise.
// Unchecked: owned by one video decode thread.
package final class VideoFrameConverter: @unchecked Sendable {
    private var scaler: OpaquePointer?
    private var scalerKey: (Int32, Int32, Int32) = (-1, -1, -1)
    let rotation: Int
    let sampleAspectRatio: Double

    package init(rotation: Int, sampleAspectRatio: Double) {
        self.rotation = rotation
        self.sampleAspectRatio = sampleAspectRatio
    }

    deinit { sws_freeContext(scaler) }

    static func pixelFormat(_ format: Int32) -> (VideoFrame.PixelFormat, forcedFullRange: Bool)? {
        switch AVPixelFormat(format) {
        case AV_PIX_FMT_YUV420P: return (.yuv420p, false)
        case AV_PIX_FMT_YUVJ420P: return (.yuv420p, true)
        case AV_PIX_FMT_NV12: return (.nv12, false)
        case AV_PIX_FMT_P010LE: return (.p010, false)
        case AV_PIX_FMT_RGBA: return (.rgba, true)
        case AV_PIX_FMT_RGB24: return (.rgb24, true)
        default: return nil
        }
    }

    /// The frame as a sink sees it, with `presentationTime` in item time.
    package func convert(_ box: Frame, presentationTime: MediaTime, duration: MediaTime) -> VideoFrame? {
        var source = box
        var mapped = VideoFrameConverter.pixelFormat(box.pointer.pointee.format)
        if mapped == nil {
            guard let converted = toYUV420P(box) else { return nil }
            source = converted
            mapped = (.yuv420p, false)
        }
        guard let (format, forcedFull) = mapped else { return nil }
        let frame = source.pointer.pointee
        let width = Int(frame.width), height = Int(frame.height)
        let sizes = VideoFrame.planeSizes(format, width: width, height: height)
        var planes: [VideoFrame.Plane] = []
        planes.reserveCapacity(sizes.count)
        withUnsafeBytes(of: frame.data) { data in
            withUnsafeBytes(of: frame.linesize) { lines in
                let pointers = data.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                let strides = lines.bindMemory(to: Int32.self)
                for (index, size) in sizes.enumerated() {
                    guard let base = pointers[index] else { continue }
                    planes.append(VideoFrame.Plane(
                        base: UnsafeRawPointer(base), bytesPerRow: Int(strides[index]), width: size.0, height: size.1))
                }
            }
        }
        let matrix: VideoFrame.ColorMatrix
        switch frame.colorspace {
        case AVCOL_SPC_BT709: matrix = .bt709
        case AVCOL_SPC_BT470BG, AVCOL_SPC_SMPTE170M, AVCOL_SPC_SMPTE240M: matrix = .bt601
        case AVCOL_SPC_BT2020_NCL, AVCOL_SPC_BT2020_CL: matrix = .bt2020
        default: matrix = height >= 720 ? .bt709 : .bt601
        }
        let range: VideoFrame.ColorRange = forcedFull || frame.color_range == AVCOL_RANGE_JPEG ? .full : .limited
        return VideoFrame(
            storage: source, planes: planes, width: width, height: height, pixelFormat: format,
            colorMatrix: matrix, colorRange: range, presentationTime: presentationTime, duration: duration,
            rotation: rotation, sampleAspectRatio: sampleAspectRatio)
    }

    /// The corresponding C function is `sws_scale_frame`.
    private func toYUV420P(_ box: Frame) -> Frame? {
        let source = box.pointer.pointee
        let key = (source.width, source.height, source.format)
        if scaler == nil || scalerKey != key {
            sws_freeContext(scaler)
            scaler = sws_getContext(
                source.width, source.height, AVPixelFormat(source.format), source.width, source.height,
                AV_PIX_FMT_YUV420P, Int32(vitrine_sws_bilinear()), nil, nil, nil)
            scalerKey = key
        }
        guard let scaler else { return nil }
        let output = Frame()
        output.pointer.pointee.width = source.width
        output.pointer.pointee.height = source.height
        output.pointer.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        guard av_frame_get_buffer(output.pointer, 0) >= 0 else { return nil }
        guard sws_scale_frame(scaler, output.pointer, box.pointer) >= 0 else { return nil }
        output.pointer.pointee.colorspace = source.colorspace
        output.pointer.pointee.color_range = source.color_range
        return output
    }
}

/// Converts decoded audio to the sink's interleaved float format. The corresponding C functions
/// are `swr_alloc_set_opts2` and `swr_convert`.
// Unchecked: owned by one audio decode thread.
package final class AudioResampler: @unchecked Sendable {
    private var context: OpaquePointer?
    private var inputKey: (Int32, Int32, Int32) = (-1, -1, -1)
    let format: AudioFormat
    /// The speed change in effect (see ``convert(_:presentationTime:speedAdjustment:)``) and the
    /// fraction of a sample it owes, carried from frame to frame so none is lost to rounding.
    private var adjustment: Double = 0
    private var owedSamples: Double = 0

    package init(format: AudioFormat) { self.format = format }

    deinit { swr_free(&context) }

    /// Converts one decoded frame. `speedAdjustment` plays it that much faster (positive) or
    /// slower: libswresample's soft compensation drops or adds that fraction of the output's
    /// samples, spread over the frame (at most ±0.5 % is asked for: inaudible), so a player
    /// following another clock can ease out an error without a jump in the sound. The buffer's
    /// presentation time stays the frame's: the sound's clock stays true at every buffer.
    package func convert(_ box: Frame, presentationTime: MediaTime, speedAdjustment: Double = 0) -> AudioBuffer? {
        let frame = box.pointer
        let key = (frame.pointee.format, frame.pointee.sample_rate, frame.pointee.ch_layout.nb_channels)
        if context == nil || inputKey != key {
            owedSamples = 0
            adjustment = 0
            swr_free(&context)
            var outputLayout = AVChannelLayout()
            av_channel_layout_default(&outputLayout, Int32(format.channelCount))
            var inputLayout = AVChannelLayout()
            if av_channel_layout_copy(&inputLayout, &frame.pointee.ch_layout) < 0 || inputLayout.order == AV_CHANNEL_ORDER_UNSPEC {
                av_channel_layout_uninit(&inputLayout)
                av_channel_layout_default(&inputLayout, max(1, frame.pointee.ch_layout.nb_channels))
            }
            let made = swr_alloc_set_opts2(
                &context, &outputLayout, AV_SAMPLE_FMT_FLT, Int32(format.sampleRate),
                &inputLayout, AVSampleFormat(frame.pointee.format), frame.pointee.sample_rate, 0, nil)
            av_channel_layout_uninit(&inputLayout)
            av_channel_layout_uninit(&outputLayout)
            guard made >= 0, swr_init(context) >= 0 else { swr_free(&context); return nil }
            inputKey = key
        }
        if speedAdjustment != 0 || adjustment != 0 {
            // Output samples this frame makes at 1:1, and how many fewer (or more) it should make.
            let expected = Int64(frame.pointee.nb_samples) * Int64(format.sampleRate) / Int64(max(1, frame.pointee.sample_rate))
            owedSamples -= Double(expected) * speedAdjustment / (1 + speedAdjustment)
            let delta = Int32(owedSamples.rounded(.towardZero))
            owedSamples -= Double(delta)
            if speedAdjustment == 0 { owedSamples = 0 }
            adjustment = speedAdjustment
            _ = swr_set_compensation(context, delta, speedAdjustment == 0 ? 0 : Int32(max(expected, 1)))
        }
        let capacity = Int(swr_get_out_samples(context, frame.pointee.nb_samples)) + 16
        guard capacity > 16 else { return nil }
        // swresample writes every sample it reports: no zero-fill first.
        let channels = format.channelCount
        var produced: Int32 = 0
        let samples = [Float](unsafeUninitializedCapacity: capacity * channels) { buffer, initialized in
            var output: UnsafeMutablePointer<UInt8>? = UnsafeMutableRawPointer(buffer.baseAddress!).assumingMemoryBound(to: UInt8.self)
            produced = frame.pointee.extended_data.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { input in
                swr_convert(context, &output, Int32(capacity), input, frame.pointee.nb_samples)
            }
            initialized = max(0, Int(produced)) * channels
        }
        guard produced > 0 else { return nil }
        // Resampled faster or slower, the samples still cover the decoded frame's time.
        let covered = adjustment == 0 ? nil : MediaTime(value: Int64(frame.pointee.nb_samples), timescale: max(1, frame.pointee.sample_rate))
        return AudioBuffer(samples: samples, format: format, presentationTime: presentationTime, duration: covered)
    }
}
