import Foundation
import Testing
import MediaAsset
import MediaTime
import MediaSinks

@Suite("Asset loading", .enabled(if: Fixtures.available, "run scripts/fixtures.sh"))
struct AssetLoadingTests {
    @Test("properties load on demand and report their status")
    func loadsOnDemand() async throws {
        let asset = Asset(url: URL(fileURLWithPath: Fixtures.path("h264_aac.mp4")))
        #expect(asset.status(of: .duration) == .notYetLoaded)
        let (duration, tracks, metadata, playable) = try await asset.load(.duration, .tracks, .metadata, .isPlayable)
        #expect(duration == MediaTime(value: 10, timescale: 1))
        #expect(tracks.map(\.mediaType) == [.video, .audio])
        #expect(metadata.filtered(byCommonKey: .title).first?.stringValue == "Vitrine test pattern")
        #expect(playable)
        #expect(asset.status(of: .duration) == .loaded)
        #expect(asset.status(of: .tracks) == .loaded)
        // Not asked for: still not loaded, although the same open could answer it.
        #expect(asset.status(of: .mediaSelectionGroups) == .notYetLoaded)
        let groups = try await asset.load(.mediaSelectionGroups)
        #expect(groups.map(\.characteristic) == [.audible])
        #expect(asset.status(of: .mediaSelectionGroups) == .loaded)
    }

    @Test("a track knows its codec, size, rate, time range and decodability")
    func describesTracks() async throws {
        let tracks = try await Asset(pathOrURL: Fixtures.path("h264_aac.mp4")).load(.tracks)
        let video = try #require(tracks.first)
        #expect(video.trackID == 0)
        #expect(video.codecName == "h264")
        #expect(video.naturalSize == PixelSize(width: 320, height: 240))
        #expect(video.nominalFrameRate == Rational(25, 1))
        #expect(video.timeRange.start == .zero)
        #expect(video.timeRange.duration == MediaTime(value: 10, timescale: 1))
        #expect(video.isDecodable)
        #expect(video.preferredRotation == 0)
        let audio = tracks[1]
        #expect(audio.codecName == "aac" && audio.sampleRate == 48000 && audio.channelCount == 2)
    }

    @Test("track time ranges count from the container's start time")
    func timeline() async throws {
        // The TS starts at 1.429978 s (FFmpeg states it in microseconds); the video's first frame is at 1.44 s.
        let (format, tracks) = try await Asset(pathOrURL: Fixtures.path("mpeg2.ts")).load(.containerFormat, .tracks)
        #expect(format.startTime == MediaTime(value: 1_429_978, timescale: 1_000_000))
        let video = try #require(tracks.first { $0.mediaType == .video })
        #expect(video.timeRange.start == MediaTime(value: 10_022, timescale: 1_000_000))
    }

    @Test("the NTSC clip's frame rate is exactly 30000/1001")
    func ntscRate() async throws {
        let tracks = try await Asset(pathOrURL: Fixtures.path("ntsc.mp4")).load(.tracks)
        #expect(tracks.first?.nominalFrameRate == Rational(30000, 1001))
    }

    @Test("the rotated clip turns 90 degrees: stored 320x180, shown 180x320")
    func rotation() async throws {
        let track = try #require(try await Asset(pathOrURL: Fixtures.path("rotated.mp4")).load(.tracks).first)
        #expect(track.naturalSize == PixelSize(width: 320, height: 180))
        #expect(track.displayMatrixRotation == 90)
        #expect(track.preferredRotation == 270)
        #expect(track.displaySize == PixelSize(width: 180, height: 320))
    }

    @Test("a failed load fails every requested property with an error naming the file")
    func failedLoad() async {
        let path = Fixtures.path("bad/text.mp4")
        let asset = Asset(pathOrURL: path)
        await #expect {
            _ = try await asset.load(.duration, .tracks)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.reason == .unrecognizedFormat && error.description.hasPrefix(path)
                && error.description.contains("Invalid data found when processing input")
        }
        guard case .failed(let error) = asset.status(of: .duration) else {
            Issue.record("duration status is \(asset.status(of: .duration))")
            return
        }
        #expect(error.source == path)
        guard case .failed = asset.status(of: .tracks) else {
            Issue.record("tracks status is \(asset.status(of: .tracks))")
            return
        }
    }

    @Test("cancelLoading ends a load that waits on a silent server, and a later load starts again")
    func cancelsLoad() async throws {
        let server = try SilentServer()
        let asset = Asset(pathOrURL: "http://127.0.0.1:\(server.port)/clip.mp4",
                          options: .init(openTimeout: .seconds(60), readTimeout: .seconds(60)))
        let load = Task { try await asset.load(.duration) }
        while asset.status(of: .duration) != .loading { await Task.yield() }
        asset.cancelLoading()
        let result = await load.result
        #expect(throws: MediaError.self) { try result.get() }
        if case .failure(let error as MediaError) = result { #expect(error.reason == .cancelled) }
        #expect(asset.status(of: .duration) == .cancelled)

        // Cancelling the awaiting task cancels the load too.
        let second = Task { try await asset.load(.tracks) }
        while asset.status(of: .tracks) != .loading { await Task.yield() }
        second.cancel()
        if case .failure(let error as MediaError) = await second.result {
            #expect(error.reason == .cancelled)
        } else {
            Issue.record("the second load did not fail as cancelled")
        }
        #expect(asset.status(of: .tracks) == .cancelled)
    }

    @Test("opening a server that never answers times out with a clear error")
    func timesOut() async throws {
        let server = try SilentServer()
        let url = "http://127.0.0.1:\(server.port)/clip.mp4"
        let asset = Asset(pathOrURL: url, options: .init(openTimeout: .milliseconds(300), readTimeout: .milliseconds(300)))
        await #expect {
            _ = try await asset.load(.duration)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.reason == .timedOut && error.description.hasPrefix(url)
        }
    }

    @Test("a refused connection fails as a network error with FFmpeg's message")
    func refused() async throws {
        let port = try SilentServer.unusedPort()
        let url = "http://127.0.0.1:\(port)/clip.mp4"
        await #expect {
            _ = try await Asset(pathOrURL: url).load(.tracks)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.reason == .network && error.description.contains("Connection refused")
        }
    }

    @Test("every bad fixture fails with a reason and names the file", arguments: [
        ("bad/empty.mp4", MediaError.Reason.emptyFile),
        ("bad/truncated.mp4", .corruptData),
        ("bad/flipped.mp4", .corruptData),
        ("bad/text.mp4", .unrecognizedFormat),
        ("bad/does-not-exist.mp4", .notFound),
    ])
    func badFixtures(name: String, reason: MediaError.Reason) async {
        let path = Fixtures.path(name)
        await #expect {
            _ = try await Asset(pathOrURL: path).load(.duration)
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.reason == reason && error.description.hasPrefix("\(path): ")
        }
    }

    @Test("an unsupported codec loads but is not playable and its track is not decodable")
    func unsupportedCodec() async throws {
        let asset = Asset(pathOrURL: Fixtures.path("bad/unsupported.avi"))
        let (tracks, playable) = try await asset.load(.tracks, .isPlayable)
        #expect(!playable)
        #expect(tracks.first?.isDecodable == false)
        #expect(tracks.first?.codecTag == "VTRN")
    }
}
