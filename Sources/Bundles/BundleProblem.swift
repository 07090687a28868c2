/// Something wrong with a bundle: which file, where in it when that is known, and what.
public struct BundleProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file (or folder) concerned, as the operator knows it (a path on the stick).
    public var file: String
    /// The line in `file`, from 1, when the problem is in a line of text.
    public var line: Int?
    public var message: String

    public init(_ file: String, line: Int? = nil, _ message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `vitrine/MANIFEST:12: …`, or `vitrine/media/a.mp4: …`.
    public var description: String { line.map { "\(file):\($0): \(message)" } ?? "\(file): \(message)" }
}
