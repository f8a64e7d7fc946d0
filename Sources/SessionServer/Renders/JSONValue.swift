internal import Foundation

/// JSON with its keys sorted and slashes left unescaped: the same value, the same bytes (answers,
/// log lines, a script's canonical form).
enum SortedJSON {
    static func encode(_ value: some Encodable) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}

/// Any JSON value, read exactly enough to check a request's fields by their JSON paths and to
/// write its script back as canonical JSON (keys sorted) for the render's digest.
package enum JSONValue: Codable, Sendable, Equatable {
    case null
    case bool(Bool)
    /// A whole number JSON holds exactly (within 64 bits).
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The value as a whole number, when it is one (`7` or `7.0`), else `nil`.
    var wholeNumber: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value) where value == value.rounded() && abs(value) < 9.2e18: Int64(value)
        default: nil
        }
    }

    /// The value as a number, when it is one.
    var number: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .number(let value): value
        default: nil
        }
    }
}
