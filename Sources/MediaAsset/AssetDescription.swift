internal import CFFmpeg
public import MediaTime

/// The container-level facts of an asset.
public struct ContainerFormat: Sendable, Hashable {
    /// libavformat's demuxer names, e.g. "mov,mp4,m4a,3gp,3g2,mj2" (ffprobe's `format_name`).
    public let name: String
    /// The descriptive name, e.g. "QuickTime / MOV" (ffprobe's `format_long_name`).
    public let longName: String
    /// The container's start time, or invalid when unknown.
    public let startTime: MediaTime
    /// The overall bit rate in bits per second; 0 when unknown.
    public let bitRate: Int
    /// The metadata key space of this container.
    public var metadataFormat: MetadataFormat { .forDemuxer(name) }
}

/// Everything one open of the media tells: read once per asset, on a background thread.
struct AssetDescription: Sendable {
    var format: ContainerFormat
    var duration: MediaTime
    var tracks: [AssetTrack]
    var metadata: [MetadataItem]

    var commonMetadata: [MetadataItem] { metadata.filter { $0.commonKey != nil } }

    var availableMetadataFormats: [MetadataFormat] {
        var formats: [MetadataFormat] = []
        for item in metadata where !formats.contains(item.format) { formats.append(item.format) }
        return formats
    }

    /// Playable when at least one audio or video track (not cover art) can be decoded. A still
    /// picture counts only when FFmpeg could read its size: its image demuxer opens any file by
    /// its name (100 random bytes called `.png` are a 0×0 PNG track), and opening it decodes the
    /// one picture, so a picture without a size is one its decoder refused.
    var isPlayable: Bool {
        let isStill = format.name == "image2" || format.name.hasSuffix("_pipe")
        return tracks.contains { track in
            guard track.isDecodable else { return false }
            switch track.mediaType {
            case .audio: return true
            case .video: return !track.isAttachedPicture && (!isStill || track.naturalSize.width > 0 && track.naturalSize.height > 0)
            default: return false
            }
        }
    }

    var mediaSelectionGroups: [MediaSelectionGroup] {
        var groups: [MediaSelectionGroup] = []
        for (characteristic, type) in [(MediaCharacteristic.audible, MediaType.audio), (.legible, .subtitle)] {
            let options = tracks.filter { $0.mediaType == type }.map { track in
                MediaSelectionOption(
                    trackID: track.trackID, mediaType: type, languageCode: track.languageCode,
                    displayName: track.title ?? track.languageCode.flatMap { LanguageNames.english[$0] ?? $0 } ?? "Track \(track.trackID)",
                    isDefault: track.isDefault, isForced: track.isForced)
            }
            if !options.isEmpty { groups.append(MediaSelectionGroup(characteristic: characteristic, options: options)) }
        }
        return groups
    }

    /// Reads the description from an open demuxer.
    init(demuxer: Demuxer) {
        let startTime = demuxer.startTime
        format = ContainerFormat(
            name: demuxer.formatName, longName: demuxer.formatLongName,
            startTime: startTime, bitRate: Int(demuxer.bitRate))
        duration = demuxer.duration
        let metadataFormat = format.metadataFormat
        var items = demuxer.metadata.map { tag in
            MetadataItem(format: metadataFormat, key: tag.key, commonKey: .forFFmpegKey(tag.key), value: .string(tag.value))
        }
        var tracks: [AssetTrack] = []
        for index in 0..<demuxer.streamCount {
            let stream = demuxer.stream(at: index)
            let track = Self.track(stream, containerStart: startTime, containerDuration: duration, format: metadataFormat)
            tracks.append(track)
            if track.isAttachedPicture {
                let picture = stream.pointee.attached_pic
                if picture.size > 0, let data = picture.data {
                    let bytes = Array(UnsafeBufferPointer(start: data, count: Int(picture.size)))
                    items.append(MetadataItem(format: .attachedPicture, key: "stream\(index)/\(track.codecName)", commonKey: .artwork, value: .data(bytes)))
                }
            }
        }
        self.tracks = tracks
        metadata = items
    }

    /// Every stream of `demuxer` as a track, without reading the container's metadata.
    static func tracks(of demuxer: Demuxer) -> [AssetTrack] {
        let format = MetadataFormat.forDemuxer(demuxer.formatName)
        let start = demuxer.startTime, duration = demuxer.duration
        return (0..<demuxer.streamCount).map { index in
            track(demuxer.stream(at: index), containerStart: start, containerDuration: duration, format: format)
        }
    }

    private static func track(
        _ stream: UnsafeMutablePointer<AVStream>, containerStart: MediaTime, containerDuration: MediaTime, format: MetadataFormat
    ) -> AssetTrack {
        let parameters = stream.pointee.codecpar.pointee
        let mediaType: MediaType
        switch parameters.codec_type {
        case AVMEDIA_TYPE_VIDEO: mediaType = .video
        case AVMEDIA_TYPE_AUDIO: mediaType = .audio
        case AVMEDIA_TYPE_SUBTITLE: mediaType = .subtitle
        default: mediaType = .data
        }
        let descriptor = avcodec_descriptor_get(parameters.codec_id)
        // ffprobe's names: "unknown" when FFmpeg has no descriptor for the codec.
        let codecName = descriptor.map { String(cString: $0.pointee.name) } ?? "unknown"
        var codecTag: String?
        if parameters.codec_tag != 0 {
            var tagBuffer = [CChar](repeating: 0, count: 32)
            av_fourcc_make_string(&tagBuffer, parameters.codec_tag)
            codecTag = String(decoding: tagBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        let codecLongName = descriptor.flatMap { $0.pointee.long_name.map { String(cString: $0) } } ?? codecName
        let profile = avcodec_profile_name(parameters.codec_id, parameters.profile).map { String(cString: $0) }
        let timeBase = stream.pointee.time_base
        let tags = Demuxer.tags(stream.pointee.metadata)
        func tag(_ key: String) -> String? { tags.first { $0.key.lowercased() == key }?.value }

        let matrixRotation = vitrine_stream_display_rotation(stream)
        let displayMatrixRotation: Double? = matrixRotation.isNaN ? nil : matrixRotation
        // FFmpeg's angle is counter-clockwise; the picture turns clockwise by its negation.
        var clockwise = 0
        if let displayMatrixRotation {
            let quarterTurns = Int((-displayMatrixRotation / 90).rounded())
            clockwise = ((quarterTurns % 4) + 4) % 4 * 90
        }

        // The asset's timeline starts at the container's start time (as `ffmpeg -ss` counts).
        let origin = containerStart.isNumeric ? containerStart : .zero
        var start = Demuxer.time(stream.pointee.start_time, timeBase: timeBase)
        start = start.isValid ? start - origin : .zero
        var trackDuration = Demuxer.time(stream.pointee.duration, timeBase: timeBase)
        if !trackDuration.isValid { trackDuration = containerDuration }

        var language = tag("language")
        if language == "und" || language?.isEmpty == true { language = nil }
        let disposition = stream.pointee.disposition
        let pixelFormat = mediaType == .video && parameters.format >= 0
            ? av_get_pix_fmt_name(AVPixelFormat(rawValue: parameters.format)).map { String(cString: $0) } : nil
        var channelLayout: String?
        if mediaType == .audio && parameters.ch_layout.nb_channels > 0 {
            var buffer = [CChar](repeating: 0, count: 64)
            var layout = parameters.ch_layout
            if av_channel_layout_describe(&layout, &buffer, buffer.count) > 0 {
                channelLayout = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
        }
        let isDecodable = parameters.codec_id != AV_CODEC_ID_NONE && avcodec_find_decoder(parameters.codec_id) != nil

        return AssetTrack(
            trackID: Int(stream.pointee.index),
            mediaType: mediaType,
            codecName: codecName,
            codecLongName: codecLongName,
            codecTag: codecTag,
            profile: profile,
            naturalSize: mediaType == .video ? PixelSize(width: Int(parameters.width), height: Int(parameters.height)) : .zero,
            preferredRotation: clockwise,
            displayMatrixRotation: displayMatrixRotation,
            nominalFrameRate: Rational(stream.pointee.avg_frame_rate),
            realFrameRate: Rational(stream.pointee.r_frame_rate),
            timeBase: Rational(timeBase),
            timeRange: TimeRange(start: start, duration: trackDuration),
            languageCode: language,
            title: tag("title"),
            isDecodable: isDecodable,
            isDefault: disposition & vitrine_av_disposition_default() != 0,
            isForced: disposition & vitrine_av_disposition_forced() != 0,
            isAttachedPicture: disposition & vitrine_av_disposition_attached_pic() != 0,
            pixelFormat: pixelFormat,
            sampleAspectRatio: Rational(parameters.sample_aspect_ratio),
            sampleRate: mediaType == .audio ? Int(parameters.sample_rate) : 0,
            channelCount: mediaType == .audio ? Int(parameters.ch_layout.nb_channels) : 0,
            channelLayout: channelLayout,
            bitRate: Int(parameters.bit_rate),
            frameCount: Int(stream.pointee.nb_frames),
            metadata: tags.map { MetadataItem(format: format, key: $0.key, commonKey: .forFFmpegKey($0.key), value: .string($0.value)) })
    }
}

extension Rational {
    init(_ rational: AVRational) { self.init(Int(rational.num), Int(rational.den)) }
}
