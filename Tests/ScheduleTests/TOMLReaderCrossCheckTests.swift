import Foundation
import Testing
@testable import Scheduling

/// The position reader must read every valid document exactly as TOMLKit (toml++) does.
@Suite("TOML position reader agrees with TOMLKit")
struct TOMLReaderCrossCheckTests {
    @Test("The example schedules and the test documents read the same")
    func examples() throws {
        var texts = [ReadingTests.toml, DiagnosticsTests.base, LayoutReadingTests.toml]
        for name in ["demo.toml", "week.toml", "emergency.toml", "portrait.toml", "layout.toml"] {
            texts.append(try String(contentsOfFile: packageRoot + "/Schedules/" + name, encoding: .utf8))
        }
        for text in texts {
            #expect(TOMLCrossCheck.differences(in: text) == [], "\(text.prefix(60))")
        }
    }

    /// Random documents: nested tables, arrays of tables, dotted and quoted keys, inline tables,
    /// every string form with escapes and Unicode, integers in four bases, floats, dates and times.
    struct DocumentGenerator {
        var rng: SeededGenerator
        var output = ""

        mutating func pick<T>(_ options: [T]) -> T { options.randomElement(using: &rng)! }
        mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

        mutating func key() -> String {
            let bare = pick(["a", "b", "key", "x-y", "under_score", "42", "Name2"])
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: return "\"quoted \(bare) é\""
            case 1: return "'lit.\(bare)'"
            default: return bare + String(Int.random(in: 0..<1000, using: &rng))
            }
        }

        mutating func string() -> String {
            let pieces = ["plain", "with \\\"quotes\\\"", "tab\\tnew\\nline", "\\u00e9\\U0001F600", "ünïcødé", "#not a comment", "[brackets] {braces}", "back\\\\slash", ""]
            let content = (0..<Int.random(in: 1...3, using: &rng)).map { _ in pick(pieces) }.joined(separator: " ")
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: return "'" + content.replacingOccurrences(of: "\\", with: "/").replacingOccurrences(of: "'", with: "") + "'"
            case 1: return "\"\"\"\n" + content + "\nsecond line \\\n    continued\"\"\""
            case 2: return "'''\n" + content.replacingOccurrences(of: "'", with: "") + "\n raw \\n line'''"
            default: return "\"" + content + "\""
            }
        }

        mutating func scalar() -> String {
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: return string()
            case 1: return String(Int.random(in: -1_000_000...1_000_000, using: &rng))
            case 2: return "1_000_" + pad(Int.random(in: 0...999, using: &rng), 3)
            case 3: return pick(["0x1F", "0xdead_beef", "0o17", "0o755", "0b101", "0b1_0000"])
            case 4: return pick(["3.14", "-0.5", "1e6", "6.02e23", "1_000.5", "inf", "-inf", "2E-3"])
            case 5: return pick(["true", "false"])
            case 6: return "2026-0\(Int.random(in: 1...9, using: &rng))-1\(Int.random(in: 0...9, using: &rng))"
            case 7: return pick(["07:32:00", "23:59:59.999", "00:00:00.5"])
            case 8: return pick(["1979-05-27T07:32:00Z", "1979-05-27 07:32:00", "1979-05-27T00:32:00.999-07:00", "2026-03-29T02:30:00+02:00"])
            case 9:
                let count = Int.random(in: 0...3, using: &rng)
                return "[" + (0..<count).map { _ in scalar() }.joined(separator: ", ") + (count > 0 && chance(30) ? ",\n  # comment\n" : "") + "]"
            case 10:
                let keys = ["k", "\"quoted key\"", "'literal'", "dotted.part"].shuffled(using: &rng).prefix(Int.random(in: 0...3, using: &rng))
                return "{ " + keys.map { $0 + " = " + scalar() }.joined(separator: ", ") + " }"
            default: return String(Int.random(in: 0...9, using: &rng))
            }
        }

        mutating func document() -> String {
            var lines: [String] = []
            var used = Set<String>()
            func unique(_ k: String) -> String? { used.insert(k).inserted ? k : nil }
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                guard let k = unique(key()) else { continue }
                lines.append(k + " = " + scalar() + (chance(20) ? "  # trailing comment" : ""))
            }
            if chance(50), let k = unique("dotted" + String(Int.random(in: 0...99, using: &rng))) {
                lines.append("\(k).inner.\(key()) = \(scalar())")
            }
            for section in 0..<Int.random(in: 0...3, using: &rng) {
                let name = "section\(section)"
                if chance(50) {
                    for _ in 0..<Int.random(in: 1...3, using: &rng) {
                        lines.append("")
                        lines.append("[[\(name).items]]")
                        var keys = Set<String>()
                        for _ in 0..<Int.random(in: 0...3, using: &rng) {
                            let k = key()
                            if keys.insert(k).inserted { lines.append("  \(k) = \(scalar())") }
                        }
                        if chance(40) {
                            lines.append("  [[\(name).items.sub]]")
                            lines.append("  value = \(scalar())")
                        }
                    }
                } else {
                    lines.append("")
                    lines.append("[\(name).\"quoted sub\"]")
                    var keys = Set<String>()
                    for _ in 0..<Int.random(in: 0...3, using: &rng) {
                        let k = key()
                        if keys.insert(k).inserted { lines.append("\(k) = \(scalar())") }
                    }
                }
            }
            return lines.joined(separator: chance(20) ? "\r\n" : "\n") + "\n"
        }
    }

    @Test("400 random documents read the same; documents TOMLKit rejects are not counted")
    func randomDocuments() {
        var generator = DocumentGenerator(rng: SeededGenerator(seed: 99))
        var compared = 0
        for _ in 0..<400 {
            let text = generator.document()
            guard let differences = TOMLCrossCheck.differences(in: text) else { continue }
            compared += 1
            #expect(differences == [], "\(text)")
        }
        #expect(compared >= 350)
    }
}
