public import FoundationEssentials

/// The keys that mean the same thing in every container (AVFoundation's common key space).
public enum MetadataCommonKey: String, Sendable, Hashable, Codable, CaseIterable {
    case title, artist, album, creationDate, description, artwork
    case genre, copyright, software, author, albumArtist, composer, language

    /// The common key an FFmpeg tag maps to (FFmpeg already unifies most container keys).
    static func forFFmpegKey(_ key: String) -> MetadataCommonKey? {
        switch key.lowercased() {
        case "title": return .title
        case "artist", "performer": return .artist
        case "album": return .album
        case "date", "creation_time", "date_released", "year": return .creationDate
        case "description", "comment", "synopsis": return .description
        case "genre": return .genre
        case "copyright": return .copyright
        case "encoder", "encoding_tool", "software": return .software
        case "author": return .author
        case "album_artist": return .albumArtist
        case "composer": return .composer
        case "language": return .language
        default: return nil
        }
    }
}

/// The key space of a metadata item: which container (format) it comes from.
public struct MetadataFormat: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// QuickTime / MP4 / M4A ("udta", "ilst" tags).
    public static let quickTime = MetadataFormat(rawValue: "quicktime")
    /// Matroska and WebM tags.
    public static let matroska = MetadataFormat(rawValue: "matroska")
    /// ID3 tags (MP3).
    public static let id3 = MetadataFormat(rawValue: "id3")
    /// MPEG-TS service descriptors.
    public static let mpegTS = MetadataFormat(rawValue: "mpegts")
    /// Pictures attached to the file as streams (cover art).
    public static let attachedPicture = MetadataFormat(rawValue: "attachedPicture")
    public var description: String { rawValue }

    /// The key space of a libavformat demuxer name.
    static func forDemuxer(_ name: String) -> MetadataFormat {
        if name.hasPrefix("mov") { return .quickTime }
        if name.hasPrefix("matroska") { return .matroska }
        if name == "mp3" { return .id3 }
        if name == "mpegts" { return .mpegTS }
        return MetadataFormat(rawValue: name.split(separator: ",").first.map(String.init) ?? name)
    }
}

/// One piece of metadata: a key in a format's key space, its common key if any, and a value.
public struct MetadataItem: Sendable, Hashable {
    /// A value as stored: text or bytes.
    public enum Value: Sendable, Hashable {
        case string(String)
        case data([UInt8])
    }

    /// The key space the item comes from.
    public let format: MetadataFormat
    /// The key as the container (through FFmpeg) names it, e.g. "title" or "creation_time".
    public let key: String
    /// `format/key`, e.g. "quicktime/title": unique across key spaces, for filtering.
    public var identifier: String { "\(format.rawValue)/\(key)" }
    /// The key in the common key space, if the key has a common meaning.
    public let commonKey: MetadataCommonKey?
    /// The stored value.
    public let value: Value

    public init(format: MetadataFormat, key: String, commonKey: MetadataCommonKey?, value: Value) {
        self.format = format
        self.key = key
        self.commonKey = commonKey
        self.value = value
    }

    /// The value as text, or nil for binary data.
    public var stringValue: String? {
        if case .string(let text) = value { return text }
        return nil
    }

    /// The value as a number when the text is one (e.g. "2024" or "0.5"; "3/12" gives 3).
    public var numberValue: Double? {
        guard let text = stringValue.map(trimmed), !text.isEmpty else { return nil }
        if let number = Double(text) { return number }
        if let slash = text.firstIndex(of: "/"), let number = Double(text[..<slash]) { return number }
        return nil
    }

    /// The value as a date when the text is an ISO 8601 date or date-time
    /// ("2024", "2024-05-17", "2024-05-17T10:20:30Z", with optional fraction and offset).
    public var dateValue: Date? { stringValue.flatMap(ISO8601Parsing.date) }

    /// The value as bytes: the data itself, or the text's UTF-8.
    public var dataValue: [UInt8]? {
        switch value {
        case .data(let bytes): return bytes
        case .string(let text): return Array(text.utf8)
        }
    }
}

extension Sequence where Element == MetadataItem {
    /// The items whose ``MetadataItem/identifier`` is `identifier` (AVMetadataItem's filter).
    public func filtered(byIdentifier identifier: String) -> [MetadataItem] {
        filter { $0.identifier == identifier }
    }

    /// The items whose ``MetadataItem/commonKey`` is `commonKey`.
    public func filtered(byCommonKey commonKey: MetadataCommonKey) -> [MetadataItem] {
        filter { $0.commonKey == commonKey }
    }

    /// The items of one format (key space).
    public func filtered(byFormat format: MetadataFormat) -> [MetadataItem] {
        filter { $0.format == format }
    }
}

/// A small ISO 8601 reader that needs no calendar database.
enum ISO8601Parsing {
    static func date(_ text: String) -> Date? {
        let scalars = Array(trimmed(text).utf8)
        var index = 0
        func number(_ digits: Int) -> Int? {
            guard index + digits <= scalars.count else { return nil }
            var value = 0
            for byte in scalars[index..<index + digits] {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            index += digits
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            if index < scalars.count && scalars[index] == byte { index += 1; return true }
            return false
        }
        guard let year = number(4) else { return nil }
        var month = 1, day = 1, hour = 0, minute = 0, second = 0.0, offset = 0
        if skip(UInt8(ascii: "-")) {
            guard let m = number(2), (1...12).contains(m) else { return nil }
            month = m
            if skip(UInt8(ascii: "-")) {
                guard let d = number(2), (1...31).contains(d) else { return nil }
                day = d
            }
        }
        if skip(UInt8(ascii: "T")) || skip(UInt8(ascii: " ")) {
            guard let h = number(2), skip(UInt8(ascii: ":")), let mi = number(2) else { return nil }
            hour = h
            minute = mi
            if skip(UInt8(ascii: ":")) {
                guard let s = number(2) else { return nil }
                second = Double(s)
                if skip(UInt8(ascii: ".")) {
                    var scale = 0.1
                    while index < scalars.count, scalars[index] >= 48, scalars[index] <= 57 {
                        second += Double(scalars[index] - 48) * scale
                        scale /= 10
                        index += 1
                    }
                }
            }
            if skip(UInt8(ascii: "Z")) {
                offset = 0
            } else if index < scalars.count, scalars[index] == UInt8(ascii: "+") || scalars[index] == UInt8(ascii: "-") {
                let sign = scalars[index] == UInt8(ascii: "+") ? 1 : -1
                index += 1
                guard let oh = number(2) else { return nil }
                _ = skip(UInt8(ascii: ":"))
                let om = number(2) ?? 0
                offset = sign * (oh * 3600 + om * 60)
            }
        }
        guard index == scalars.count else { return nil }
        // Days from the civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 - offset) + second
        return Date(timeIntervalSince1970: seconds)
    }
}

/// The characteristic a group of alternative tracks shares.
public enum MediaCharacteristic: String, Sendable, Hashable, Codable {
    /// Sound: alternative audio tracks (languages, commentary).
    case audible
    /// Text: subtitles and captions.
    case legible
}

/// One choice in a ``MediaSelectionGroup``: a track with its language and a name to show.
public struct MediaSelectionOption: Sendable, Hashable {
    /// The track this option selects.
    public let trackID: Int
    public let mediaType: MediaType
    /// ISO 639-2 code from the container, e.g. "eng"; nil when unknown.
    public let languageCode: String?
    /// A name for menus: the track's title, else the language's English name, else "Track N".
    public let displayName: String
    /// Whether the container marks the track as default.
    public let isDefault: Bool
    /// Whether the track is forced (subtitles shown regardless of selection).
    public let isForced: Bool
}

/// Alternative tracks of one characteristic, of which a player plays one (or none, for subtitles).
public struct MediaSelectionGroup: Sendable, Hashable {
    public let characteristic: MediaCharacteristic
    public let options: [MediaSelectionOption]
    /// Whether selecting nothing is allowed (true for subtitles).
    public var allowsEmptySelection: Bool { characteristic == .legible }
    /// The option marked default, else the first audio option; nil for subtitles without a default.
    public var defaultOption: MediaSelectionOption? {
        options.first(where: \.isDefault) ?? (characteristic == .audible ? options.first : nil)
    }
    /// The options whose language is `languageCode` (ISO 639-2, e.g. "ger").
    public func options(withLanguage languageCode: String) -> [MediaSelectionOption] {
        options.filter { $0.languageCode == languageCode }
    }
}

/// English names for the most common ISO 639-2 codes, for display names.
enum LanguageNames {
    static let english: [String: String] = [
        "eng": "English", "ger": "German", "deu": "German", "fre": "French", "fra": "French",
        "spa": "Spanish", "ita": "Italian", "por": "Portuguese", "dut": "Dutch", "nld": "Dutch",
        "swe": "Swedish", "nor": "Norwegian", "dan": "Danish", "fin": "Finnish", "pol": "Polish",
        "rus": "Russian", "jpn": "Japanese", "chi": "Chinese", "zho": "Chinese", "kor": "Korean",
        "ara": "Arabic", "tur": "Turkish", "gre": "Greek", "ell": "Greek", "heb": "Hebrew",
        "hin": "Hindi", "cze": "Czech", "ces": "Czech", "hun": "Hungarian", "ukr": "Ukrainian",
    ]
}

/// `text` without leading and trailing spaces, tabs and newlines.
func trimmed(_ text: String) -> String {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
    guard let first = text.firstIndex(where: { !isSpace($0) }), let last = text.lastIndex(where: { !isSpace($0) }) else { return "" }
    return String(text[first...last])
}
