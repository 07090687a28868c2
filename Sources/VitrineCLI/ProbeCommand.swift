import ArgumentParser
import FoundationEssentials
import MediaAsset
import MediaTime
import MediaSinks

/// `vitrine probe FILE|URL [--json]`: format, duration, tracks and metadata of a file or URL.
struct ProbeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "probe",
        abstract: "Describe a media file or URL: format, duration, tracks, metadata.",
        discussion: """
            With --json the description is one JSON object whose shape is a stable interface,
            documented in docs/probe-json.md.

            Exit status: 0 when the media opened and has a playable audio or video track;
            1 when it cannot be opened or read, or none of its tracks can be decoded (one line on
            stderr names the file and the cause); 64 for a usage error.
            """)

    @Argument(help: "A file path, or a URL that FFmpeg opens (file:, http:, https:, an HLS playlist).")
    var input: String

    @Flag(help: "Print JSON (see docs/probe-json.md) instead of text.")
    var json = false

    @Option(help: "Seconds to wait for opening the input and for each read.")
    var timeout: Double = 15

    func validate() throws {
        guard timeout > 0, timeout <= 86_400 else { throw ValidationError("--timeout must be a positive number of seconds, at most a day (86400)") }
    }

    func run() async throws {
        let limit = Duration.seconds(timeout)
        let asset = Asset(pathOrURL: input, options: .init(openTimeout: limit, readTimeout: limit))
        let report: ProbeReport
        do {
            let (format, duration, tracks, metadata, groups, playable) = try await asset.load(
                .containerFormat, .duration, .tracks, .metadata, .mediaSelectionGroups, .isPlayable)
            report = ProbeReport(
                source: asset.source, format: format, duration: duration, tracks: tracks,
                metadata: metadata, groups: groups, isPlayable: playable)
        } catch {
            printError("vitrine: \(error)")
            throw ExitCode.failure
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(report)
            print(String(decoding: data, as: UTF8.self))
        } else {
            print(report.text)
        }
        if !report.isPlayable {
            let codecs = report.tracks.filter { $0.type == "video" || $0.type == "audio" }.map { track in
                "\"\(track.codec)\"" + (track.codecTag.map { " with fourcc \"\($0)\"" } ?? "")
            }
            // A decoder exists, yet nothing plays: a still picture FFmpeg could not read.
            let unreadable = report.tracks.filter { $0.type == "video" && $0.isDecodable }.map { "(a \"\($0.codec)\" picture FFmpeg could not read the size of)" }
            let error = MediaError(
                source: asset.source, operation: "cannot play",
                reason: codecs.isEmpty ? .noSuchTrack : unreadable.isEmpty ? .unsupportedCodec : .corruptData,
                detail: codecs.isEmpty ? "(no audio or video track)" : (unreadable.isEmpty ? codecs : unreadable).joined(separator: ", "),
                ffmpegCode: nil)
            printError("vitrine: \(error)")
            throw ExitCode.failure
        }
    }
}

/// The `probe --json` document. Field names and meanings are a stable interface (docs/probe-json.md).
struct ProbeReport: Encodable {
    struct Format: Encodable {
        var name: String
        var longName: String
        var duration: Double?
        var startTime: Double?
        var bitRate: Int
        var trackCount: Int
    }

    struct Track: Encodable {
        var index: Int
        var type: String
        var codec: String
        var codecLongName: String
        var codecTag: String?
        var profile: String?
        var isDecodable: Bool
        var language: String?
        var title: String?
        var isDefault: Bool
        var isForced: Bool
        var isAttachedPicture: Bool
        var timeBase: String
        var startTime: Double?
        var duration: Double?
        var bitRate: Int?
        var frameCount: Int?
        // Video
        var width: Int?
        var height: Int?
        var displayWidth: Int?
        var displayHeight: Int?
        var rotation: Int?
        var displayMatrixRotation: Double?
        var frameRate: String?
        var realFrameRate: String?
        var pixelFormat: String?
        var sampleAspectRatio: String?
        // Audio
        var sampleRate: Int?
        var channels: Int?
        var channelLayout: String?
        var metadata: [String: String]
    }

    struct Artwork: Encodable {
        var track: String
        var bytes: Int
    }

    struct CommonMetadata: Encodable {
        var title: String?
        var artist: String?
        var album: String?
        var creationDate: String?
        var description: String?
        var genre: String?
        var copyright: String?
        var software: String?
        var artwork: [Artwork]?
    }

    struct SelectionOption: Encodable {
        var track: Int
        var language: String?
        var displayName: String
        var isDefault: Bool
        var isForced: Bool
    }

    struct SelectionGroup: Encodable {
        var characteristic: String
        var options: [SelectionOption]
    }

    var source: String
    var format: Format
    var isPlayable: Bool
    var tracks: [Track]
    var metadata: [String: String]
    var commonMetadata: CommonMetadata
    var mediaSelectionGroups: [SelectionGroup]

    init(source: String, format: ContainerFormat, duration: MediaTime, tracks: [AssetTrack],
         metadata: [MetadataItem], groups: [MediaSelectionGroup], isPlayable: Bool) {
        self.source = source
        self.format = Format(
            name: format.name, longName: format.longName,
            duration: duration.isNumeric ? duration.seconds : nil,
            startTime: format.startTime.isNumeric ? format.startTime.seconds : nil,
            bitRate: format.bitRate, trackCount: tracks.count)
        self.isPlayable = isPlayable
        let origin = format.startTime.isNumeric ? format.startTime : .zero
        self.tracks = tracks.map { Self.track($0, origin: origin) }
        var tags: [String: String] = [:]
        for item in metadata where item.format == format.metadataFormat {
            if let value = item.stringValue { tags[item.key] = value }
        }
        self.metadata = tags
        func common(_ key: MetadataCommonKey) -> String? {
            metadata.filtered(byCommonKey: key).first?.stringValue
        }
        let artwork = metadata.filtered(byCommonKey: .artwork).compactMap { item in
            item.dataValue.map { Artwork(track: item.key, bytes: $0.count) }
        }
        commonMetadata = CommonMetadata(
            title: common(.title), artist: common(.artist), album: common(.album),
            creationDate: common(.creationDate), description: common(.description), genre: common(.genre),
            copyright: common(.copyright), software: common(.software), artwork: artwork.isEmpty ? nil : artwork)
        mediaSelectionGroups = groups.map { group in
            SelectionGroup(characteristic: group.characteristic.rawValue, options: group.options.map {
                SelectionOption(track: $0.trackID, language: $0.languageCode, displayName: $0.displayName,
                                isDefault: $0.isDefault, isForced: $0.isForced)
            })
        }
    }

    /// A track's entry; times are in the container's timeline (ffprobe's), so `origin` is added back.
    private static func track(_ track: AssetTrack, origin: MediaTime) -> Track {
        let isVideo = track.mediaType == .video
        let isAudio = track.mediaType == .audio
        var tags: [String: String] = [:]
        for item in track.metadata { if let value = item.stringValue { tags[item.key] = value } }
        return Track(
            index: track.trackID,
            type: track.mediaType.rawValue,
            codec: track.codecName,
            codecLongName: track.codecLongName,
            codecTag: track.codecTag,
            profile: track.profile,
            isDecodable: track.isDecodable,
            language: track.languageCode,
            title: track.title,
            isDefault: track.isDefault,
            isForced: track.isForced,
            isAttachedPicture: track.isAttachedPicture,
            timeBase: track.timeBase.description,
            startTime: track.timeRange.start.isNumeric ? (track.timeRange.start + origin).seconds : nil,
            duration: track.timeRange.duration.isNumeric ? track.timeRange.duration.seconds : nil,
            bitRate: track.bitRate > 0 ? track.bitRate : nil,
            frameCount: track.frameCount > 0 ? track.frameCount : nil,
            width: isVideo ? track.naturalSize.width : nil,
            height: isVideo ? track.naturalSize.height : nil,
            displayWidth: isVideo ? track.displaySize.width : nil,
            displayHeight: isVideo ? track.displaySize.height : nil,
            rotation: isVideo ? track.preferredRotation : nil,
            displayMatrixRotation: track.displayMatrixRotation,
            frameRate: isVideo ? track.nominalFrameRate.description : nil,
            realFrameRate: isVideo ? track.realFrameRate.description : nil,
            pixelFormat: track.pixelFormat,
            sampleAspectRatio: isVideo && track.sampleAspectRatio.isPositive
                ? "\(track.sampleAspectRatio.numerator):\(track.sampleAspectRatio.denominator)" : nil,
            sampleRate: isAudio ? track.sampleRate : nil,
            channels: isAudio ? track.channelCount : nil,
            channelLayout: isAudio ? track.channelLayout : nil,
            metadata: tags)
    }

    /// The human-readable form.
    var text: String {
        var lines: [String] = []
        let duration = format.duration.map { MediaTime.format(seconds: $0, decimals: 6) + " s" } ?? "unknown"
        lines.append("\(source)")
        lines.append("  format:   \(format.name) (\(format.longName))")
        lines.append("  duration: \(duration)")
        if format.bitRate > 0 { lines.append("  bit rate: \(format.bitRate / 1000) kb/s") }
        lines.append("  playable: \(isPlayable ? "yes" : "no")")
        for track in tracks {
            var parts = ["#\(track.index) \(track.type)", track.codec]
            if let width = track.width, let height = track.height { parts.append("\(width)x\(height)") }
            if let rotation = track.rotation, rotation != 0 { parts.append("rotated \(rotation)°") }
            if let rate = track.frameRate, rate != "0/0" { parts.append("\(rate) fps") }
            if let sampleRate = track.sampleRate { parts.append("\(sampleRate) Hz") }
            if let layout = track.channelLayout { parts.append(layout) }
            if let language = track.language { parts.append("[\(language)]") }
            if let title = track.title { parts.append("\"\(title)\"") }
            if track.isAttachedPicture { parts.append("(cover art)") }
            if !track.isDecodable { parts.append("(no decoder)") }
            lines.append("  track " + parts.joined(separator: ", "))
        }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            lines.append("  \(key): \(value)")
        }
        return lines.joined(separator: "\n")
    }
}
