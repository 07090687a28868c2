/// A parsed schedule document, TOML or JSON alike, in which every value knows where it was written.
///
/// This tree, built by ``TOMLPositionReader`` or ``JSONReader`` (both strict about syntax), keeps
/// each key's position so that the meaning checks can point at `file:line:column`.
package struct DocumentNode: Sendable {
    package enum Value: Sendable {
        case string(String)
        case integer(Int64)
        case float(Double)
        case bool(Bool)
        case date(LocalDate)
        case time(LocalTime)
        case dateTime(LocalDateTime, offsetSeconds: Int?)
        case array([DocumentNode])
        case table(DocumentTable)
    }

    package var value: Value
    /// Where the value's key (or, in an array, the value itself) was written.
    package var location: SourceLocation

    /// "string", "integer", … for messages.
    package var typeName: String {
        switch value {
        case .string: return "a string"
        case .integer: return "an integer"
        case .float: return "a number"
        case .bool: return "a boolean"
        case .date: return "a date"
        case .time: return "a time"
        case .dateTime: return "a date-time"
        case .array: return "an array"
        case .table: return "a table"
        }
    }
}

/// A table that keeps its keys in the order they were written.
package struct DocumentTable: Sendable {
    package var keys: [String] = []
    package var values: [String: DocumentNode] = [:]
    /// Where each key was written.
    package var keyLocations: [String: SourceLocation] = [:]

    package subscript(key: String) -> DocumentNode? { values[key] }

    mutating func set(_ key: String, _ node: DocumentNode, at location: SourceLocation) {
        if values[key] == nil { keys.append(key) }
        values[key] = node
        keyLocations[key] = location
    }
}
