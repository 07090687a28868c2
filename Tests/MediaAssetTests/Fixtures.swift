import Foundation

/// Paths of the generated test media (run `bash scripts/fixtures.sh` first).
enum Fixtures {
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let directory = root.appendingPathComponent("Fixtures/generated")

    /// The path of a fixture, e.g. `path("h264_aac.mp4")` or `path("bad/empty.mp4")`.
    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Whether the fixtures were generated.
    static var available: Bool { FileManager.default.fileExists(atPath: path("h264_aac.mp4")) }
}
