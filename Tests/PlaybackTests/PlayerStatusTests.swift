import Foundation
import MediaAsset
import MediaTime
import Playback
import SinkDoubles
import Testing
import MediaSinks

@Suite("Player status")
struct PlayerStatusTests {
    static let displayGone = MediaError(source: "test display", operation: "cannot present", reason: .other, detail: "(connector unplugged for good)")
    static let deviceGone = MediaError(source: "test audio device", operation: "cannot play", reason: .other, detail: "(device removed)")

    @Test("starts unknown and becomes readyToPlay once, when its first item is ready")
    func unknownThenReady() async {
        let harness = Harness()
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        #expect(player.status == .unknown)
        #expect(player.error == nil)

        let first = PlayerItem(url: Fixtures.path("queue1.mp4"))
        let firstUpdates = first.statusUpdates
        player.replaceCurrentItem(with: first)
        for await status in firstUpdates where status != .unknown { break }
        #expect(recorder.wait(for: "player readyToPlay"))
        #expect(player.status == .readyToPlay)
        #expect(player.error == nil)

        // Later items change nothing: the player stays ready.
        let second = PlayerItem(url: Fixtures.path("queue2.mp4"))
        let secondUpdates = second.statusUpdates
        player.replaceCurrentItem(with: second)
        for await status in secondUpdates where status != .unknown { break }
        recorder.wait(for: "never", timeout: 0.2)
        #expect(recorder.events.filter { $0.hasPrefix("player") } == ["player readyToPlay"])
        #expect(player.status == .readyToPlay)
    }

    @Test("with no output at all the player stays unknown, even with a ready item")
    func noOutput() async {
        let item = PlayerItem(url: Fixtures.path("queue1.mp4"))
        let updates = item.statusUpdates
        let player = Player(item: item, videoSink: nil, audioSink: nil, clock: ManualClock())
        defer { player.invalidate() }
        for await status in updates where status != .unknown { break }
        #expect(item.status == .readyToPlay)
        #expect(player.status == .unknown)
    }

    @Test("an audio output alone is enough to become readyToPlay")
    func audioOutputOnly() async {
        let clock = ManualClock()
        let item = PlayerItem(url: Fixtures.path("tagged.m4a"))
        let updates = item.statusUpdates
        let player = Player(item: item, videoSink: nil, audioSink: RecordingAudioSink(clock: clock), clock: clock)
        defer { player.invalidate() }
        for await status in updates where status != .unknown { break }
        #expect(item.status == .readyToPlay)
        settle({ player.status == .readyToPlay })
        #expect(player.status == .readyToPlay)
    }

    @Test("an item that fails does not fail the player")
    func failedItemLeavesPlayerAlone() async {
        let harness = Harness()
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        let missing = PlayerItem(url: "/nonexistent/missing.mp4")
        let updates = missing.statusUpdates
        player.replaceCurrentItem(with: missing)
        for await status in updates where status != .unknown { break }
        #expect(missing.status == .failed)
        #expect(player.status == .unknown)
        #expect(player.error == nil)

        player.replaceCurrentItem(with: PlayerItem(url: Fixtures.path("queue1.mp4")))
        #expect(recorder.wait(for: "player readyToPlay"))
        #expect(player.status == .readyToPlay)
        #expect(!recorder.events.contains("player failed"))
    }

    @Test("a display that dies fails the player: rate 0, the error kept, play() refused")
    func videoOutputFails() async {
        let harness = Harness()
        let item = PlayerItem(url: Fixtures.path("queue1.mp4"))
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        player.replaceCurrentItem(with: item)
        player.play()
        harness.video.run(refreshes: 30)
        #expect(player.status == .readyToPlay)
        let shown = harness.video.presentations.count
        #expect(shown > 0)

        harness.video.reportFailure(Self.displayGone)
        #expect(player.status == .failed)
        #expect(player.error == Self.displayGone)
        #expect(player.rate == 0)
        #expect(recorder.wait(for: "player failed"))
        #expect(recorder.wait(for: "rate 0.0"))
        // Items keep their own status; the player does not play again.
        #expect(item.status == .readyToPlay)
        #expect(item.error == nil)
        player.play()
        #expect(player.rate == 0)
        harness.video.run(refreshes: 30)
        #expect(harness.video.presentations.count == shown)
        let statuses = recorder.events.filter { $0.hasPrefix("player") }
        #expect(statuses == ["player readyToPlay", "player failed"])
    }

    @Test("an audio output that dies fails the player too, and nothing more is fed to it")
    func audioOutputFails() async {
        let harness = Harness(audio: true)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        player.replaceCurrentItem(with: item)
        player.play()
        harness.video.run(refreshes: 30)
        #expect(player.status == .readyToPlay)

        harness.audio!.reportFailure(Self.deviceGone)
        #expect(player.status == .failed)
        #expect(player.error == Self.deviceGone)
        #expect(player.rate == 0)
        #expect(recorder.wait(for: "player failed"))
        let recorded = harness.audio!.recordedBuffers.count
        harness.video.run(refreshes: 30)
        settle(timeout: 0.2)
        #expect(harness.audio!.recordedBuffers.count == recorded)
    }

    @Test("a failure before any item is ready goes unknown → failed, and failed is final")
    func failsBeforeReady() async {
        let harness = Harness()
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        harness.video.reportFailure(Self.displayGone)
        #expect(player.status == .failed)
        #expect(recorder.wait(for: "player failed"))

        let item = PlayerItem(url: Fixtures.path("queue1.mp4"))
        let updates = item.statusUpdates
        player.replaceCurrentItem(with: item)
        for await status in updates where status != .unknown { break }
        recorder.wait(for: "never", timeout: 0.2)
        #expect(player.status == .failed)
        #expect(player.error == Self.displayGone)
        #expect(recorder.events.filter { $0.hasPrefix("player") } == ["player failed"])
    }
}
