import Foundation
import Testing
@testable import Scheduling

/// The TOML reader against Python's `tomllib` (scripts/toml_reference.py): the same verdict on
/// every document, and the same values on every document both accept.
@Suite("TOML reader agrees with tomllib")
struct TOMLReferenceTests {
    struct Reference: Decodable {
        var accepted: Bool
        var value: String?
        var error: String?
    }

    /// What tomllib makes of each document, in order.
    static func reference(_ documents: [String]) throws -> [Reference] {
        let input = try JSONEncoder().encode(documents)
        let output = try runPython(script: packageRoot + "/scripts/toml_reference.py", input: input)
        return try JSONDecoder().decode([Reference].self, from: output)
    }

    /// Our verdict: the canonical value, or the failure.
    static func ours(_ text: String) -> Result<String, TOMLPositionReader.Failure> {
        do {
            return .success(TOMLCanonical.encode(try TOMLPositionReader.read(text, file: "sample.toml")))
        } catch {
            return .failure(error)
        }
    }

    /// Compares one document; returns what differs, or `nil` when both agree.
    static func disagreement(_ text: String, _ reference: Reference) -> String? {
        switch (ours(text), reference.accepted) {
        case (.success(let mine), true):
            guard let theirs = reference.value, Array(mine.utf8) == Array(theirs.utf8) else {
                return "values differ:\n  ours:    \(mine)\n  tomllib: \(reference.value ?? "nil")"
            }
            return nil
        case (.success(let mine), false):
            return "we accept (\(mine)) but tomllib rejects: \(reference.error ?? "")"
        case (.failure(let failure), true):
            return "we reject at \(failure.line):\(failure.column) (\(failure.message)) but tomllib accepts"
        case (.failure, false):
            return nil
        }
    }

    @Test("Every corpus sample: the verdict is the specification's and tomllib's; accepted values equal tomllib's")
    func corpus() throws {
        let samples = TOMLCorpus.samples
        #expect(samples.count >= 120)
        #expect(samples.filter(\.isValid).count >= 50)
        #expect(samples.filter { !$0.isValid }.count >= 100)
        let references = try Self.reference(samples.map(\.text))
        try #require(references.count == samples.count)
        for (sample, reference) in zip(samples, references) {
            #expect(reference.accepted == sample.isValid, "tomllib's verdict differs from the corpus on \(sample): \(reference.error ?? "accepted")")
            if let problem = Self.disagreement(sample.text, reference) {
                Issue.record("\(sample): \(problem)\n\(sample.text)")
            }
        }
    }

    @Test("Rejections name a line and column inside the document and say why")
    func rejectionsHavePositions() {
        for sample in TOMLCorpus.samples where !sample.isValid {
            guard case .failure(let failure) = Self.ours(sample.text) else { continue }
            let lines = sample.text.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(failure.line >= 1 && failure.line <= lines.count, "\(sample): line \(failure.line)")
            #expect(failure.column >= 1, "\(sample): column \(failure.column)")
            #expect(!failure.message.isEmpty, "\(sample)")
        }
    }

    @Test("Valid samples read the same as TOMLKit wherever TOMLKit accepts them")
    func tomlKitAgrees() {
        var compared = 0
        // TOMLKit hands keys over as C strings, so a key with an escaped NUL is cut short there.
        for sample in TOMLCorpus.samples where sample.isValid && !sample.text.contains(#"\u0000"#) {
            guard let differences = TOMLCrossCheck.differences(in: sample.text) else { continue }
            compared += 1
            #expect(differences == [], "\(sample)")
        }
        #expect(compared >= 50)
    }

    @Test("400 generated documents (nested tables, arrays of tables, every string form): the same values as tomllib")
    func generatedDocuments() throws {
        var generator = TOMLReaderCrossCheckTests.DocumentGenerator(rng: SeededGenerator(seed: 7))
        let documents = (0..<400).map { _ in generator.document() }
        let references = try Self.reference(documents)
        try #require(references.count == documents.count)
        #expect(references.filter(\.accepted).count >= 350)
        for (text, reference) in zip(documents, references) {
            if let problem = Self.disagreement(text, reference) {
                Issue.record("\(problem)\n\(text)")
            }
        }
    }

    /// Mutates `text` with TOML's own punctuation and the pieces of numbers, dates and escapes.
    static func mutate(_ text: String, using rng: inout SeededGenerator) -> String {
        var chars = Array(text)
        let inserts: [String] = ["\"", "'", "\"\"\"", "'''", "[", "]", "[[", "]]", "{", "}", "=", ".", ",", "#", "\n", "\r", "\r\n",
                                 "\t", " ", "\\", "\\u", "\\U", "_", "0", "1", "9", "-", "+", ":", "T", "Z", "e", "x", "o", "b",
                                 "inf", "nan", "true", "\u{0}", "\u{7F}", "é", "a", "a.b", "= 1\n", "\n[t]\n"]
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            guard !chars.isEmpty else { break }
            let at = Int.random(in: 0..<chars.count, using: &rng)
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: chars.remove(at: at)
            case 1: chars.insert(contentsOf: inserts.randomElement(using: &rng)!, at: at)
            case 2:
                let end = min(chars.count, at + Int.random(in: 1...30, using: &rng))
                chars.insert(contentsOf: chars[at..<end], at: at)
            default:
                chars[at] = inserts.randomElement(using: &rng)!.first ?? " "
            }
        }
        return String(chars)
    }

    @Test("3000 mutated corpus documents: the same verdict and values as tomllib")
    func mutatedCorpus() throws {
        let rounds = Int(ProcessInfo.processInfo.environment["TOML_MUTATION_ROUNDS"] ?? "") ?? 3000
        var rng = SeededGenerator(seed: UInt64(ProcessInfo.processInfo.environment["TOML_MUTATION_SEED"] ?? "") ?? 1_000_003)
        let samples = TOMLCorpus.samples
        let documents = (0..<rounds).map { round in
            round % 3 == 0
                ? MalformedInputTests.mutate(samples[round % samples.count].text, using: &rng)
                : Self.mutate(samples[round % samples.count].text, using: &rng)
        }
        let references = try Self.reference(documents)
        try #require(references.count == documents.count)
        var accepted = 0
        for (text, reference) in zip(documents, references) {
            if reference.accepted { accepted += 1 }
            if let problem = Self.disagreement(text, reference) {
                Issue.record("\(problem)\n\(text.debugDescription)")
            }
        }
        // Both kinds of document are exercised.
        #expect(accepted > rounds / 10)
        #expect(accepted < rounds * 9 / 10)
    }
}

/// The canonical text form that scripts/toml_reference.py also writes (documented there).
enum TOMLCanonical {
    static func encode(_ node: DocumentNode) -> String {
        switch node.value {
        case .string(let text): return string(text)
        case .integer(let value): return "i\(value)"
        case .float(let value): return value.isNaN ? "fnan" : "f\(value.bitPattern)"
        case .bool(let value): return value ? "btrue" : "bfalse"
        case .date(let date): return "d" + day(date)
        case .time(let time): return "t" + clock(time)
        case .dateTime(let local, let offset):
            let text = day(local.date) + "T" + clock(local.time)
            guard let offset else { return "L" + text }
            return "D" + text + String(offset / 60)
        case .array(let elements):
            return "[" + elements.map(encode).joined(separator: ",") + "]"
        case .table(let table):
            let keys = table.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return "{" + keys.compactMap { key in table[key].map { string(key) + "=" + encode($0) } }.joined(separator: ",") + "}"
        }
    }

    static func string(_ text: String) -> String { "s\(text.utf8.count):" + text }

    static func day(_ date: LocalDate) -> String { pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) }

    static func clock(_ time: LocalTime) -> String {
        pad(time.hour, 2) + ":" + pad(time.minute, 2) + ":" + pad(time.second, 2) + "." + pad(time.nanoseconds / 1000, 6)
    }
}
