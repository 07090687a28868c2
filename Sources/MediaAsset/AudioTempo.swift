internal import CFFmpeg
public import MediaSinks

extension DecodedAudio {
    /// The same audio played `rate` times as fast with its pitch kept (libavfilter's `atempo`),
    /// for AudioPlayer's `rate` (0.5 … 2.0).
    /// The corresponding C functions are `avfilter_graph_create_filter`, `av_buffersrc_add_frame`
    /// and `av_buffersink_get_frame` (libavfilter is loaded on the first call: ``FilterLibrary``).
    public func changingTempo(by rate: Double) throws(MediaError) -> DecodedAudio {
        guard rate != 1 else { return self }
        guard (0.5...2.0).contains(rate) else {
            throw MediaError(source: "audio", operation: "cannot change tempo", reason: .invalidRequest, detail: "rate \(rate) is outside 0.5…2")
        }
        let filters = try FilterLibrary.shared.get()
        var graph = filters.graphAlloc()
        defer { filters.graphFree(&graph) }
        guard let graph else { throw MediaError(source: "audio", operation: "cannot change tempo", reason: .outOfMemory) }

        var layout = AVChannelLayout()
        av_channel_layout_default(&layout, Int32(channelCount))
        defer { av_channel_layout_uninit(&layout) }
        var layoutName = [CChar](repeating: 0, count: 64)
        av_channel_layout_describe(&layout, &layoutName, layoutName.count)
        let sourceArguments = "time_base=1/\(sampleRate):sample_rate=\(sampleRate):sample_fmt=flt:channel_layout=\(layoutName.withUnsafeBufferPointer { String(cString: $0.baseAddress!) })"

        func fail(_ status: Int32) -> MediaError { MediaError.ffmpeg(status, source: "audio", operation: "cannot change tempo") }
        var source: UnsafeMutablePointer<AVFilterContext>?
        var tempo: UnsafeMutablePointer<AVFilterContext>?
        var sink: UnsafeMutablePointer<AVFilterContext>?
        var status = filters.graphCreateFilter(&source, filters.filterByName("abuffer"), "in", sourceArguments, nil, graph)
        guard status >= 0 else { throw fail(status) }
        status = filters.graphCreateFilter(&tempo, filters.filterByName("atempo"), "tempo", "tempo=\(rate)", nil, graph)
        guard status >= 0 else { throw fail(status) }
        status = filters.graphCreateFilter(&sink, filters.filterByName("abuffersink"), "out", nil, nil, graph)
        guard status >= 0 else { throw fail(status) }
        status = filters.link(source, 0, tempo, 0)
        guard status >= 0 else { throw fail(status) }
        status = filters.link(tempo, 0, sink, 0)
        guard status >= 0 else { throw fail(status) }
        status = filters.graphConfig(graph, nil)
        guard status >= 0 else { throw fail(status) }

        var output: [Float] = []
        output.reserveCapacity(Int(Double(samples.count) / rate) + 4096)
        let frame = Frame()
        func drainSink() throws(MediaError) {
            while true {
                let got = filters.sinkGetFrame(sink, frame.pointer)
                if got == vitrine_averror_eagain() || got == vitrine_averror_eof() { return }
                guard got >= 0 else { throw fail(got) }
                let count = Int(frame.pointer.pointee.nb_samples) * channelCount
                frame.pointer.pointee.data.0!.withMemoryRebound(to: Float.self, capacity: count) {
                    output.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
                }
                frame.unref()
            }
        }

        let chunk = 4096
        var offset = 0
        let total = frameCount
        while offset < total {
            let count = min(chunk, total - offset)
            let input = Frame()
            input.pointer.pointee.nb_samples = Int32(count)
            input.pointer.pointee.format = AV_SAMPLE_FMT_FLT.rawValue
            input.pointer.pointee.sample_rate = Int32(sampleRate)
            input.pointer.pointee.pts = Int64(offset)
            av_channel_layout_copy(&input.pointer.pointee.ch_layout, &layout)
            status = av_frame_get_buffer(input.pointer, 0)
            guard status >= 0 else { throw fail(status) }
            samples.withUnsafeBufferPointer { buffer in
                input.pointer.pointee.data.0!.withMemoryRebound(to: Float.self, capacity: count * channelCount) {
                    $0.update(from: buffer.baseAddress! + offset * channelCount, count: count * channelCount)
                }
            }
            status = filters.sourceAddFrame(source, input.pointer)
            guard status >= 0 else { throw fail(status) }
            try drainSink()
            offset += count
        }
        status = filters.sourceAddFrame(source, nil)
        guard status >= 0 else { throw fail(status) }
        try drainSink()
        return DecodedAudio(samples: output, sampleRate: sampleRate, channelCount: channelCount)
    }
}
