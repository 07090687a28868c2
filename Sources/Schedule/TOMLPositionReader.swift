/// Reads TOML into a ``DocumentNode`` tree that remembers where each key was written.
///
/// TOMLKit (toml++) validates the syntax first, so this reader only has to understand valid
/// TOML: its job is the positions that TOMLKit does not expose. It still never traps on
/// malformed input; it reports the first thing it does not understand.
struct TOMLPositionReader {
    struct Failure: Error {
        var line: Int
        var column: Int
        var message: String
    }

    private let bytes: [UInt8]
    private let file: String
    private var index = 0
    private var line = 1
    private var column = 1

    init(text: String, file: String) {
        bytes = Array(text.utf8)
        self.file = file
    }

    /// A mutable tree while reading; converted to ``DocumentNode`` at the end.
    private final class Table {
        var keys: [String] = []
        var values: [String: Node] = [:]
        var locations: [String: SourceLocation] = [:]

        func set(_ key: String, _ node: Node, _ location: SourceLocation) {
            if values[key] == nil { keys.append(key) }
            values[key] = node
            locations[key] = location
        }
    }

    private enum Node {
        case value(DocumentNode.Value, SourceLocation)
        case table(Table, SourceLocation)
        case tableArray([Table], [SourceLocation])
    }

    static func read(_ text: String, file: String) throws(Failure) -> DocumentNode {
        var reader = TOMLPositionReader(text: text, file: file)
        let root = try reader.document()
        let start = SourceLocation(file: file, line: 1, column: 1)
        return DocumentNode(value: .table(convert(root)), location: start)
    }

    private static func convert(_ table: Table) -> DocumentTable {
        var result = DocumentTable()
        for key in table.keys {
            guard let node = table.values[key], let location = table.locations[key] else { continue }
            result.set(key, convert(node, location), at: location)
        }
        return result
    }

    private static func convert(_ node: Node, _ keyLocation: SourceLocation) -> DocumentNode {
        switch node {
        case .value(let value, let location): return DocumentNode(value: value, location: location)
        case .table(let table, let location): return DocumentNode(value: .table(convert(table)), location: location)
        case .tableArray(let tables, let locations):
            let elements = zip(tables, locations).map { DocumentNode(value: .table(convert($0)), location: $1) }
            return DocumentNode(value: .array(elements), location: keyLocation)
        }
    }

    // MARK: Structure

    private var here: SourceLocation { SourceLocation(file: file, line: line, column: column) }

    private func fail(_ message: String) -> Failure { Failure(line: line, column: column, message: message) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func peek(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

    private mutating func advance() {
        guard index < bytes.count else { return }
        let byte = bytes[index]
        index += 1
        if byte == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpaces() {
        while let c = current, c == UInt8(ascii: " ") || c == UInt8(ascii: "\t") { advance() }
    }

    private mutating func skipComment() {
        if current == UInt8(ascii: "#") {
            while let c = current, c != UInt8(ascii: "\n") { advance() }
        }
    }

    /// Spaces, comments and newlines (inside arrays and between statements).
    private mutating func skipBlank() {
        while true {
            skipSpaces()
            skipComment()
            if current == UInt8(ascii: "\n") || current == UInt8(ascii: "\r") { advance() } else { return }
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        guard current == byte else { throw fail("expected \(what)") }
        advance()
    }

    private mutating func document() throws(Failure) -> Table {
        let root = Table()
        var currentTable = root
        while true {
            skipBlank()
            guard let c = current else { return root }
            if c == UInt8(ascii: "[") {
                let location = here
                advance()
                let isArray = current == UInt8(ascii: "[")
                if isArray { advance() }
                skipSpaces()
                let path = try key()
                skipSpaces()
                try expect(UInt8(ascii: "]"), "]")
                if isArray { try expect(UInt8(ascii: "]"), "]]") }
                currentTable = try header(path, isArray: isArray, root: root, location: location)
            } else {
                try keyValue(into: currentTable)
            }
            skipSpaces()
            skipComment()
            if let c = current, c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") { throw fail("expected the end of the line") }
        }
    }

    /// Finds or creates the table a `[header]` or `[[header]]` names.
    private func header(_ path: [(String, SourceLocation)], isArray: Bool, root: Table, location: SourceLocation) throws(Failure) -> Table {
        var table = root
        for (offset, (name, keyLocation)) in path.enumerated() {
            let isLast = offset == path.count - 1
            if isLast && isArray {
                let fresh = Table()
                if case .tableArray(var tables, var locations)? = table.values[name] {
                    tables.append(fresh)
                    locations.append(location)
                    table.set(name, .tableArray(tables, locations), table.locations[name] ?? keyLocation)
                } else {
                    table.set(name, .tableArray([fresh], [location]), keyLocation)
                }
                return fresh
            }
            switch table.values[name] {
            case .table(let next, _)?:
                table = next
            case .tableArray(let tables, _)?:
                guard let last = tables.last else { throw fail("empty array of tables") }
                table = last
            case nil:
                let next = Table()
                table.set(name, .table(next, isLast ? location : keyLocation), isLast ? location : keyLocation)
                table = next
            case .value?:
                throw fail("\"\(name)\" is already a value")
            }
        }
        return table
    }

    private mutating func keyValue(into table: Table) throws(Failure) {
        let path = try key()
        skipSpaces()
        try expect(UInt8(ascii: "="), "=")
        skipSpaces()
        let valueLocation = path.last?.1 ?? here
        var target = table
        for (name, location) in path.dropLast() {
            switch target.values[name] {
            case .table(let next, _)?: target = next
            case nil:
                let next = Table()
                target.set(name, .table(next, location), location)
                target = next
            default: throw fail("\"\(name)\" is already a value")
            }
        }
        let node = try value(keyLocation: valueLocation)
        guard let (name, location) = path.last else { throw fail("expected a key") }
        target.set(name, node, location)
    }

    /// A dotted key: bare or quoted parts, each with its position.
    private mutating func key() throws(Failure) -> [(String, SourceLocation)] {
        var parts: [(String, SourceLocation)] = []
        while true {
            skipSpaces()
            let location = here
            guard let c = current else { throw fail("expected a key") }
            if c == UInt8(ascii: "\"") {
                parts.append((try basicString(), location))
            } else if c == UInt8(ascii: "'") {
                parts.append((try literalString(), location))
            } else {
                let start = index
                while let b = current, isBareKeyByte(b) { advance() }
                guard index > start else { throw fail("expected a key") }
                parts.append((String(decoding: bytes[start..<index], as: UTF8.self), location))
            }
            skipSpaces()
            if current == UInt8(ascii: ".") { advance() } else { return parts }
        }
    }

    private func isBareKeyByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }

    // MARK: Values

    private mutating func value(keyLocation: SourceLocation) throws(Failure) -> Node {
        let location = here
        guard let c = current else { throw fail("expected a value") }
        switch c {
        case UInt8(ascii: "\""):
            if peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") { return .value(.string(try multilineBasicString()), keyLocation) }
            return .value(.string(try basicString()), keyLocation)
        case UInt8(ascii: "'"):
            if peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") { return .value(.string(try multilineLiteralString()), keyLocation) }
            return .value(.string(try literalString()), keyLocation)
        case UInt8(ascii: "["):
            advance()
            var elements: [DocumentNode] = []
            while true {
                skipBlank()
                if current == UInt8(ascii: "]") { advance(); break }
                let elementLocation = here
                let element = try value(keyLocation: elementLocation)
                elements.append(TOMLPositionReader.convert(element, elementLocation))
                skipBlank()
                if current == UInt8(ascii: ",") { advance(); continue }
                skipBlank()
                try expect(UInt8(ascii: "]"), "] or ,")
                break
            }
            return .value(.array(elements), keyLocation)
        case UInt8(ascii: "{"):
            advance()
            let table = Table()
            skipSpaces()
            if current == UInt8(ascii: "}") {
                advance()
            } else {
                while true {
                    skipSpaces()
                    try keyValue(into: table)
                    skipSpaces()
                    if current == UInt8(ascii: ",") { advance(); continue }
                    try expect(UInt8(ascii: "}"), "} or ,")
                    break
                }
            }
            return .table(table, keyLocation)
        default:
            let start = index
            // A scalar runs to a delimiter; date-times may contain one space before the time.
            while let b = current, !isDelimiter(b) {
                advance()
                if current == UInt8(ascii: " "), let next = peek(1), next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9"),
                   index - start == 10, bytes[start + 4] == UInt8(ascii: "-") {
                    advance()
                }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let scalar = TOMLPositionReader.scalar(text) else {
                throw Failure(line: location.line, column: location.column, message: "cannot read the value \"\(text)\"")
            }
            return .value(scalar, keyLocation)
        }
    }

    private func isDelimiter(_ b: UInt8) -> Bool {
        b == UInt8(ascii: ",") || b == UInt8(ascii: "]") || b == UInt8(ascii: "}") || b == UInt8(ascii: "\n")
            || b == UInt8(ascii: "\r") || b == UInt8(ascii: "#") || b == UInt8(ascii: " ") || b == UInt8(ascii: "\t")
    }

    static func scalar(_ text: String) -> DocumentNode.Value? {
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        let clean = text.filter { $0 != "_" }
        if clean.hasPrefix("0x"), let v = Int64(clean.dropFirst(2), radix: 16) { return .integer(v) }
        if clean.hasPrefix("0o"), let v = Int64(clean.dropFirst(2), radix: 8) { return .integer(v) }
        if clean.hasPrefix("0b"), let v = Int64(clean.dropFirst(2), radix: 2) { return .integer(v) }
        if let v = Int64(clean) { return .integer(v) }
        if clean.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }), !clean.contains(":"), let v = Double(clean) { return .float(v) }
        // Dates and times.
        if let time = LocalTime(parsing: text) { return .time(time) }
        if let date = LocalDate(parsing: text), text.count == 10 { return .date(date) }
        return dateTime(text)
    }

    /// "1979-05-27T07:32:00", "1979-05-27 07:32:00Z", "1979-05-27T00:32:00.999-07:00".
    static func dateTime(_ text: String) -> DocumentNode.Value? {
        let chars = Array(text)
        guard chars.count >= 16, let date = LocalDate(parsing: String(chars[0..<10])),
              chars[10] == "T" || chars[10] == "t" || chars[10] == " " else { return nil }
        var rest = String(chars[11...])
        var offset: Int?
        if rest.hasSuffix("Z") || rest.hasSuffix("z") {
            offset = 0
            rest.removeLast()
        } else if rest.count > 6, let signIndex = rest.lastIndex(where: { $0 == "+" || $0 == "-" }) {
            let zone = String(rest[signIndex...])
            let parts = zone.dropFirst().split(separator: ":")
            guard parts.count == 2, let h = Int(parts[0]), let m = Int(parts[1]), parts[0].count == 2, parts[1].count == 2 else { return nil }
            offset = (zone.first == "-" ? -1 : 1) * (h * 3600 + m * 60)
            rest = String(rest[..<signIndex])
        }
        guard let time = LocalTime(parsing: rest), time.hour < 24 else { return nil }
        return .dateTime(LocalDateTime(date: date, time: time), offsetSeconds: offset)
    }

    // MARK: Strings

    private mutating func basicString() throws(Failure) -> String {
        advance()  // "
        var result: [UInt8] = []
        while true {
            guard let c = current, c != UInt8(ascii: "\n") else { throw fail("unterminated string") }
            if c == UInt8(ascii: "\"") { advance(); break }
            if c == UInt8(ascii: "\\") {
                try escape(into: &result)
            } else {
                result.append(c)
                advance()
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private mutating func multilineBasicString() throws(Failure) -> String {
        advance(); advance(); advance()
        if current == UInt8(ascii: "\r") { advance() }
        if current == UInt8(ascii: "\n") { advance() }
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("unterminated string") }
            if c == UInt8(ascii: "\""), peek(1) == UInt8(ascii: "\""), peek(2) == UInt8(ascii: "\"") {
                // Up to two more quotes may belong to the content.
                var quotes = 0
                while current == UInt8(ascii: "\"") { quotes += 1; advance() }
                result.append(contentsOf: [UInt8](repeating: UInt8(ascii: "\""), count: max(0, quotes - 3)))
                break
            }
            if c == UInt8(ascii: "\\") {
                // A line-ending backslash trims the newline and the whitespace after it.
                var lookahead = 1
                while let b = peek(lookahead), b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") { lookahead += 1 }
                if peek(lookahead) == UInt8(ascii: "\n") || peek(lookahead) == UInt8(ascii: "\r") {
                    advance()
                    while let b = current, b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") { advance() }
                    continue
                }
                try escape(into: &result)
            } else {
                result.append(c)
                advance()
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private mutating func escape(into result: inout [UInt8]) throws(Failure) {
        advance()  // backslash
        guard let e = current else { throw fail("unterminated escape") }
        advance()
        switch e {
        case UInt8(ascii: "b"): result.append(0x08)
        case UInt8(ascii: "t"): result.append(0x09)
        case UInt8(ascii: "n"): result.append(0x0A)
        case UInt8(ascii: "f"): result.append(0x0C)
        case UInt8(ascii: "r"): result.append(0x0D)
        case UInt8(ascii: "e"): result.append(0x1B)
        case UInt8(ascii: "\""): result.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): result.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "u"), UInt8(ascii: "U"), UInt8(ascii: "x"):
            let count = e == UInt8(ascii: "u") ? 4 : (e == UInt8(ascii: "U") ? 8 : 2)
            var hex = ""
            for _ in 0..<count {
                guard let h = current else { throw fail("short unicode escape") }
                hex.append(Character(Unicode.Scalar(h)))
                advance()
            }
            guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else { throw fail("bad unicode escape") }
            result.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            throw fail("unknown escape")
        }
    }

    private mutating func literalString() throws(Failure) -> String {
        advance()
        let start = index
        while let c = current, c != UInt8(ascii: "'") {
            if c == UInt8(ascii: "\n") { throw fail("unterminated string") }
            advance()
        }
        guard current != nil else { throw fail("unterminated string") }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        advance()
        return text
    }

    private mutating func multilineLiteralString() throws(Failure) -> String {
        advance(); advance(); advance()
        if current == UInt8(ascii: "\r") { advance() }
        if current == UInt8(ascii: "\n") { advance() }
        let start = index
        while true {
            guard let c = current else { throw fail("unterminated string") }
            if c == UInt8(ascii: "'"), peek(1) == UInt8(ascii: "'"), peek(2) == UInt8(ascii: "'") {
                var end = index
                var quotes = 0
                while current == UInt8(ascii: "'") { quotes += 1; advance() }
                end += max(0, quotes - 3)
                return String(decoding: bytes[start..<end], as: UTF8.self)
            }
            advance()
        }
    }
}
