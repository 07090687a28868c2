import Foundation
import Testing
import MediaAsset
import MediaTime
import MediaSinks

/// A seeded mutation loop over the fixtures: the probe path (open, stream info, description)
/// and the first-image path must end in a value or a `MediaError`, never a crash or a hang.
/// `VITRINE_FUZZ_ITERATIONS` raises the count (CI runs the default; soak runs use more) and
/// `VITRINE_FUZZ_SEED` explores other mutations.
@Suite("Probe fuzzing", .enabled(if: Fixtures.available, "run scripts/fixtures.sh"))
struct ProbeFuzzTests {
    /// SplitMix64: small, seedable, the same sequence everywhere.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ original: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var data = original
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            guard !data.isEmpty else { break }
            let at = Int.random(in: 0..<data.count, using: &random)
            switch Int.random(in: 0..<6, using: &random) {
            case 0:  // flip bits in a few bytes
                for _ in 0..<Int.random(in: 1...16, using: &random) {
                    let index = Int.random(in: 0..<data.count, using: &random)
                    data[index] ^= UInt8.random(in: 1...255, using: &random)
                }
            case 1:  // overwrite a run with random bytes
                let end = min(data.count, at + Int.random(in: 1...256, using: &random))
                for index in at..<end { data[index] = UInt8.random(in: 0...255, using: &random) }
            case 2:  // truncate
                data.removeSubrange(at...)
            case 3:  // duplicate a chunk
                let end = min(data.count, at + Int.random(in: 1...4096, using: &random))
                data.insert(contentsOf: data[at..<end], at: Int.random(in: 0...data.count, using: &random))
            case 4:  // delete a chunk
                data.removeSubrange(at..<min(data.count, at + Int.random(in: 1...4096, using: &random)))
            default:  // extreme values in size and count fields
                let end = min(data.count, at + 4)
                for index in at..<end { data[index] = Bool.random(using: &random) ? 0xFF : 0x00 }
            }
        }
        return data
    }

    @Test("mutated media ends in a description or a MediaError naming the file")
    func mutatedMedia() async throws {
        let iterations = ProcessInfo.processInfo.environment["VITRINE_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 1000
        let seeds = try ["h264_aac.mp4", "hevc.mkv", "vp9_opus.webm", "mpeg2.ts", "tagged.m4a", "multilang.mkv", "rotated.mp4"]
            .map { name -> (String, [UInt8]) in
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Fixtures.path(name))))
                return (name, Array(bytes.prefix(128 * 1024)))  // the headers and the first seconds
            }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("vitrine-fuzz-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { if ProcessInfo.processInfo.environment["VITRINE_FUZZ_KEEP"] == nil { try? FileManager.default.removeItem(at: directory) } }

        let seed = ProcessInfo.processInfo.environment["VITRINE_FUZZ_SEED"].flatMap { UInt64($0) } ?? 0x5EED_CAFE
        var random = SeededGenerator(state: seed)
        var described = 0, failed = 0, images = 0
        for iteration in 0..<iterations {
            let (name, original) = seeds[iteration % seeds.count]
            let mutated = Self.mutate(original, using: &random)
            let path = directory.appendingPathComponent("\(iteration)-\(name)").path
            try Data(mutated).write(to: URL(fileURLWithPath: path))
            let asset = Asset(pathOrURL: path, options: .init(openTimeout: .seconds(10), readTimeout: .seconds(10)))
            do {
                let (_, tracks, _, _) = try await asset.load(.duration, .tracks, .metadata, .mediaSelectionGroups)
                described += 1
                if tracks.contains(where: { $0.mediaType == .video && $0.isDecodable && !$0.isAttachedPicture }) {
                    do {
                        let generator = AssetImageGenerator(asset: asset)
                        var time = MediaTime.zero
                        if iteration % 3 == 0 {  // the exact path decodes past the keyframe
                            generator.requestedTimeToleranceBefore = .zero
                            generator.requestedTimeToleranceAfter = .zero
                            time = MediaTime(value: 1, timescale: 2)
                        }
                        _ = try await generator.image(at: time)
                        images += 1
                    } catch {
                        #expect(error.description.hasPrefix(path), "\(error)")
                    }
                }
            } catch {
                failed += 1
                #expect(error.description.hasPrefix(path), "\(error)")
            }
            if ProcessInfo.processInfo.environment["VITRINE_FUZZ_KEEP"] == nil { try? FileManager.default.removeItem(atPath: path) }
        }
        #expect(described + failed == iterations)
        // The mutations must leave some files readable, or the loop only tests the first bytes.
        #expect(described > 0 && failed > 0)
        print("fuzz: \(iterations) mutated files: \(described) described (\(images) with an image), \(failed) failed cleanly")
    }
}
