import TOMLKit
@testable import Scheduling

/// Compares what ``TOMLPositionReader`` reads with what TOMLKit (toml++) reads, for tests: the
/// position reader supplies the values the schedule uses, so it must agree with the reference
/// parser on every valid document.
enum TOMLCrossCheck {
    /// Paths at which the two readers disagree; empty when they agree. `nil` when TOMLKit rejects the text.
    static func differences(in text: String) -> [String]? {
        let ours: DocumentNode
        do {
            ours = try TOMLPositionReader.read(text, file: "cross-check")
        } catch {
            // Valid TOML the position reader rejects is a difference; invalid TOML is not counted.
            guard (try? TOMLTable(string: text)) != nil else { return nil }
            return ["position reader failed at \(error.line):\(error.column): \(error.message)"]
        }
        guard let reference = try? TOMLTable(string: text) else { return nil }
        var found: [String] = []
        compare(ours, reference.tomlValue, path: "", into: &found)
        return found
    }

    private static func compare(_ node: DocumentNode, _ value: TOMLValue, path: String, into found: inout [String]) {
        func differ(_ what: String) { found.append("\(path.isEmpty ? "(root)" : path): \(what)") }
        switch (node.value, value.type) {
        case (.table(let table), .table):
            guard let reference = value.table else { return differ("no table") }
            let referenceKeys = Set(reference.keys)
            if Set(table.keys) != referenceKeys { return differ("keys \(table.keys.sorted()) != \(referenceKeys.sorted())") }
            for key in table.keys {
                guard let child = reference[key]?.tomlValue, let mine = table[key] else { continue }
                compare(mine, child, path: path + "." + key, into: &found)
            }
        case (.array(let elements), .array):
            guard let reference = value.array else { return differ("no array") }
            if elements.count != reference.count { return differ("\(elements.count) elements != \(reference.count)") }
            for (index, element) in elements.enumerated() {
                compare(element, reference[index].tomlValue, path: path + "[\(index)]", into: &found)
            }
        case (.string(let s), .string):
            if s != value.string { differ("\(s.debugDescription) != \(value.string?.debugDescription ?? "nil")") }
        case (.integer(let i), .int):
            if Int(i) != value.int { differ("\(i) != \(value.int.map(String.init) ?? "nil")") }
        case (.float(let f), .double):
            let d = value.double ?? .nan
            if !(f == d || (f.isNaN && d.isNaN)) { differ("\(f) != \(d)") }
        case (.bool(let b), .bool):
            if b != value.bool { differ("\(b) != \(String(describing: value.bool))") }
        case (.date(let date), .date):
            guard let d = value.date else { return differ("no date") }
            if (date.year, date.month, date.day) != (d.year, d.month, d.day) { differ("\(date) != \(d)") }
        case (.time(let time), .time):
            guard let t = value.time else { return differ("no time") }
            if !same(time, t) { differ("\(time) != \(t)") }
        case (.dateTime(let local, let offset), .dateTime):
            guard let dt = value.dateTime else { return differ("no date-time") }
            let d = dt.date
            if (local.date.year, local.date.month, local.date.day) != (d.year, d.month, d.day) || !same(local.time, dt.time) {
                differ("\(local) != \(dt)")
            }
            if offset.map({ $0 / 60 }) != dt.offset?.offset { differ("offset \(String(describing: offset)) != \(String(describing: dt.offset))") }
        default:
            differ("\(node.typeName) != \(value.type)")
        }
    }

    private static func same(_ time: LocalTime, _ t: TOMLTime) -> Bool {
        time.hour == t.hour && time.minute == t.minute && time.second == t.second && time.nanoseconds == t.nanoSecond
    }
}
