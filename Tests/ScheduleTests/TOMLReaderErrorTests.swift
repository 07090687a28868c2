import Testing
@testable import Scheduling

/// What the TOML reader says about invalid documents, and that it stays total on hostile ones.
@Suite("TOML reader errors")
struct TOMLReaderErrorTests {
    /// The failure for `text`, or `nil` when it reads.
    func readFailure(_ text: String) -> TOMLPositionReader.Failure? {
        do {
            _ = try TOMLPositionReader.read(text, file: "t.toml")
            return nil
        } catch {
            return error
        }
    }

    @Test("Errors point at the offending line and column", arguments: [
        ("version = 1\nname = 1\nname = 2", 3, 1, "duplicate key name (first at 2:1)"),
        ("[a]\nx = 1\n[a]", 3, 2, "table [a] is defined twice (first at 1:1)"),
        ("[fruit]\napple.color = 1\n[fruit.apple]", 3, 8, "already defined by dotted keys"),
        ("a = [1]\n[[a]]", 2, 3, "cannot append to the static array a"),
        ("a = { b = 1 }\na.c = 2", 2, 1, "a is an inline table"),
        ("s = \"x\\qy\"", 1, 7, "unknown escape \\q"),
        ("s = \"bell\u{07}\"", 1, 10, "control character U+0007"),
        ("n = 01", 1, 5, "leading zeros are not allowed"),
        ("n = 1__0", 1, 5, "underscore must sit between two digits"),
        ("n = 9223372036854775808", 1, 5, "out of the 64-bit range"),
        ("d = 2023-02-29", 1, 5, "2023-02 has no day 29"),
        ("t = 07:32", 1, 5, "seconds are required"),
        ("s = \"open\nx = 1", 1, 10, "not closed on its line"),
        ("a = [1, 2", 1, 10, "the array opened at 1:5 is not closed"),
        ("t = { a = 1,\n b = 2 }", 1, 13, "an inline table must be written on one line"),
        ("t = { a = 1, }", 1, 14, "a trailing comma is not allowed"),
        ("key \"value\"", 1, 5, "expected '=' after the key key"),
        ("a = 1 b = 2", 1, 7, "expected the end of the line after the value"),
    ] as [(String, Int, Int, String)])
    func positions(_ text: String, _ line: Int, _ column: Int, _ message: String) throws {
        let failure = try #require(readFailure(text))
        #expect(failure.line == line && failure.column == column, "\(failure.line):\(failure.column) \(failure.message)")
        #expect(failure.message.contains(message), "\(failure.message)")
    }

    @Test("A schedule with a TOML mistake gets one syntax diagnostic naming the file")
    func diagnostic() {
        let result = ScheduleReader.parse(text: "version = 1\nfallback = \"a\"\nfallback = \"b\"\n", path: "/srv/week.toml")
        #expect(result.schedule == nil)
        #expect(result.diagnostics.map(\.kind) == [.syntax])
        #expect(result.diagnostics.first?.location == SourceLocation(file: "/srv/week.toml", line: 3, column: 1))
        #expect(result.diagnostics.first?.message.hasPrefix("TOML syntax: duplicate key fallback") == true)
    }

    @Test("Hostile nesting and lengths end in an error, not a crash")
    func totality() {
        let deep = 20_000
        #expect(readFailure("a = " + String(repeating: "[", count: deep))?.message.contains("nest deeper") == true)
        #expect(readFailure("a = " + String(repeating: "{b=", count: deep))?.message.contains("nest deeper") == true)
        #expect(readFailure(Array(repeating: "k", count: deep).joined(separator: ".") + " = 1")?.message.contains("nest deeper") == true)
        #expect(readFailure("[" + Array(repeating: "k", count: deep).joined(separator: ".") + "]")?.message.contains("nest deeper") == true)
        // At the limit nesting still reads.
        let limit = TOMLPositionReader.maximumDepth - 1
        #expect(readFailure("a = " + String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) == nil)
        // Long but flat documents read.
        #expect(readFailure("a = [" + Array(repeating: "1", count: deep).joined(separator: ",") + "]") == nil)
        #expect(readFailure("s = \"" + String(repeating: "x", count: deep) + "\"") == nil)
        #expect(readFailure(String(repeating: "[[a]]\nb = 1\n", count: deep)) == nil)
        let dotted = Array(repeating: "k", count: 90).joined(separator: ".")
        #expect(readFailure((0..<10_000).map { "\(dotted).v\($0) = \($0)" }.joined(separator: "\n")) == nil)
        // Every prefix of a document that uses every construct ends in a verdict.
        let text = TOMLCorpus.samples.filter(\.isValid).map(\.text).joined(separator: "\n")
        var bytes = Array(text.utf8)
        while !bytes.isEmpty {
            _ = readFailure(String(decoding: bytes, as: UTF8.self))
            bytes.removeLast(max(1, bytes.count / 50))
        }
    }
}
