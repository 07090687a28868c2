/// Reads TOML 1.0 into a ``DocumentNode`` tree that remembers where each key was written.
///
/// A complete and strict reader: it accepts exactly the documents the TOML 1.0 specification
/// allows and rejects every other one with the line and column of the first mistake (duplicate
/// keys and tables, tables redefined through dotted keys or inline tables, appending to a static
/// array, bad escapes, control characters, malformed numbers, dates and times, unterminated
/// strings, arrays and inline tables, …). It is total: it never traps, and it reads any input in
/// one pass, refusing nesting deeper than ``maximumDepth`` so that no input exhausts the stack.
///
/// Deliberate choices where the specification leaves room: a UTF-8 byte order mark at the very
/// start is skipped (editors on Windows write one); fractions of a second beyond nanoseconds are
/// truncated; floats that overflow read as infinity, as `strtod` does; the year 0000, which
/// RFC 3339 allows, is read.
package struct TOMLPositionReader {
    package struct Failure: Error {
        package var line: Int
        package var column: Int
        package var message: String
    }

    /// The deepest nesting of tables and arrays accepted.
    static let maximumDepth = 100

    private let bytes: [UInt8]
    private let file: String
    private var index = 0
    private var line = 1
    private var column = 1
    /// Numbers each `[header]` section and each inline table: tables made by dotted keys may only
    /// be extended by dotted keys of the same section.
    private var sectionCount = 0

    init(text: String, file: String) {
        bytes = Array(text.utf8)
        self.file = file
    }

    /// A mutable tree while reading; converted to ``DocumentNode`` at the end.
    private final class Table {
        /// How a table came to exist, which decides how it may still be extended.
        enum Origin: Equatable {
            /// Named as a parent in a header (`a` in `[a.b]`); a later `[a]` may still define it.
            case implicit
            /// Defined by a `[header]`, or an element of a `[[header]]` array.
            case header
            /// Made by dotted keys (`a.b = 1`) in the numbered section or inline table.
            case dotted(section: Int)
            /// An inline table: complete where it is written, never extended.
            case inline
        }

        var origin: Origin
        let depth: Int
        var keys: [String] = []
        var values: [String: Node] = [:]
        var locations: [String: SourceLocation] = [:]

        init(origin: Origin, depth: Int) {
            self.origin = origin
            self.depth = depth
        }

        func set(_ key: String, _ node: Node, _ location: SourceLocation) {
            if values[key] == nil { keys.append(key) }
            values[key] = node
            locations[key] = location
        }
    }

    /// The elements of a `[[header]]` array, shared so that appending one does not copy the others.
    private final class TableArray {
        var tables: [Table]
        var locations: [SourceLocation]

        init(_ table: Table, at location: SourceLocation) {
            tables = [table]
            locations = [location]
        }
    }

    private enum Node {
        /// A scalar or a static array (`[1, 2]`): never extended.
        case value(DocumentNode.Value, SourceLocation)
        case table(Table, SourceLocation)
        /// An array of tables made by `[[header]]`: each header appends one.
        case tableArray(TableArray)
    }

    package static func read(_ text: String, file: String) throws(Failure) -> DocumentNode {
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
        case .tableArray(let array):
            let elements = zip(array.tables, array.locations).map { DocumentNode(value: .table(convert($0)), location: $1) }
            return DocumentNode(value: .array(elements), location: keyLocation)
        }
    }

    // MARK: Bytes and positions

    private var here: SourceLocation { SourceLocation(file: file, line: line, column: column) }

    private func fail(_ message: String) -> Failure { Failure(line: line, column: column, message: message) }

    private func fail(_ message: String, at location: SourceLocation) -> Failure {
        Failure(line: location.line, column: location.column, message: message)
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private func peek(_ offset: Int) -> UInt8? { index + offset < bytes.count ? bytes[index + offset] : nil }

    private mutating func advance() {
        guard index < bytes.count else { return }
        let byte = bytes[index]
        index += 1
        if byte == .lineFeed {
            line += 1
            column = 1
        } else if byte & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpaces() {
        while let c = current, c == .space || c == .tab { advance() }
    }

    /// At a line feed or a carriage return followed by one.
    private var atNewline: Bool {
        current == .lineFeed || (current == .carriageReturn && peek(1) == .lineFeed)
    }

    /// Consumes one newline (LF or CRLF); a carriage return alone is an error.
    private mutating func newline() throws(Failure) {
        if current == .carriageReturn {
            guard peek(1) == .lineFeed else { throw fail("a carriage return must be followed by a line feed") }
            advance()
        }
        advance()
    }

    /// A comment from `#` to the end of the line; control characters other than tab are refused.
    private mutating func comment() throws(Failure) {
        guard current == .hash else { return }
        while let c = current, c != .lineFeed {
            if c == .carriageReturn, peek(1) == .lineFeed { return }
            if isControl(c) && c != .tab { throw fail("control character \(hex(c)) in a comment") }
            advance()
        }
    }

    /// Inside arrays: spaces, newlines and comments.
    private mutating func skipArrayBlank() throws(Failure) {
        while true {
            skipSpaces()
            if current == .hash { try comment() }
            if current == .lineFeed || current == .carriageReturn { try newline() } else { return }
        }
    }

    /// After a statement only spaces and a comment may follow on its line.
    private mutating func endOfLine(after what: String) throws(Failure) {
        skipSpaces()
        try comment()
        guard let c = current else { return }
        if c == .lineFeed || c == .carriageReturn {
            try newline()
            return
        }
        throw fail("expected the end of the line after \(what), found \(describe(c))")
    }

    private func isControl(_ c: UInt8) -> Bool { c < 0x20 || c == 0x7F }

    private func hex(_ c: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return "U+00" + String(digits[Int(c >> 4)]) + String(digits[Int(c & 0xF)])
    }

    /// "'x'" for printable ASCII, "U+00XX" for control characters, "a non-ASCII character" otherwise.
    private func describe(_ c: UInt8) -> String {
        if isControl(c) { return "control character \(hex(c))" }
        if c < 0x80 { return "'\(Character(Unicode.Scalar(c)))'" }
        return "a non-ASCII character"
    }

    // MARK: Structure

    private mutating func document() throws(Failure) -> Table {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        let root = Table(origin: .header, depth: 0)
        var table = root
        while true {
            skipSpaces()
            guard let c = current else { return root }
            if c == .lineFeed || c == .carriageReturn {
                try newline()
                continue
            }
            if c == .hash {
                try comment()
            } else if c == .leftBracket {
                sectionCount += 1
                table = try headerLine(root: root)
                try endOfLine(after: "the table header")
            } else if isBareKeyByte(c) || c == .quote || c == .apostrophe {
                try keyValue(into: table, section: sectionCount)
                try endOfLine(after: "the value")
            } else {
                throw fail("expected a key, a [table] header or a comment, found \(describe(c))")
            }
        }
    }

    /// `[a.b]` or `[[a.b]]`: returns the table that the following key/value pairs fill.
    private mutating func headerLine(root: Table) throws(Failure) -> Table {
        let location = here
        advance()
        let isArray = current == .leftBracket
        if isArray { advance() }
        let path = try key()
        if isArray {
            guard current == .rightBracket, peek(1) == .rightBracket else {
                throw fail("expected ']]' to close the array-of-tables header [[\(Self.display(path))]]")
            }
            advance()
            advance()
        } else {
            guard current == .rightBracket else { throw fail("expected ']' to close the table header [\(Self.display(path))]") }
            advance()
        }
        return try header(path, isArray: isArray, root: root, location: location)
    }

    /// Finds or creates the table a `[header]` or `[[header]]` names.
    private func header(_ path: [(String, SourceLocation)], isArray: Bool, root: Table, location: SourceLocation) throws(Failure) -> Table {
        var table = root
        for (offset, (name, keyLocation)) in path.enumerated() {
            func named() -> String { Self.display(path.prefix(offset + 1)) }
            let existing = table.values[name]
            if offset < path.count - 1 {
                switch existing {
                case nil:
                    let next = try child(of: table, origin: .implicit, at: keyLocation)
                    table.set(name, .table(next, keyLocation), keyLocation)
                    table = next
                case .table(let next, let defined)?:
                    if next.origin == .inline { throw fail("\(named()) is an inline table (\(position(defined))); it cannot be extended", at: keyLocation) }
                    table = next
                case .tableArray(let array)?:
                    guard let last = array.tables.last else { throw fail("\(named()) is an empty array of tables", at: keyLocation) }
                    table = last
                case .value(let value, let defined)?:
                    throw fail("\(named()) is already \(kind(value)) (\(position(defined))), not a table", at: keyLocation)
                }
            } else if isArray {
                switch existing {
                case nil:
                    let fresh = try child(of: table, origin: .header, at: keyLocation)
                    table.set(name, .tableArray(TableArray(fresh, at: location)), keyLocation)
                    return fresh
                case .tableArray(let array)?:
                    let fresh = try child(of: table, origin: .header, at: keyLocation)
                    array.tables.append(fresh)
                    array.locations.append(location)
                    return fresh
                case .value(.array, let defined)?:
                    throw fail("cannot append to the static array \(named()) (\(position(defined))) with [[\(Self.display(path))]]", at: keyLocation)
                case .value(let value, let defined)?:
                    throw fail("\(named()) is already \(kind(value)) (\(position(defined))), not an array of tables", at: keyLocation)
                case .table(_, let defined)?:
                    throw fail("\(named()) is already a table (\(position(defined))), not an array of tables", at: keyLocation)
                }
            } else {
                switch existing {
                case nil:
                    let next = try child(of: table, origin: .header, at: keyLocation)
                    table.set(name, .table(next, location), location)
                    return next
                case .table(let next, let defined)?:
                    switch next.origin {
                    case .implicit:
                        next.origin = .header
                        table.set(name, .table(next, location), location)
                        return next
                    case .header:
                        throw fail("table [\(named())] is defined twice (first \(position(defined)))", at: keyLocation)
                    case .dotted:
                        throw fail("table [\(named())] was already defined by dotted keys (\(position(defined)))", at: keyLocation)
                    case .inline:
                        throw fail("table [\(named())] was already defined as an inline table (\(position(defined)))", at: keyLocation)
                    }
                case .tableArray(let array)?:
                    throw fail("\(named()) is an array of tables (\(position(array.locations.first ?? keyLocation))); write [[\(named())]] to add an element", at: keyLocation)
                case .value(let value, let defined)?:
                    throw fail("\(named()) is already \(kind(value)) (\(position(defined))), not a table", at: keyLocation)
                }
            }
        }
        return table
    }

    private func child(of table: Table, origin: Table.Origin, at location: SourceLocation) throws(Failure) -> Table {
        guard table.depth < Self.maximumDepth else { throw fail("tables nest deeper than \(Self.maximumDepth) levels", at: location) }
        return Table(origin: origin, depth: table.depth + 1)
    }

    /// `key = value`, where a dotted key (`a.b.c = 1`) makes or extends tables on its way.
    private mutating func keyValue(into table: Table, section: Int) throws(Failure) {
        let path = try key()
        guard current == .equals else {
            if let c = current, c != .lineFeed, c != .carriageReturn {
                throw fail("expected '=' after the key \(Self.display(path)), found \(describe(c))")
            }
            throw fail("expected '=' after the key \(Self.display(path))")
        }
        advance()
        skipSpaces()
        var target = table
        for (offset, (name, location)) in path.dropLast().enumerated() {
            func named() -> String { Self.display(path.prefix(offset + 1)) }
            switch target.values[name] {
            case nil:
                let next = try child(of: target, origin: .dotted(section: section), at: location)
                target.set(name, .table(next, location), location)
                target = next
            case .table(let next, let defined)?:
                switch next.origin {
                case .dotted(let made) where made == section:
                    target = next
                case .implicit:
                    next.origin = .dotted(section: section)
                    target = next
                case .dotted:
                    throw fail("the table \(named()) was made by dotted keys in another section (\(position(defined))); it cannot be extended here", at: location)
                case .header:
                    throw fail("the table \(named()) is defined by a [header] (\(position(defined))); dotted keys cannot add to it", at: location)
                case .inline:
                    throw fail("\(named()) is an inline table (\(position(defined))); it cannot be extended", at: location)
                }
            case .tableArray(let array)?:
                throw fail("\(named()) is an array of tables (\(position(array.locations.first ?? location))); dotted keys cannot add to it", at: location)
            case .value(let value, let defined)?:
                throw fail("\(named()) is already \(kind(value)) (\(position(defined))), not a table", at: location)
            }
        }
        guard let (name, location) = path.last else { throw fail("expected a key") }
        if let existing = target.locations[name] {
            throw fail("duplicate key \(Self.display(path)) (first \(position(existing)))", at: location)
        }
        let node = try value(keyLocation: location, depth: target.depth + 1)
        target.set(name, node, location)
    }

    /// A dotted key: bare or quoted parts, each with its position. Leaves the position after the
    /// spaces that follow the key.
    private mutating func key() throws(Failure) -> [(String, SourceLocation)] {
        var parts: [(String, SourceLocation)] = []
        while true {
            skipSpaces()
            let location = here
            guard let c = current else { throw fail("expected a key, found the end of the file") }
            if c == .quote {
                if peek(1) == .quote, peek(2) == .quote { throw fail("a key cannot be a multi-line string") }
                parts.append((try basicString(), location))
            } else if c == .apostrophe {
                if peek(1) == .apostrophe, peek(2) == .apostrophe { throw fail("a key cannot be a multi-line string") }
                parts.append((try literalString(), location))
            } else {
                let start = index
                while let b = current, isBareKeyByte(b) { advance() }
                guard index > start else {
                    throw fail(parts.isEmpty ? "expected a key, found \(describe(c))" : "expected a key after '.', found \(describe(c))")
                }
                parts.append((String(decoding: bytes[start..<index], as: UTF8.self), location))
            }
            skipSpaces()
            if current == .dot { advance() } else { return parts }
        }
    }

    private func isBareKeyByte(_ b: UInt8) -> Bool { Self.isBareKeyByte(b) }

    private static func isBareKeyByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || isDigit(b) || b == UInt8(ascii: "_") || b == UInt8(ascii: "-")
    }

    /// `a."b c".d` for messages.
    private static func display(_ path: some Collection<(String, SourceLocation)>) -> String {
        path.map { name, _ in
            !name.isEmpty && name.utf8.allSatisfy(isBareKeyByte) ? name : "\"" + name + "\""
        }.joined(separator: ".")
    }

    private func position(_ location: SourceLocation) -> String { "at \(location.line):\(location.column)" }

    private func kind(_ value: DocumentNode.Value) -> String {
        DocumentNode(value: value, location: here).typeName
    }

    // MARK: Values

    private mutating func value(keyLocation: SourceLocation, depth: Int) throws(Failure) -> Node {
        let location = here
        guard let c = current else { throw fail("expected a value, found the end of the file") }
        switch c {
        case .quote:
            if peek(1) == .quote, peek(2) == .quote { return .value(.string(try multilineBasicString()), keyLocation) }
            return .value(.string(try basicString()), keyLocation)
        case .apostrophe:
            if peek(1) == .apostrophe, peek(2) == .apostrophe { return .value(.string(try multilineLiteralString()), keyLocation) }
            return .value(.string(try literalString()), keyLocation)
        case .leftBracket:
            return .value(.array(try array(depth: depth)), keyLocation)
        case .leftBrace:
            return .table(try inlineTable(depth: depth), keyLocation)
        default:
            let start = index
            // A scalar runs to a delimiter; a date-time may hold one space between date and time.
            while let b = current, !isDelimiter(b) {
                advance()
                if current == .space, index - start == 10, bytes[start + 4] == UInt8(ascii: "-"), bytes[start + 7] == UInt8(ascii: "-"),
                   let next = peek(1), isDigit(next) {
                    advance()
                }
            }
            guard index > start else {
                if c == .lineFeed || c == .carriageReturn { throw fail("expected a value before the end of the line") }
                throw fail("expected a value, found \(describe(c))")
            }
            do {
                return .value(try TOMLPositionReader.scalar(bytes[start..<index]), keyLocation)
            } catch {
                throw fail(error.message, at: location)
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> [DocumentNode] {
        let opened = here
        guard depth <= Self.maximumDepth else { throw fail("arrays and tables nest deeper than \(Self.maximumDepth) levels") }
        advance()
        var elements: [DocumentNode] = []
        try skipArrayBlank()
        if current == .rightBracket {
            advance()
            return elements
        }
        while true {
            guard current != nil else { throw fail("the array opened \(position(opened)) is not closed") }
            let elementLocation = here
            let element = try value(keyLocation: elementLocation, depth: depth + 1)
            elements.append(TOMLPositionReader.convert(element, elementLocation))
            try skipArrayBlank()
            guard let c = current else { throw fail("the array opened \(position(opened)) is not closed") }
            if c == .rightBracket {
                advance()
                return elements
            }
            guard c == .comma else { throw fail("expected ',' or ']' in the array opened \(position(opened)), found \(describe(c))") }
            advance()
            try skipArrayBlank()
            if current == .rightBracket {
                advance()
                return elements
            }
        }
    }

    /// `{ a = 1, b.c = 2 }`: on one line, no trailing comma, complete once closed.
    private mutating func inlineTable(depth: Int) throws(Failure) -> Table {
        let opened = here
        guard depth <= Self.maximumDepth else { throw fail("arrays and tables nest deeper than \(Self.maximumDepth) levels") }
        advance()
        sectionCount += 1
        let section = sectionCount
        let table = Table(origin: .dotted(section: section), depth: depth)
        skipSpaces()
        if current == .rightBrace {
            advance()
            table.origin = .inline
            return table
        }
        while true {
            skipSpaces()
            if let c = current, c == .lineFeed || c == .carriageReturn {
                throw fail("an inline table must be written on one line (opened \(position(opened)))")
            }
            try keyValue(into: table, section: section)
            skipSpaces()
            guard let c = current else { throw fail("the inline table opened \(position(opened)) is not closed") }
            if c == .rightBrace {
                advance()
                table.origin = .inline
                return table
            }
            switch c {
            case .comma:
                advance()
                skipSpaces()
                if current == .rightBrace { throw fail("a trailing comma is not allowed in an inline table") }
            case .lineFeed, .carriageReturn:
                throw fail("an inline table must be written on one line (opened \(position(opened)))")
            case .hash:
                throw fail("comments are not allowed inside an inline table (opened \(position(opened)))")
            default:
                throw fail("expected ',' or '}' in the inline table opened \(position(opened)), found \(describe(c))")
            }
        }
    }

    private func isDelimiter(_ b: UInt8) -> Bool {
        b == .comma || b == .rightBracket || b == .rightBrace || b == .lineFeed || b == .carriageReturn || b == .hash
            || b == .space || b == .tab
    }

    // MARK: Scalars

    struct ScalarError: Error {
        var message: String
    }

    /// A boolean, number, date or time written without quotes, checked against the TOML 1.0 grammar.
    static func scalar(_ token: ArraySlice<UInt8>) throws(ScalarError) -> DocumentNode.Value {
        let t = Array(token)
        let text = String(decoding: t.prefix(60), as: UTF8.self) + (t.count > 60 ? "…" : "")
        switch text {
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "inf", "+inf": return .float(.infinity)
        case "-inf": return .float(-.infinity)
        case "nan", "+nan", "-nan": return .float(.nan)
        default: break
        }
        if t.count >= 10, digits(t, 0..<4), t[4] == UInt8(ascii: "-"), digits(t, 5..<7), t[7] == UInt8(ascii: "-"), digits(t, 8..<10) {
            return try dateOrDateTime(t, text: text)
        }
        if t.count >= 3, digits(t, 0..<2), t[2] == UInt8(ascii: ":") {
            let (time, end) = try Self.time(t, at: 0, text: text)
            guard end == t.count else { throw ScalarError(message: "invalid local time \"\(text)\": unexpected text after the time") }
            return .time(time)
        }
        return try number(t, text: text)
    }

    /// "1979-05-27T07:32:00Z" and its forms; `nil` when `text` is not one.
    static func dateTime(_ text: String) -> DocumentNode.Value? {
        guard let value = try? scalar(ArraySlice(text.utf8)), case .dateTime = value else { return nil }
        return value
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
    private func isDigit(_ b: UInt8) -> Bool { Self.isDigit(b) }

    private static func digits(_ t: [UInt8], _ range: Range<Int>) -> Bool {
        range.upperBound <= t.count && range.allSatisfy { isDigit(t[$0]) }
    }

    private static func decimal(_ t: [UInt8], _ range: Range<Int>) -> Int {
        range.reduce(0) { $0 * 10 + Int(t[$1] - UInt8(ascii: "0")) }
    }

    private static func dateOrDateTime(_ t: [UInt8], text: String) throws(ScalarError) -> DocumentNode.Value {
        let year = decimal(t, 0..<4), month = decimal(t, 5..<7), day = decimal(t, 8..<10)
        guard (1...12).contains(month) else { throw ScalarError(message: "invalid date \"\(text)\": there is no month \(month)") }
        guard let date = LocalDate(year: year, month: month, day: day) else {
            throw ScalarError(message: "invalid date \"\(text)\": \(pad(year, 4))-\(pad(month, 2)) has no day \(day)")
        }
        if t.count == 10 { return .date(date) }
        guard t[10] == UInt8(ascii: "T") || t[10] == UInt8(ascii: "t") || t[10] == UInt8(ascii: " "), t.count > 11 else {
            throw ScalarError(message: "invalid date-time \"\(text)\": expected 'T' and a time after the date")
        }
        let (time, end) = try Self.time(t, at: 11, text: text)
        let local = LocalDateTime(date: date, time: time)
        if end == t.count { return .dateTime(local, offsetSeconds: nil) }
        if end + 1 == t.count, t[end] == UInt8(ascii: "Z") || t[end] == UInt8(ascii: "z") { return .dateTime(local, offsetSeconds: 0) }
        guard end + 6 == t.count, t[end] == UInt8(ascii: "+") || t[end] == UInt8(ascii: "-"),
              digits(t, end + 1..<end + 3), t[end + 3] == UInt8(ascii: ":"), digits(t, end + 4..<end + 6) else {
            throw ScalarError(message: "invalid date-time \"\(text)\": the time may be followed only by Z or an offset such as +02:00")
        }
        let hours = decimal(t, end + 1..<end + 3), minutes = decimal(t, end + 4..<end + 6)
        guard hours <= 23, minutes <= 59 else { throw ScalarError(message: "invalid date-time \"\(text)\": offset out of range") }
        let sign = t[end] == UInt8(ascii: "-") ? -1 : 1
        return .dateTime(local, offsetSeconds: sign * (hours * 3600 + minutes * 60))
    }

    /// "HH:MM:SS" with an optional fraction, starting at `start`; returns the time and the index after it.
    private static func time(_ t: [UInt8], at start: Int, text: String) throws(ScalarError) -> (LocalTime, Int) {
        guard digits(t, start..<start + 2), start + 2 < t.count, t[start + 2] == UInt8(ascii: ":"), digits(t, start + 3..<start + 5) else {
            throw ScalarError(message: "invalid time in \"\(text)\": expected HH:MM:SS")
        }
        guard start + 5 < t.count, t[start + 5] == UInt8(ascii: ":"), digits(t, start + 6..<start + 8) else {
            throw ScalarError(message: "invalid time in \"\(text)\": seconds are required (HH:MM:SS)")
        }
        let hour = decimal(t, start..<start + 2), minute = decimal(t, start + 3..<start + 5), second = decimal(t, start + 6..<start + 8)
        guard hour <= 23, minute <= 59, second <= 59 else {
            throw ScalarError(message: "invalid time in \"\(text)\": \(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)) is out of range")
        }
        var end = start + 8
        var nanoseconds = 0
        if end < t.count, t[end] == UInt8(ascii: ".") {
            end += 1
            var count = 0
            while end < t.count, isDigit(t[end]) {
                // Precision beyond nanoseconds is truncated, as the specification asks.
                if count < 9 { nanoseconds = nanoseconds * 10 + Int(t[end] - UInt8(ascii: "0")) }
                count += 1
                end += 1
            }
            guard count > 0 else { throw ScalarError(message: "invalid time in \"\(text)\": a decimal point needs digits after it") }
            for _ in min(count, 9)..<9 { nanoseconds *= 10 }
        }
        guard let time = LocalTime(hour: hour, minute: minute, second: second, nanoseconds: nanoseconds) else {
            throw ScalarError(message: "invalid time in \"\(text)\"")
        }
        return (time, end)
    }

    /// Consumes `digit ( '_'? digit )*` from `i`; returns the digits without underscores.
    private static func digitRun(_ t: [UInt8], _ i: inout Int, text: String, isDigit valid: (UInt8) -> Bool) throws(ScalarError) -> [UInt8] {
        var result: [UInt8] = []
        guard i < t.count, valid(t[i]) else {
            if i < t.count, t[i] == UInt8(ascii: "_") { throw ScalarError(message: "invalid number \"\(text)\": an underscore must sit between two digits") }
            throw ScalarError(message: "invalid number \"\(text)\": expected a digit")
        }
        while i < t.count {
            if valid(t[i]) {
                result.append(t[i])
                i += 1
            } else if t[i] == UInt8(ascii: "_") {
                guard i + 1 < t.count, valid(t[i + 1]) else {
                    throw ScalarError(message: "invalid number \"\(text)\": an underscore must sit between two digits")
                }
                i += 1
            } else {
                break
            }
        }
        return result
    }

    private static func number(_ t: [UInt8], text: String) throws(ScalarError) -> DocumentNode.Value {
        guard let first = t.first else { throw ScalarError(message: "expected a value") }
        let isLetter = (first | 0x20) >= UInt8(ascii: "a") && (first | 0x20) <= UInt8(ascii: "z")
        if isLetter { throw ScalarError(message: "\"\(text)\" is not a TOML value (strings need quotes)") }
        // Hexadecimal, octal and binary: no sign, lowercase prefix.
        if t.count >= 2, t[0] == UInt8(ascii: "0"), let radix = [UInt8(ascii: "x"): 16, UInt8(ascii: "o"): 8, UInt8(ascii: "b"): 2][t[1]] {
            var i = 2
            let run = try digitRun(t, &i, text: text) { b in
                switch radix {
                case 16: return isDigit(b) || ((b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "f"))
                case 8: return b >= UInt8(ascii: "0") && b <= UInt8(ascii: "7")
                default: return b == UInt8(ascii: "0") || b == UInt8(ascii: "1")
                }
            }
            guard i == t.count else { throw ScalarError(message: "invalid number \"\(text)\": unexpected \(Character(Unicode.Scalar(t[i])))") }
            var value: UInt64 = 0
            for digit in run {
                let d = UInt64(isDigit(digit) ? digit - UInt8(ascii: "0") : (digit | 0x20) - UInt8(ascii: "a") + 10)
                let (shifted, overflow) = value.multipliedReportingOverflow(by: UInt64(radix))
                let (sum, carry) = shifted.addingReportingOverflow(d)
                guard !overflow, !carry, sum <= UInt64(Int64.max) else {
                    throw ScalarError(message: "integer \"\(text)\" is out of the 64-bit range")
                }
                value = sum
            }
            return .integer(Int64(value))
        }
        var i = 0
        var clean: [UInt8] = []
        if t[0] == UInt8(ascii: "+") || t[0] == UInt8(ascii: "-") {
            clean.append(t[0])
            i = 1
        }
        let integerPart = try digitRun(t, &i, text: text, isDigit: isDigit)
        if integerPart.count > 1, integerPart[0] == UInt8(ascii: "0") {
            throw ScalarError(message: "invalid number \"\(text)\": leading zeros are not allowed")
        }
        clean += integerPart
        var isFloat = false
        if i < t.count, t[i] == UInt8(ascii: ".") {
            isFloat = true
            i += 1
            guard i < t.count, isDigit(t[i]) else { throw ScalarError(message: "invalid number \"\(text)\": a decimal point needs digits after it") }
            clean.append(UInt8(ascii: "."))
            clean += try digitRun(t, &i, text: text, isDigit: isDigit)
        }
        if i < t.count, t[i] == UInt8(ascii: "e") || t[i] == UInt8(ascii: "E") {
            isFloat = true
            clean.append(UInt8(ascii: "e"))
            i += 1
            if i < t.count, t[i] == UInt8(ascii: "+") || t[i] == UInt8(ascii: "-") {
                clean.append(t[i])
                i += 1
            }
            clean += try digitRun(t, &i, text: text, isDigit: isDigit)
        }
        guard i == t.count else {
            if t[i] == UInt8(ascii: ":") || t[i] == UInt8(ascii: "-") {
                throw ScalarError(message: "invalid date or time \"\(text)\": expected YYYY-MM-DD, HH:MM:SS or a date-time")
            }
            throw ScalarError(message: "invalid number \"\(text)\"")
        }
        let cleanText = String(decoding: clean, as: UTF8.self)
        if isFloat {
            guard let value = Double(cleanText) else { throw ScalarError(message: "invalid number \"\(text)\"") }
            return .float(value)
        }
        guard let value = Int64(cleanText) else { throw ScalarError(message: "integer \"\(text)\" is out of the 64-bit range") }
        return .integer(value)
    }

    // MARK: Strings

    /// `"..."`: escapes, no newlines, no control characters but tab.
    private mutating func basicString() throws(Failure) -> String {
        let opened = here
        advance()
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("the string opened \(position(opened)) is not closed") }
            if c == .quote {
                advance()
                return String(decoding: result, as: UTF8.self)
            }
            if c == .backslash {
                try escape(into: &result)
            } else if c == .lineFeed || c == .carriageReturn {
                throw fail("the string opened \(position(opened)) is not closed on its line")
            } else if isControl(c) && c != .tab {
                throw fail("control character \(hex(c)) in a string; write it as an escape such as \\u00\(hex(c).suffix(2))")
            } else {
                result.append(c)
                advance()
            }
        }
    }

    /// `"""..."""`: escapes, newlines, and a line-ending backslash that trims the whitespace after it.
    private mutating func multilineBasicString() throws(Failure) -> String {
        let opened = here
        advance(); advance(); advance()
        if atNewline { try newline() }
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("the multi-line string opened \(position(opened)) is not closed") }
            if c == .quote, peek(1) == .quote, peek(2) == .quote {
                // One or two more quotes belong to the content.
                var quotes = 0
                while current == .quote, quotes < 5 {
                    quotes += 1
                    advance()
                }
                result.append(contentsOf: [UInt8](repeating: .quote, count: quotes - 3))
                return String(decoding: result, as: UTF8.self)
            }
            if c == .backslash {
                var lookahead = 1
                while let b = peek(lookahead), b == .space || b == .tab { lookahead += 1 }
                let following = peek(lookahead)
                if following == .lineFeed || (following == .carriageReturn && peek(lookahead + 1) == .lineFeed) {
                    advance()
                    while true {
                        if current == .space || current == .tab {
                            advance()
                        } else if atNewline {
                            try newline()
                        } else {
                            break
                        }
                    }
                    continue
                }
                if lookahead > 1 {
                    throw fail("a backslash followed by spaces must end the line in a multi-line string")
                }
                try escape(into: &result)
            } else if c == .lineFeed || c == .carriageReturn {
                try newline()
                result.append(.lineFeed)
            } else if isControl(c) && c != .tab {
                throw fail("control character \(hex(c)) in a string; write it as an escape such as \\u00\(hex(c).suffix(2))")
            } else {
                result.append(c)
                advance()
            }
        }
    }

    private mutating func escape(into result: inout [UInt8]) throws(Failure) {
        let location = here
        advance()  // backslash
        guard let e = current else { throw fail("the file ends inside an escape sequence") }
        switch e {
        case UInt8(ascii: "b"): result.append(0x08)
        case UInt8(ascii: "t"): result.append(0x09)
        case UInt8(ascii: "n"): result.append(0x0A)
        case UInt8(ascii: "f"): result.append(0x0C)
        case UInt8(ascii: "r"): result.append(0x0D)
        case .quote: result.append(.quote)
        case .backslash: result.append(.backslash)
        case UInt8(ascii: "u"), UInt8(ascii: "U"):
            let count = e == UInt8(ascii: "u") ? 4 : 8
            var code: UInt32 = 0
            for offset in 1...count {
                guard let h = peek(offset), let digit = hexDigit(h) else {
                    throw fail("the escape \\\(Character(Unicode.Scalar(e))) needs \(count) hexadecimal digits", at: location)
                }
                code = code << 4 | digit
            }
            guard let scalar = Unicode.Scalar(code) else {
                throw fail("the escape \\\(Character(Unicode.Scalar(e)))\(String(code, radix: 16, uppercase: true)) is not a Unicode scalar value", at: location)
            }
            for _ in 0..<count { advance() }
            result.append(contentsOf: Array(String(Character(scalar)).utf8))
        default:
            throw fail("unknown escape \\\(isControl(e) || e >= 0x80 ? describe(e) : String(Character(Unicode.Scalar(e)))); TOML allows \\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX and \\UXXXXXXXX", at: location)
        }
        advance()
    }

    private func hexDigit(_ b: UInt8) -> UInt32? {
        if isDigit(b) { return UInt32(b - UInt8(ascii: "0")) }
        let lower = b | 0x20
        if lower >= UInt8(ascii: "a") && lower <= UInt8(ascii: "f") { return UInt32(lower - UInt8(ascii: "a") + 10) }
        return nil
    }

    /// `'...'`: no escapes, no newlines, no control characters but tab.
    private mutating func literalString() throws(Failure) -> String {
        let opened = here
        advance()
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("the string opened \(position(opened)) is not closed") }
            if c == .apostrophe {
                advance()
                return String(decoding: result, as: UTF8.self)
            }
            if c == .lineFeed || c == .carriageReturn { throw fail("the string opened \(position(opened)) is not closed on its line") }
            if isControl(c) && c != .tab { throw fail("control character \(hex(c)) in a literal string") }
            result.append(c)
            advance()
        }
    }

    /// `'''...'''`: raw text over several lines.
    private mutating func multilineLiteralString() throws(Failure) -> String {
        let opened = here
        advance(); advance(); advance()
        if atNewline { try newline() }
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("the multi-line string opened \(position(opened)) is not closed") }
            if c == .apostrophe, peek(1) == .apostrophe, peek(2) == .apostrophe {
                var quotes = 0
                while current == .apostrophe, quotes < 5 {
                    quotes += 1
                    advance()
                }
                result.append(contentsOf: [UInt8](repeating: .apostrophe, count: quotes - 3))
                return String(decoding: result, as: UTF8.self)
            }
            if c == .lineFeed || c == .carriageReturn {
                try newline()
                result.append(.lineFeed)
            } else if isControl(c) && c != .tab {
                throw fail("control character \(hex(c)) in a literal string")
            } else {
                result.append(c)
                advance()
            }
        }
    }
}

extension UInt8 {
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let apostrophe = UInt8(ascii: "'")
    fileprivate static let hash = UInt8(ascii: "#")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let dot = UInt8(ascii: ".")
    fileprivate static let equals = UInt8(ascii: "=")
    fileprivate static let backslash = UInt8(ascii: "\\")
    fileprivate static let leftBracket = UInt8(ascii: "[")
    fileprivate static let rightBracket = UInt8(ascii: "]")
    fileprivate static let leftBrace = UInt8(ascii: "{")
    fileprivate static let rightBrace = UInt8(ascii: "}")
}
