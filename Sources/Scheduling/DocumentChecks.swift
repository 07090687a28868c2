package import MediaSinks

/// Reading a document's values with their types checked: each read that finds something else
/// logs the problem at the value's `file:line:column` and gives `nil`, so a reader reports every
/// problem of a file in one pass. Shared by the schedule reader and the configuration reader, so
/// both say the same things the same way.
extension DiagnosticLog {
    /// Logs every key of `table` that is not `allowed`, with the nearest allowed one as a hint.
    package mutating func checkKeys(_ table: DocumentTable, _ allowed: [String], context: String) {
        for key in table.keys where !allowed.contains(key) {
            let location = table.keyLocations[key] ?? SourceLocation(file: "", line: 0, column: 0)
            let hint = nearestMatch(to: key, in: allowed).map { " (did you mean \"\($0)\"?)" } ?? ""
            error(.unknownKey, location, "unknown key \"\(key)\" in \(context)\(hint)")
        }
    }

    package mutating func wrongType(_ node: DocumentNode, _ key: String, _ expected: String) {
        error(.wrongType, node.location, "\"\(key)\" must be \(expected), not \(node.typeName)")
    }

    package mutating func table(_ node: DocumentNode, _ key: String) -> DocumentTable? {
        if case .table(let t) = node.value { return t }
        wrongType(node, key, "a table")
        return nil
    }

    package mutating func array(_ node: DocumentNode, _ key: String) -> [DocumentNode]? {
        if case .array(let a) = node.value { return a }
        wrongType(node, key, "an array")
        return nil
    }

    package mutating func string(_ node: DocumentNode, _ key: String) -> String? {
        if case .string(let s) = node.value { return s }
        wrongType(node, key, "a string")
        return nil
    }

    /// An integer; a float with no fraction (`90.0`) counts as one.
    package mutating func integer(_ node: DocumentNode, _ key: String) -> Int64? {
        if case .integer(let i) = node.value { return i }
        if case .float(let f) = node.value, f.rounded() == f, abs(f) < 1e15 { return Int64(f) }
        wrongType(node, key, "an integer")
        return nil
    }

    package mutating func number(_ node: DocumentNode, _ key: String) -> Double? {
        if case .integer(let i) = node.value { return Double(i) }
        if case .float(let f) = node.value, f.isFinite { return f }
        wrongType(node, key, "a number")
        return nil
    }

    package mutating func bool(_ node: DocumentNode, _ key: String) -> Bool? {
        if case .bool(let b) = node.value { return b }
        wrongType(node, key, "true or false")
        return nil
    }

    /// `fit`, `fill` or `stretch`.
    package mutating func gravity(_ node: DocumentNode) -> VideoGravity? {
        guard let text = string(node, "gravity") else { return nil }
        if let g = VideoGravity(rawValue: text) { return g }
        let hint = nearestMatch(to: text, in: VideoGravity.allCases.map(\.rawValue)).map { " (did you mean \"\($0)\"?)" } ?? ""
        error(.invalidValue, node.location, "gravity must be \"fit\", \"fill\" or \"stretch\", not \"\(text)\"\(hint)")
        return nil
    }
}
