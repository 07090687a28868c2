internal import CFFmpeg
package import MediaSinks
package import MediaTime

/// What the playback engine decodes of an open input and how it presents it: the tracks as the
/// asset describes them, the best video stream (never cover art), the audio stream that goes
/// with it, and the picture's rotation, pixel aspect and nominal frame duration.
package struct PlaybackStreams: Sendable {
    /// Every stream, as ``Asset/tracks`` describes it.
    package let tracks: [AssetTrack]
    /// The video stream to decode, if any (libavformat's best, unless it is an attached picture).
    package let videoStream: Int?
    /// The audio stream to decode by default, if any (the best one related to the video stream).
    package let audioStream: Int?
    /// Clockwise degrees the picture turns on screen (0, 90, 180, 270).
    package let rotation: Int
    /// The video stream's pixel aspect ratio (1 for square pixels or when unknown).
    package let sampleAspectRatio: Double
    /// One frame at the stream's nominal rate, or ``MediaTime/invalid`` when no rate is known.
    package let nominalFrameDuration: MediaTime
}

extension Demuxer {
    /// The streams the engine plays and how it presents them.
    ///
    /// The corresponding C function is `av_find_best_stream`.
    package func playbackStreams() -> PlaybackStreams {
        let tracks = AssetDescription.tracks(of: self)
        var video = bestStream(of: AVMEDIA_TYPE_VIDEO)
        if let index = video, tracks[index].isAttachedPicture { video = nil }
        let audio = av_find_best_stream(context, AVMEDIA_TYPE_AUDIO, -1, Int32(video ?? -1), nil, 0)
        var aspect = 1.0
        var frameDuration = MediaTime.invalid
        if let video {
            let stream = self.stream(at: video).pointee
            if stream.sample_aspect_ratio.num > 0 && stream.sample_aspect_ratio.den > 0 {
                aspect = Double(stream.sample_aspect_ratio.num) / Double(stream.sample_aspect_ratio.den)
            }
            let rate = stream.avg_frame_rate.num > 0 ? stream.avg_frame_rate : stream.r_frame_rate
            if rate.num > 0 && rate.den > 0 { frameDuration = MediaTime(value: Int64(rate.den), timescale: rate.num) }
        }
        return PlaybackStreams(
            tracks: tracks, videoStream: video, audioStream: audio >= 0 ? Int(audio) : nil,
            rotation: video.map { tracks[$0].preferredRotation } ?? 0, sampleAspectRatio: aspect,
            nominalFrameDuration: frameDuration)
    }

    /// `ticks` in the time base of stream `index` as a ``MediaTime`` (invalid for a missing
    /// timestamp), as ``time(_:timeBase:)`` converts it.
    package func time(_ ticks: Int64, stream index: Int) -> MediaTime {
        Self.time(ticks, timeBase: stream(at: index).pointee.time_base)
    }

    /// Whether the input can seek (a file, a server that accepts ranges; not a live pipe).
    package var isSeekable: Bool { context.pointee.pb.map { $0.pointee.seekable != 0 } ?? true }
}

extension Decoder {
    /// A decoder for stream `index` of `demuxer`.
    package convenience init(demuxer: Demuxer, stream index: Int, threadCount: Int = 0) throws(MediaError) {
        try self.init(stream: demuxer.stream(at: index), source: demuxer.source, threadCount: threadCount)
    }

    /// The coded picture size (video decoders).
    package var pictureSize: (width: Int, height: Int) { (Int(context.pointee.width), Int(context.pointee.height)) }

    /// `ticks` of the stream's time base as a ``MediaTime`` (invalid for a missing timestamp).
    package func time(_ ticks: Int64) -> MediaTime { Demuxer.time(ticks, timeBase: timeBase) }
}
