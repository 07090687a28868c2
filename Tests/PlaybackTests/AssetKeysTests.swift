import Foundation
import MediaAsset
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Automatically loaded asset keys")
struct AssetKeysTests {
    @Test("the keys are loaded on the asset by the time the item is ready; others are not")
    func keysLoadedBeforeReady() async throws {
        let harness = Harness()
        let asset = Asset(pathOrURL: Fixtures.path("tagged.m4a"))
        let item = PlayerItem(asset: asset, automaticallyLoadedAssetKeys: ["duration", "metadata", "playable"])
        #expect(item.automaticallyLoadedAssetKeys == ["duration", "metadata", "playable"])
        #expect(asset.status(of: .duration) == .notYetLoaded)
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .readyToPlay)
        // Checked at the moment the item reported ready: nothing is still loading.
        #expect(asset.status(of: .duration) == .loaded)
        #expect(asset.status(of: .metadata) == .loaded)
        #expect(asset.status(of: .isPlayable) == .loaded)
        #expect(asset.status(of: .mediaSelectionGroups) == .notYetLoaded)
        let (duration, metadata) = try await asset.load(.duration, .metadata)
        #expect(duration.isNumeric && duration > .zero)
        #expect(!metadata.isEmpty)
    }

    @Test("a key that fails to load fails the item with the asset's error")
    func failingKey() async throws {
        let harness = Harness()
        let asset = Asset(pathOrURL: Fixtures.path("bad/text.mp4"))
        let item = PlayerItem(asset: asset, automaticallyLoadedAssetKeys: ["duration"])
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .failed)
        guard case .failed(let assetError) = asset.status(of: .duration) else {
            Issue.record("duration is \(asset.status(of: .duration)), not failed")
            return
        }
        #expect(item.error == assetError)
        #expect(item.error?.description.contains("bad/text.mp4") == true)
    }

    @Test("an unknown key fails the item, naming the key")
    func unknownKey() async {
        let harness = Harness()
        let item = PlayerItem(asset: Asset(pathOrURL: Fixtures.path("queue1.mp4")), automaticallyLoadedAssetKeys: ["duration", "colour"])
        let updates = item.statusUpdates
        let player = harness.player(item)
        defer { player.invalidate() }
        var iterator = updates.makeAsyncIterator()
        #expect(await iterator.next() == .failed)
        #expect(item.error?.reason == .invalidRequest)
        #expect(item.error?.description.contains("colour") == true)
    }

    @Test("a looped copy loads the same keys")
    func copyKeepsKeys() {
        let item = PlayerItem(asset: Asset(pathOrURL: Fixtures.path("queue1.mp4")), automaticallyLoadedAssetKeys: ["tracks"])
        #expect(item.copy().automaticallyLoadedAssetKeys == ["tracks"])
    }
}
