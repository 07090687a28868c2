import Bundles
import Testing

@Suite("Bundle manifests")
struct ManifestTests {
    static let hash = String(repeating: "ab", count: 32)

    @Test("a manifest lists SHA-256, size and path; paths may hold spaces")
    func parses() throws {
        let text = "\(Self.hash) 12 schedule.toml\n\(Self.hash) 3 media/a clip.mp4\n"
        let (manifest, problems) = BundleManifest.parse(Array(text.utf8), origin: "MANIFEST")
        #expect(problems.isEmpty)
        let entries = try #require(manifest).entries
        #expect(entries.map(\.path) == ["media/a clip.mp4", "schedule.toml"])
        #expect(entries.map(\.size) == [3, 12])
        #expect(manifest?.schedulePath == "schedule.toml")
        #expect(manifest?.text == "\(Self.hash) 3 media/a clip.mp4\n\(Self.hash) 12 schedule.toml\n")
    }

    @Test("paths that leave the bundle, bad hashes and sizes, duplicates and a missing schedule are refused with their line",
          arguments: [
              ("\(hash) 1 ../etc/passwd", 1, "leading out of the bundle"),
              ("\(hash) 1 /etc/passwd", 1, "absolute path"),
              ("\(hash) 1 media/./a.mp4", 1, "empty or \".\" part"),
              ("\(hash) 1 media//a.mp4", 1, "empty or \".\" part"),
              ("ABCD 1 a.mp4", 1, "64 lower-case hex"),
              ("\(hash) -1 a.mp4", 1, "size in bytes"),
              ("\(hash) 1", 1, "SHA256 SIZE PATH"),
              ("\(hash) 1 schedule.toml\n\(hash) 2 schedule.toml", 2, "listed twice"),
              ("\(hash) 1 MANIFEST", 1, "must not list itself"),
              // Sizes whose total overflowed Int64 crashed totalSize (found by Fuzz/FuzzBundleManifest).
              ("\(hash) 9223372036854775807 schedule.toml\n\(hash) 1 a.mp4", 1, "add up to more than"),
              ("\(hash) 600000000000000 schedule.toml\n\(hash) 600000000000000 a.mp4", 2, "add up to more than"),
          ])
    func refuses(line: String, at number: Int, reason: String) {
        let (manifest, problems) = BundleManifest.parse(Array((line + "\n").utf8), origin: "vitrine/MANIFEST")
        #expect(manifest == nil)
        #expect(problems.first?.line == number)
        #expect(problems.first?.file == "vitrine/MANIFEST")
        #expect(problems.first?.message.contains(reason) == true, "\(problems)")
    }

    @Test("a manifest without a schedule is refused")
    func needsSchedule() {
        let (manifest, problems) = BundleManifest.parse(Array("\(Self.hash) 1 media/a.mp4\n".utf8), origin: "MANIFEST")
        #expect(manifest == nil)
        #expect(problems.first?.message.contains("lists no schedule") == true)
    }
}
