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

    /// `[display] wall = { columns = 3, rows = 2, column = 1, row = 0, bezel = [0.02, 0.03] }`:
    /// this screen's tile of a video wall (`bezel` optional, `[0, 0]` by default).
    package mutating func wallTile(_ node: DocumentNode) -> WallTile? {
        guard let table = table(node, "wall") else { return nil }
        checkKeys(table, ["columns", "rows", "column", "row", "bezel"], context: "wall")
        var values: [String: Int] = [:]
        for key in ["columns", "rows", "column", "row"] {
            guard let item = table[key] else {
                error(.missingKey, node.location, "wall needs \"\(key)\": { columns = 3, rows = 2, column = 0, row = 0 } (column and row from 0)")
                return nil
            }
            guard let value = integer(item, key) else { return nil }
            values[key] = Int(clamping: value)
        }
        var bezel = (horizontal: 0.0, vertical: 0.0)
        if let item = table["bezel"] {
            guard let parts = array(item, "bezel") else { return nil }
            let numbers = parts.compactMap { number($0, "bezel") }
            guard numbers.count == 2, parts.count == 2, numbers.allSatisfy({ (0...1).contains($0) }) else {
                error(.invalidValue, item.location,
                      "bezel is [horizontal, vertical]: the gap between two screens' pictures as fractions of a screen's width and height (0…1), e.g. [0.02, 0.03]")
                return nil
            }
            bezel = (numbers[0], numbers[1])
        }
        let columns = values["columns"]!, rows = values["rows"]!, column = values["column"]!, row = values["row"]!
        guard (1...64).contains(columns), (1...64).contains(rows) else {
            error(.outOfRange, node.location, "a wall has 1…64 columns and 1…64 rows, not \(columns)x\(rows)")
            return nil
        }
        guard (0..<columns).contains(column), (0..<rows).contains(row) else {
            error(.outOfRange, node.location,
                  "column \(column), row \(row) is not a screen of a \(columns)x\(rows) wall (column 0…\(columns - 1), row 0…\(rows - 1), from the top left)")
            return nil
        }
        return WallTile(columns: columns, rows: rows, column: column, row: row, bezel: bezel)
    }

    /// `[display] crop = [x, y, width, height]`: the part of the whole picture this screen shows,
    /// in fractions of it.
    package mutating func wallCrop(_ node: DocumentNode) -> WallTile? {
        guard let parts = array(node, "crop") else { return nil }
        let numbers = parts.compactMap { number($0, "crop") }
        guard numbers.count == 4, parts.count == 4 else {
            error(.invalidValue, node.location, "crop is [x, y, width, height] in fractions of the whole picture, e.g. [0.5, 0.0, 0.5, 1.0]")
            return nil
        }
        guard let tile = WallTile(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3]) else {
            error(.outOfRange, node.location, "crop \(numbers) is not inside the picture (fractions 0…1, width and height above 0, x+width and y+height at most 1)")
            return nil
        }
        return tile
    }
}
