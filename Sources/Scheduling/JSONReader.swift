/// Reads JSON (RFC 8259) into a ``DocumentNode`` tree with positions, for schedules that other
/// systems generate. Dates, times and durations are strings in JSON; the schedule reader accepts
/// them as strings in TOML too.
struct JSONReader {
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
    private var depth = 0

    static func read(_ text: String, file: String) throws(Failure) -> DocumentNode {
        var reader = JSONReader(bytes: Array(text.utf8), file: file)
        reader.skipSpace()
        let node = try reader.value(keyLocation: nil)
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw reader.fail("unexpected text after the JSON value") }
        return node
    }

    private init(bytes: [UInt8], file: String) {
        self.bytes = bytes
        self.file = file
    }

    private var here: SourceLocation { SourceLocation(file: file, line: line, column: column) }
    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }
    private func fail(_ message: String) -> Failure { Failure(line: line, column: column, message: message) }

    private mutating func advance() {
        guard index < bytes.count else { return }
        if bytes[index] == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if bytes[index] & 0xC0 != 0x80 {
            column += 1
        }
        index += 1
    }

    private mutating func skipSpace() {
        while let c = current, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { advance() }
    }

    private mutating func value(keyLocation: SourceLocation?) throws(Failure) -> DocumentNode {
        let location = keyLocation ?? here
        guard let c = current else { throw fail("unexpected end of JSON") }
        depth += 1
        defer { depth -= 1 }
        guard depth < 200 else { throw fail("JSON nested too deeply") }
        switch c {
        case UInt8(ascii: "{"):
            advance()
            var table = DocumentTable()
            skipSpace()
            if current == UInt8(ascii: "}") { advance(); return DocumentNode(value: .table(table), location: location) }
            while true {
                skipSpace()
                let keyAt = here
                guard current == UInt8(ascii: "\"") else { throw fail("expected a quoted key") }
                let key = try string()
                if table.values[key] != nil {
                    throw Failure(line: keyAt.line, column: keyAt.column, message: "duplicate key \"\(key)\"")
                }
                skipSpace()
                guard current == UInt8(ascii: ":") else { throw fail("expected : after the key") }
                advance()
                skipSpace()
                table.set(key, try value(keyLocation: keyAt), at: keyAt)
                skipSpace()
                if current == UInt8(ascii: ",") { advance(); continue }
                guard current == UInt8(ascii: "}") else { throw fail("expected , or }") }
                advance()
                return DocumentNode(value: .table(table), location: location)
            }
        case UInt8(ascii: "["):
            advance()
            var elements: [DocumentNode] = []
            skipSpace()
            if current == UInt8(ascii: "]") { advance(); return DocumentNode(value: .array(elements), location: location) }
            while true {
                skipSpace()
                elements.append(try value(keyLocation: nil))
                skipSpace()
                if current == UInt8(ascii: ",") { advance(); continue }
                guard current == UInt8(ascii: "]") else { throw fail("expected , or ]") }
                advance()
                return DocumentNode(value: .array(elements), location: location)
            }
        case UInt8(ascii: "\""):
            return DocumentNode(value: .string(try string()), location: location)
        default:
            let start = index
            while let b = current, (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9"))
                || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".") || b == UInt8(ascii: "E") {
                advance()
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            switch text {
            case "true": return DocumentNode(value: .bool(true), location: location)
            case "false": return DocumentNode(value: .bool(false), location: location)
            case "null": throw Failure(line: location.line, column: location.column, message: "null is not allowed in a schedule; leave the key out")
            default: break
            }
            if isJSONNumber(text) {
                if let integer = Int64(text) { return DocumentNode(value: .integer(integer), location: location) }
                if let double = Double(text) { return DocumentNode(value: .float(double), location: location) }
            }
            throw Failure(line: location.line, column: location.column, message: text.isEmpty ? "unexpected character" : "invalid JSON value \"\(text)\"")
        }
    }

    private func isJSONNumber(_ text: String) -> Bool {
        var chars = Array(text.utf8)[...]
        if chars.first == UInt8(ascii: "-") { chars = chars.dropFirst() }
        guard let first = chars.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else { return false }
        if first == UInt8(ascii: "0"), chars.count > 1, let second = chars.dropFirst().first, second >= UInt8(ascii: "0"), second <= UInt8(ascii: "9") { return false }
        return true
    }

    private mutating func string() throws(Failure) -> String {
        advance()
        var result: [UInt8] = []
        while true {
            guard let c = current else { throw fail("unterminated string") }
            guard c >= 0x20 else { throw fail("control character in a string") }
            if c == UInt8(ascii: "\"") { advance(); return String(decoding: result, as: UTF8.self) }
            if c != UInt8(ascii: "\\") {
                result.append(c)
                advance()
                continue
            }
            advance()
            guard let e = current else { throw fail("unterminated escape") }
            advance()
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): result.append(e)
            case UInt8(ascii: "b"): result.append(0x08)
            case UInt8(ascii: "f"): result.append(0x0C)
            case UInt8(ascii: "n"): result.append(0x0A)
            case UInt8(ascii: "r"): result.append(0x0D)
            case UInt8(ascii: "t"): result.append(0x09)
            case UInt8(ascii: "u"):
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code) {
                    guard current == UInt8(ascii: "\\") else { throw fail("lone surrogate") }
                    advance()
                    guard current == UInt8(ascii: "u") else { throw fail("lone surrogate") }
                    advance()
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail("bad surrogate pair") }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(code) else { throw fail("bad unicode escape") }
                result.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("unknown escape")
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        var text = ""
        for _ in 0..<4 {
            guard let h = current else { throw fail("short unicode escape") }
            text.append(Character(Unicode.Scalar(h)))
            advance()
        }
        guard let value = UInt32(text, radix: 16) else { throw fail("bad unicode escape") }
        return value
    }
}
