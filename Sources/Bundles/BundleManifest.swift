/// A bundle's `MANIFEST`: one line per file, `SHA256 SIZE PATH` — the SHA-256 in lower-case hex,
/// the size in bytes, the path relative to the bundle folder (UTF-8, `/` between folders; no
/// `..`, no `.`, no empty part, not absolute). The path is the rest of the line, so it may
/// contain spaces. Lines are sorted by path; the manifest and its signature are not listed.
public struct BundleManifest: Sendable, Hashable {
    public struct Entry: Sendable, Hashable {
        /// The file's SHA-256, 64 lower-case hex digits.
        public var sha256: String
        public var size: Int64
        public var path: String
        /// Its line in the manifest, from 1 (0 for a manifest being written).
        public var line: Int

        public init(sha256: String, size: Int64, path: String, line: Int = 0) {
            self.sha256 = sha256
            self.size = size
            self.path = path
            self.line = line
        }
    }

    public static let fileName = "MANIFEST"
    public static let signatureName = "MANIFEST.minisig"
    /// The schedule a bundle must hold at its top level (one of them).
    public static let scheduleNames = ["schedule.toml", "schedule.json"]
    /// A manifest larger than this is refused unread.
    public static let maximumSize = 16 << 20
    /// The most bytes a bundle's files may add up to (1 PiB: more than any stick holds), so that
    /// sizes, their total and the free-space arithmetic on them never overflow.
    public static let maximumTotalSize: Int64 = 1 << 50

    public var entries: [Entry]

    public init(entries: [Entry]) {
        self.entries = entries.sorted { $0.path < $1.path }
    }

    /// The bundle's schedule file, if the manifest lists one.
    public var schedulePath: String? { Self.scheduleNames.first { name in entries.contains { $0.path == name } } }

    /// The bytes of all files together.
    public var totalSize: Int64 { entries.reduce(0) { $0 + $1.size } }

    /// The manifest's text.
    public var text: String { entries.map { "\($0.sha256) \($0.size) \($0.path)\n" }.joined() }

    /// Reads a manifest; every line that is wrong is a problem, named by `origin` and line.
    public static func parse(_ bytes: [UInt8], origin: String) -> (manifest: BundleManifest?, problems: [BundleProblem]) {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            return (nil, [BundleProblem(origin, "not UTF-8 text")])
        }
        var problems: [BundleProblem] = []
        var entries: [Entry] = []
        var seen: [String: Int] = [:]
        var total: Int64 = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = index + 1
            if raw.isEmpty { continue }
            let fields = raw.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3 else {
                problems.append(BundleProblem(origin, line: line, "expected \"SHA256 SIZE PATH\""))
                continue
            }
            let hash = String(fields[0]), sizeText = fields[1], path = String(fields[2])
            guard hash.utf8.count == 64, hash.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                problems.append(BundleProblem(origin, line: line, "expected a SHA-256 of 64 lower-case hex digits, found \"\(hash.prefix(80))\""))
                continue
            }
            guard let size = Int64(sizeText), size >= 0, sizeText.allSatisfy(\.isASCII) else {
                problems.append(BundleProblem(origin, line: line, "expected a size in bytes, found \"\(sizeText.prefix(40))\""))
                continue
            }
            guard size <= maximumTotalSize - total else {
                problems.append(BundleProblem(origin, line: line, "the sizes add up to more than \(maximumTotalSize) bytes (1 PiB) here: no bundle is that large"))
                continue
            }
            if let reason = pathProblem(path) {
                problems.append(BundleProblem(origin, line: line, "\"\(path)\": \(reason)"))
                continue
            }
            if path == fileName || path == signatureName {
                problems.append(BundleProblem(origin, line: line, "\(path) must not list itself or its signature"))
                continue
            }
            if let first = seen[path] {
                problems.append(BundleProblem(origin, line: line, "\"\(path)\" is listed twice (first on line \(first))"))
                continue
            }
            seen[path] = line
            total += size
            entries.append(Entry(sha256: hash, size: size, path: path, line: line))
        }
        let manifest = BundleManifest(entries: entries)
        if problems.isEmpty, manifest.schedulePath == nil {
            problems.append(BundleProblem(origin, "lists no schedule: expected \(scheduleNames.joined(separator: " or ")) at the top level"))
        }
        return (problems.isEmpty ? manifest : nil, problems)
    }

    /// Why `path` cannot be a bundle path, or `nil` when it can.
    public static func pathProblem(_ path: String) -> String? {
        if path.isEmpty { return "an empty path" }
        if path.hasPrefix("/") { return "an absolute path (paths are relative to the bundle folder)" }
        if path.utf8.contains(0) || path.contains("\r") || path.contains("\\") { return "a path with a NUL, carriage return or backslash" }
        for part in path.split(separator: "/", omittingEmptySubsequences: false) {
            if part == ".." { return "a path leading out of the bundle (\"..\")" }
            if part == "." || part.isEmpty { return "a path with an empty or \".\" part" }
        }
        return nil
    }
}
