/// A place in a schedule file: 1-based line and column (column 0 when only the line is known).
public struct SourceLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int

    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.file, lhs.line, lhs.column) < (rhs.file, rhs.line, rhs.column)
    }

    /// "file:line:column" (or "file:line" without a column).
    public var description: String {
        if line <= 0 { return file }
        return column > 0 ? "\(file):\(line):\(column)" : "\(file):\(line)"
    }
}

/// One problem found in a schedule.
public struct ScheduleDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    /// What kind of mistake this is: stable identifiers that tests and tools can match on.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case syntax
        case unknownKey = "unknown-key"
        case wrongType = "wrong-type"
        case missingKey = "missing-key"
        case unsupportedVersion = "unsupported-version"
        case malformedDuration = "malformed-duration"
        case malformedCue = "malformed-cue"
        case malformedTimeOfDay = "malformed-time-of-day"
        case malformedDate = "malformed-date"
        case unknownTimeZone = "unknown-time-zone"
        case unknownWeekday = "unknown-weekday"
        case unknownPlaylist = "unknown-playlist"
        case unknownLayout = "unknown-layout"
        case emptyPlaylist = "empty-playlist"
        case emptyLayout = "empty-layout"
        case conflictingKeys = "conflicting-keys"
        case outOfRange = "out-of-range"
        case invalidValue = "invalid-value"
        case invalidTrim = "invalid-trim"
        case cueOutsideItem = "cue-outside-item"
        case missingMedia = "missing-media"
        case unreadableMedia = "unreadable-media"
        case overlappingEntries = "overlapping-entries"
        case overlappingZones = "overlapping-zones"
        case emptySchedule = "empty-schedule"
        case invalidRecurrence = "invalid-recurrence"
        case invalidDateRange = "invalid-date-range"
        case duplicateName = "duplicate-name"
        case unknownDuration = "unknown-duration"
    }

    public var severity: Severity
    public var kind: Kind
    public var location: SourceLocation
    public var message: String

    public init(_ severity: Severity = .error, _ kind: Kind, at location: SourceLocation, _ message: String) {
        self.severity = severity
        self.kind = kind
        self.location = location
        self.message = message
    }

    /// "demo.toml:12:5: error: unknown key \"volum\" (did you mean \"volume\"?)".
    public var description: String { "\(location): \(severity.rawValue): \(message)" }
}

/// Reading a schedule failed; every problem found is listed, in file order.
public struct ScheduleError: Error, Sendable, CustomStringConvertible {
    public var diagnostics: [ScheduleDiagnostic]
    /// The file could not be read at all (missing, unreadable, not UTF-8): the CLI's exit status 2.
    public var isUnreadable: Bool

    public init(diagnostics: [ScheduleDiagnostic], isUnreadable: Bool = false) {
        self.diagnostics = diagnostics
        self.isUnreadable = isUnreadable
    }

    public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
}

/// Collects diagnostics while a schedule is read and checked.
package struct DiagnosticLog {
    package var items: [ScheduleDiagnostic] = []

    package init(items: [ScheduleDiagnostic] = []) {
        self.items = items
    }

    package mutating func error(_ kind: ScheduleDiagnostic.Kind, _ location: SourceLocation, _ message: String) {
        items.append(ScheduleDiagnostic(.error, kind, at: location, message))
    }

    package mutating func warning(_ kind: ScheduleDiagnostic.Kind, _ location: SourceLocation, _ message: String) {
        items.append(ScheduleDiagnostic(.warning, kind, at: location, message))
    }

    package var hasErrors: Bool { items.contains { $0.severity == .error } }

    package var sorted: [ScheduleDiagnostic] {
        // Stable: equal locations keep the order they were found in.
        items.enumerated().sorted { ($0.element.location, $0.offset) < ($1.element.location, $1.offset) }.map(\.element)
    }
}

/// The closest of `candidates` to `word`, when it is near enough to be a likely typo.
package func nearestMatch(to word: String, in candidates: [String]) -> String? {
    let lower = word.lowercased()
    var best: (String, Int)?
    for candidate in candidates {
        let distance = editDistance(lower, candidate.lowercased())
        // On a tie, a candidate that starts with the word ("fil" → "fill") is the likelier intent.
        if distance < (best?.1 ?? .max) || (distance == best?.1 && candidate.lowercased().hasPrefix(lower) && !(best?.0.lowercased().hasPrefix(lower) ?? false)) {
            best = (candidate, distance)
        }
    }
    guard let (candidate, distance) = best else { return nil }
    let limit = max(1, min(3, candidate.count / 3))
    return distance <= limit ? candidate : nil
}

/// Damerau–Levenshtein distance (optimal string alignment): a swap of neighbours counts once.
func editDistance(_ a: String, _ b: String) -> Int {
    let s = Array(a), t = Array(b)
    if s.isEmpty { return t.count }
    if t.isEmpty { return s.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
    for i in 0...s.count { d[i][0] = i }
    for j in 0...t.count { d[0][j] = j }
    for i in 1...s.count {
        for j in 1...t.count {
            let cost = s[i - 1] == t[j - 1] ? 0 : 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] {
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
            }
        }
    }
    return d[s.count][t.count]
}
