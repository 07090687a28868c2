public import MediaTime

/// A size in pixels.
public struct PixelSize: Sendable, Hashable, Codable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
    /// 0 x 0.
    public static let zero = PixelSize(width: 0, height: 0)
    public var description: String { "\(width)x\(height)" }
}

/// An exact ratio of two integers, e.g. a frame rate of 30000/1001.
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int
    public var denominator: Int
    public init(_ numerator: Int, _ denominator: Int) {
        self.numerator = numerator
        self.denominator = denominator
    }
    /// 0/0 (FFmpeg's "unknown").
    public static let unknown = Rational(0, 0)
    /// Whether the ratio is a positive number.
    public var isPositive: Bool { numerator > 0 && denominator > 0 }
    /// The value as a `Double` (NaN when the denominator is 0).
    public var doubleValue: Double { denominator == 0 ? .nan : Double(numerator) / Double(denominator) }
    /// `numerator/denominator`, as ffprobe prints rates.
    public var description: String { "\(numerator)/\(denominator)" }
}

/// The kind of media a track carries.
public enum MediaType: String, Sendable, Hashable, Codable, CaseIterable {
    case video, audio, subtitle, data
}

/// One stream of an ``Asset``: its codec, geometry, timing and language.
///
/// Values are snapshots read when the asset's tracks were loaded.
public struct AssetTrack: Sendable, Hashable, Identifiable {
    /// The track's identifier: the stream index in the container (ffprobe's `index`).
    public let trackID: Int
    public var id: Int { trackID }
    /// Video, audio, subtitle or data (attachments and unknown streams are data).
    public let mediaType: MediaType
    /// FFmpeg's short codec name, e.g. "h264", "aac", "subrip"; "none" when unknown.
    public let codecName: String
    /// FFmpeg's descriptive codec name, e.g. "H.264 / AVC / MPEG-4 AVC / MPEG-4 part 10".
    public let codecLongName: String
    /// The container's four-character code for the codec, e.g. "avc1" (ffprobe's `codec_tag_string`); nil when 0.
    public let codecTag: String?
    /// The codec profile, e.g. "High", when FFmpeg knows it.
    public let profile: String?
    /// The stored picture size (before rotation); zero for non-video tracks.
    public let naturalSize: PixelSize
    /// The picture's shape on screen after ``preferredRotation``.
    public var displaySize: PixelSize {
        preferredRotation % 180 == 0 ? naturalSize : PixelSize(width: naturalSize.height, height: naturalSize.width)
    }
    /// Clockwise degrees (0, 90, 180 or 270) to turn the picture for display, from the display matrix.
    public let preferredRotation: Int
    /// The display matrix's rotation as FFmpeg (and ffprobe) reports it: counter-clockwise degrees,
    /// or nil when the stream has no display matrix.
    public let displayMatrixRotation: Double?
    /// The average frame rate (ffprobe's `avg_frame_rate`), or ``Rational/unknown``.
    public let nominalFrameRate: Rational
    /// The lowest rate that represents every timestamp (ffprobe's `r_frame_rate`).
    public let realFrameRate: Rational
    /// The timestamp unit of the stream.
    public let timeBase: Rational
    /// Where the track starts and how long it lasts, in the asset's timeline: zero is the
    /// container's start time (``ContainerFormat/startTime``), as for ``AssetImageGenerator``.
    /// A track without its own duration gets the container's.
    public let timeRange: TimeRange
    /// The ISO 639-2 language code from the container (e.g. "eng"); nil when absent or "und".
    public let languageCode: String?
    /// The track's title from the container, if any.
    public let title: String?
    /// Whether FFmpeg has a decoder for the codec.
    public let isDecodable: Bool
    /// Whether the container marks the track as default.
    public let isDefault: Bool
    /// Whether the container marks the track as forced (subtitles).
    public let isForced: Bool
    /// Whether the track is a still picture attached as artwork (cover art).
    public let isAttachedPicture: Bool
    /// The pixel format name, e.g. "yuv420p", for video.
    public let pixelFormat: String?
    /// The sample aspect ratio (1/1 for square pixels; unknown when not stated).
    public let sampleAspectRatio: Rational
    /// Samples per second, for audio; 0 otherwise.
    public let sampleRate: Int
    /// Channel count, for audio; 0 otherwise.
    public let channelCount: Int
    /// The channel layout's name, e.g. "stereo", for audio.
    public let channelLayout: String?
    /// Bits per second as stated by the container or codec; 0 when unknown.
    public let bitRate: Int
    /// The number of frames (or packets) the container states; 0 when unknown.
    public let frameCount: Int
    /// The stream-level metadata tags.
    public let metadata: [MetadataItem]
}
