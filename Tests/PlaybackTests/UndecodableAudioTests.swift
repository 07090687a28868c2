import Foundation
import MediaAsset
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

/// An item whose audio track no decoder can play (fixture: undecodable_audio.mkv, an AAC track
/// whose Matroska codec ID was renamed) plays video-only on the display clock, with a warning.
@Suite("Undecodable audio track")
struct UndecodableAudioTests {
    @Test("the item plays every frame video-only, on the display clock, with an audio_unavailable event")
    func playsVideoOnly() throws {
        let file = Fixtures.path("undecodable_audio.mkv")
        let harness = Harness(refreshRate: 25, audio: true)
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        let log = Collector<PresentationRecord>()
        player.setPresentationHandler { log.append($0) }
        let item = PlayerItem(url: file)
        player.replaceCurrentItem(with: item)
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 1_000)
        recorder.wait(for: "rate 0.0")
        settle({ recorder.events.contains("didPlayToEnd") })

        // Not a failure: the item is ready and plays to its end, every frame once and in order.
        #expect(item.status == .readyToPlay)
        #expect(recorder.events.contains("didPlayToEnd"))
        let probed = Fixtures.videoFrames("undecodable_audio.mkv").map(\.presentationTime)
        #expect(probed.count >= 90)
        #expect(harness.shownTimes == probed)
        // No sound reached the audio sink, and no frame was paced by an audio clock.
        #expect(harness.audio?.recordedBuffers.isEmpty == true)
        let frames = log.values.compactMap { record -> PresentedFrame? in
            if case .frame(let frame) = record { return frame } else { return nil }
        }
        #expect(!frames.isEmpty && frames.allSatisfy { $0.audioClock == nil })
        // Why, on the item, on its track, and in the presentation log.
        let error = try #require(item.audioTrackError)
        #expect(error.description.contains(file) && error.description.contains("no decoder"), "\(error)")
        let audioTracks = item.tracks.filter { $0.mediaType == .audio }
        #expect(audioTracks.count == 1 && audioTracks.allSatisfy { !$0.isPlayable })
        let events = log.values.compactMap { record -> PresentationEvent? in
            if case .event(let event) = record { return event } else { return nil }
        }
        let warning = try #require(events.first { $0.kind == .audioUnavailable })
        #expect(warning.reason == error.description && warning.source == file && warning.itemIndex == 0)
        #expect(!events.contains { $0.kind == .itemFailed })
    }

    @Test("an item with a playable audio track reports no audio problem")
    func playableAudioHasNoWarning() {
        let harness = Harness(refreshRate: 25, audio: true)
        let player = harness.player(nil)
        defer { player.invalidate() }
        let recorder = EventRecorder(player)
        let item = PlayerItem(url: Fixtures.path("h264_aac.mp4"))
        player.replaceCurrentItem(with: item)
        #expect(recorder.wait(for: "player readyToPlay"))
        #expect(item.audioTrackError == nil)
        let audioTracks = item.tracks.filter { $0.mediaType == .audio }
        #expect(!audioTracks.isEmpty && audioTracks.allSatisfy { $0.isPlayable })
    }
}
