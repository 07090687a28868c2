import Foundation
import Testing
import MediaAsset
import MediaTime
import MediaSinks

@Suite("Image generator", .enabled(if: Fixtures.available, "run scripts/fixtures.sh"))
struct ImageGeneratorTests {
    private func generator(_ name: String, exact: Bool = false) -> AssetImageGenerator {
        let generator = AssetImageGenerator(asset: Asset(pathOrURL: Fixtures.path(name)))
        if exact {
            generator.requestedTimeToleranceBefore = .zero
            generator.requestedTimeToleranceAfter = .zero
        }
        return generator
    }

    private func ms(_ milliseconds: Int64) -> MediaTime { MediaTime(value: milliseconds, timescale: 1000) }

    @Test("with zero tolerance the image is the frame whose interval contains the time")
    func exactFrame() async throws {
        let generator = generator("h264_aac.mp4", exact: true)
        // 25 fps: frames start at 3.48 and 3.52; 3.5 lies in the first one's interval.
        #expect(try await generator.image(at: ms(3500)).actualTime == ms(3480))
        #expect(try await generator.image(at: ms(3520)).actualTime == ms(3520))
        #expect(try await generator.image(at: ms(0)).actualTime == .zero)
        #expect(try await generator.image(at: ms(9999)).actualTime == ms(9960))
    }

    @Test("with the default tolerance the image is the keyframe at or before the time")
    func keyframe() async throws {
        // One keyframe per second (-g 25).
        let (image, actual) = try await generator("h264_aac.mp4").image(at: ms(3500))
        #expect(actual == ms(3000))
        #expect(image.width == 320 && image.height == 240)
    }

    @Test("finite tolerances pick a frame inside the window")
    func window() async throws {
        let generator = generator("h264_aac.mp4")
        generator.requestedTimeToleranceBefore = ms(100)
        generator.requestedTimeToleranceAfter = ms(100)
        let actual = try await generator.image(at: ms(3500)).actualTime
        #expect(actual >= ms(3400) && actual <= ms(3600))
    }

    @Test("the 30000/1001 clip gives exact rational frame times")
    func ntscTimes() async throws {
        let actual = try await generator("ntsc.mp4", exact: true).image(at: ms(1010)).actualTime
        // Frame 30 starts at 30 * 1001/30000 s = 1.001 s.
        #expect(actual == MediaTime(value: 1001, timescale: 1000))
    }

    @Test("maximumSize keeps the aspect ratio and derives a zero dimension")
    func maximumSize() async throws {
        let generator = generator("h264_aac.mp4")
        generator.maximumSize = PixelSize(width: 100, height: 0)
        var image = try await generator.image(at: ms(1000)).image
        #expect(image.width == 100 && image.height == 75)
        generator.maximumSize = PixelSize(width: 0, height: 60)
        image = try await generator.image(at: ms(1000)).image
        #expect(image.width == 80 && image.height == 60)
        generator.maximumSize = PixelSize(width: 1000, height: 1000)
        image = try await generator.image(at: ms(1000)).image
        #expect(image.width == 320 && image.height == 240)  // never enlarged
    }

    @Test("the track's rotation is applied, also when scaling")
    func rotation() async throws {
        let generator = generator("rotated.mp4")
        var image = try await generator.image(at: ms(500)).image
        #expect(image.width == 180 && image.height == 320)
        generator.maximumSize = PixelSize(width: 90, height: 0)
        image = try await generator.image(at: ms(500)).image
        #expect(image.width == 90 && image.height == 160)
        generator.appliesPreferredTrackTransform = false
        image = try await generator.image(at: ms(500)).image
        #expect(image.width == 90 && image.height == 51)  // 320x180 stored, fitted to 90 wide
    }

    @Test("images encode to PNG")
    func png() async throws {
        let image = try await generator("vp9_opus.webm").image(at: ms(1000)).image
        let png = try image.pngData()
        #expect(Array(png.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
    }

    @Test("a batch gives one result per time, in order, failures included")
    func batch() async throws {
        let generator = generator("hevc.mkv", exact: true)
        let times = [ms(400), ms(99_000), ms(1200), MediaTime(value: -1, timescale: 1)]
        var results: [ImageGenerationResult] = []
        for await result in generator.images(at: times) { results.append(result) }
        #expect(results.map(\.requestedTime) == times)
        guard case .succeeded(_, let first) = results[0].outcome, case .succeeded(_, let third) = results[2].outcome else {
            Issue.record("expected images at 0.4 s and 1.2 s: \(results.map(\.outcome))")
            return
        }
        #expect(first == ms(400) && third == ms(1200))
        guard case .failed(let late) = results[1].outcome, case .failed(let negative) = results[3].outcome else {
            Issue.record("expected failures for 99 s and -1 s")
            return
        }
        #expect(late.reason == .invalidRequest && late.description.contains("hevc.mkv"))
        #expect(negative.reason == .invalidRequest)
    }

    @Test("cancelling all generation makes the pending times cancelled")
    func cancellation() async throws {
        let generator = generator("h264_aac.mp4", exact: true)
        let times = (0..<100).map { ms(Int64($0) * 99) }
        let stream = generator.images(at: times)
        // The worker may already be on the first time or two; everything after is cancelled.
        generator.cancelAllImageGeneration()
        var outcomes: [ImageGenerationResult.Outcome] = []
        for await result in stream { outcomes.append(result.outcome) }
        #expect(outcomes.count == times.count)
        let isCancelled: (ImageGenerationResult.Outcome) -> Bool = { if case .cancelled = $0 { true } else { false } }
        let firstCancelled = try #require(outcomes.firstIndex(where: isCancelled))
        #expect(outcomes[firstCancelled...].allSatisfy(isCancelled))
        #expect(outcomes.filter(isCancelled).count > times.count / 2)
        // The generator still works afterwards.
        #expect(try await generator.image(at: ms(400)).actualTime == ms(400))
    }

    @Test("media without a decodable video track fails with a clear error", arguments: [
        ("bad/unsupported.avi", MediaError.Reason.unsupportedCodec),
        ("tagged.m4a", .noSuchTrack),
        ("bad/truncated.mp4", .corruptData),
    ])
    func failures(name: String, reason: MediaError.Reason) async {
        let path = Fixtures.path(name)
        await #expect {
            _ = try await generator(name).image(at: ms(500))
        } throws: { error in
            guard let error = error as? MediaError else { return false }
            return error.reason == reason && error.description.hasPrefix(path)
        }
    }

    @Test("an opaque image encodes as an RGB PNG, one with transparency as RGBA; both decode to the same pixels")
    func pngColorTypes() throws {
        // 37x23 (rows not a multiple of any alignment), pixels from a fixed-seed generator.
        var seed: UInt32 = 12345
        let noise = (0..<(37 * 23 * 4)).map { _ -> UInt8 in
            seed = seed &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: seed >> 16)
        }
        let opaque = RGBAImage(width: 37, height: 23, pixels: noise.enumerated().map { $0.offset % 4 == 3 ? 255 : $0.element })
        let translucent = RGBAImage(width: 37, height: 23, pixels: noise)
        #expect(opaque.isOpaque && !translucent.isOpaque)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-png-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // IHDR's colour type is byte 25: 2 truecolour, 6 truecolour with alpha.
        for (name, image, colorType) in [("opaque", opaque, UInt8(2)), ("translucent", translucent, UInt8(6))] {
            let png = try image.pngData()
            #expect(png.count > 25 && png[25] == colorType, "\(name): colour type \(png.count > 25 ? png[25] : 0)")
            let path = folder + "/\(name).png"
            try Data(png).write(to: URL(fileURLWithPath: path))
            let decoded = try RGBAImage(contentsOf: path)
            #expect(decoded == image, "\(name): the PNG does not decode to the pixels encoded")
        }
    }

    @Test("rotating an image by quarter turns moves the corners")
    func rotatePixels() {
        // 2x1: red, green.
        let image = RGBAImage(width: 2, height: 1, pixels: [255, 0, 0, 255, 0, 255, 0, 255])
        let clockwise = image.rotated(clockwise: 90)
        #expect(clockwise.width == 1 && clockwise.height == 2)
        #expect(clockwise.pixel(x: 0, y: 0).r == 255 && clockwise.pixel(x: 0, y: 1).g == 255)
        let half = image.rotated(clockwise: 180)
        #expect(half.pixel(x: 0, y: 0).g == 255)
        let counter = image.rotated(clockwise: 270)
        #expect(counter.pixel(x: 0, y: 0).g == 255 && counter.pixel(x: 0, y: 1).r == 255)
    }
}
