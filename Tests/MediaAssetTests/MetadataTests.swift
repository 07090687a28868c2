import Foundation
import Testing
import MediaAsset

@Suite("Metadata and media selection", .enabled(if: Fixtures.available, "run scripts/fixtures.sh"))
struct MetadataTests {
    @Test("common metadata gives title, artist, album, date, description and artwork")
    func commonKeys() async throws {
        let asset = Asset(pathOrURL: Fixtures.path("tagged.m4a"))
        let (common, formats) = try await asset.load(.commonMetadata, .availableMetadataFormats)
        #expect(common.filtered(byCommonKey: .title).first?.stringValue == "Morning Loop")
        #expect(common.filtered(byCommonKey: .artist).first?.stringValue == "Vitrine Band")
        #expect(common.filtered(byCommonKey: .album).first?.stringValue == "Signage Hits")
        #expect(common.filtered(byCommonKey: .description).first?.stringValue == "Played at opening time")
        let date = try #require(common.filtered(byCommonKey: .creationDate).first?.dateValue)
        #expect(date == Date(timeIntervalSince1970: 1_715_904_000))  // 2024-05-17T00:00:00Z
        let artwork = try #require(common.filtered(byCommonKey: .artwork).first?.dataValue)
        #expect(Array(artwork.prefix(4)) == [0x89, 0x50, 0x4E, 0x47])  // PNG signature
        #expect(formats.contains(.quickTime) && formats.contains(.attachedPicture))
    }

    @Test("items filter by identifier within their format")
    func identifiers() async throws {
        let metadata = try await Asset(pathOrURL: Fixtures.path("tagged.m4a")).load(.metadata)
        let titles = metadata.filtered(byIdentifier: "quicktime/title")
        #expect(titles.count == 1)
        #expect(titles.first?.stringValue == "Morning Loop")
        #expect(metadata.filtered(byIdentifier: "matroska/title").isEmpty)
        #expect(metadata.filtered(byFormat: .quickTime).allSatisfy { $0.identifier.hasPrefix("quicktime/") })
    }

    @Test("typed accessors convert text when they can")
    func typedAccessors() {
        let year = MetadataItem(format: .quickTime, key: "date", commonKey: .creationDate, value: .string("2024"))
        #expect(year.numberValue == 2024)
        #expect(year.dateValue == Date(timeIntervalSince1970: 1_704_067_200))
        let stamp = MetadataItem(format: .matroska, key: "creation_time", commonKey: .creationDate,
                                 value: .string("2024-05-17T10:20:30.500000Z"))
        #expect(stamp.dateValue == Date(timeIntervalSince1970: 1_715_941_230.5))
        let track = MetadataItem(format: .id3, key: "track", commonKey: nil, value: .string("3/12"))
        #expect(track.numberValue == 3)
        let text = MetadataItem(format: .id3, key: "title", commonKey: .title, value: .string("Hello"))
        #expect(text.numberValue == nil && text.dateValue == nil && text.dataValue == Array("Hello".utf8))
        let bytes = MetadataItem(format: .attachedPicture, key: "cover", commonKey: .artwork, value: .data([1, 2]))
        #expect(bytes.stringValue == nil && bytes.dataValue == [1, 2])
    }

    @Test("audible and legible groups list the languages with display names")
    func selectionGroups() async throws {
        let groups = try await Asset(pathOrURL: Fixtures.path("multilang.mkv")).load(.mediaSelectionGroups)
        #expect(groups.map(\.characteristic) == [.audible, .legible])
        let audible = groups[0], legible = groups[1]
        #expect(audible.options.map(\.languageCode) == ["eng", "ger"])
        #expect(audible.options.map(\.displayName) == ["English", "Deutsch"])
        #expect(audible.defaultOption?.trackID == 1)
        #expect(!audible.allowsEmptySelection)
        #expect(legible.options.map(\.languageCode) == ["eng", "ger"])
        #expect(legible.options.map(\.displayName) == ["English", "German"])
        #expect(legible.allowsEmptySelection)
        #expect(legible.options(withLanguage: "ger").map(\.trackID) == [4])
    }
}
