import MediaAsset
import MediaTime
import MediaSinks
import Playback
import SinkDoubles
import Testing

@Suite("Media selection")
struct MediaSelectionTests {
    @Test("a selected subtitle track reaches the video sink as text, at its times")
    func subtitlesAsText() async throws {
        let path = Fixtures.path("multilang.mkv")
        let groups = try await Asset(pathOrURL: path).load(.mediaSelectionGroups)
        let legible = try #require(groups.first { $0.characteristic == .legible })
        let german = try #require(legible.options(withLanguage: "ger").first)
        let harness = Harness(refreshRate: 25)
        let item = PlayerItem(url: path)
        item.isAudioEnabled = false
        item.select(german, in: legible)
        #expect(item.selectedMediaOption(in: legible) == german)
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        harness.video.run(until: { player.rate == 0 }, maxRefreshes: 400)
        // de.srt: "Hallo" 0.5–2.0 s, "Tschuess" 2.5–4.0 s, shifted by the muxer like the video;
        // ffprobe's packet times are the reference. Each change shows on the first frame at or
        // past its time.
        let changes = harness.video.subtitleChanges
        #expect(changes.map(\.text) == ["Hallo", nil, "Tschuess", nil])
        let packets = Fixtures.run("/usr/bin/ffprobe", ["-v", "error", "-select_streams", "s:1", "-show_entries", "packet=pts,duration", "-of", "csv=p=0", path])
            .split(separator: "\n").map { $0.split(separator: ",").map { Int64($0)! } }
        let marks = packets.flatMap { [MediaTime(value: $0[0], timescale: 1000), MediaTime(value: $0[0] + $0[1], timescale: 1000)] }
        let frames = Fixtures.videoFrames("multilang.mkv").map(\.presentationTime)
        // The last mark (4.021 s) is past the last frame (3.981 s): it clears at the end instead.
        let expected = marks.dropLast().map { mark in frames.first { $0 >= mark } }
        let shownAt = changes.dropLast().map { change in harness.video.presentations.first { $0.refresh == change.refresh }?.presentationTime }
        #expect(shownAt == expected)
    }

    @Test("selecting the other audio language switches the decoded audio")
    func audioLanguage() async throws {
        let path = Fixtures.path("multilang.mkv")
        let groups = try await Asset(pathOrURL: path).load(.mediaSelectionGroups)
        let audible = try #require(groups.first { $0.characteristic == .audible })
        let german = try #require(audible.options(withLanguage: "ger").first)
        let harness = Harness(audio: true)
        let item = PlayerItem(url: path)
        item.select(german, in: audible)
        let player = harness.player(item)
        defer { player.invalidate() }
        player.play()
        harness.video.run(refreshes: 60)
        // The German track is an 880 Hz tone, the English one 440 Hz: count zero crossings.
        let buffers = harness.audio!.recordedBuffers.dropFirst(5).prefix(20)
        let left = buffers.flatMap { buffer in stride(from: 0, to: buffer.samples.count, by: 2).map { buffer.samples[$0] } }
        let crossings = zip(left, left.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        let seconds = Double(left.count) / 48_000
        #expect(abs(Double(crossings) / seconds - 880) < 40)
    }
}

