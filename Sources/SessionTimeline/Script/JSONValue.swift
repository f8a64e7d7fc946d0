/// A parsed JSON document, kept loose so that a validator can report every problem in it
/// rather than the first one a typed decoder trips over.
package enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses `bytes` as one JSON document (RFC 8259), or throws a ``ScriptError`` (``ScriptError/Code/notJSON``)
    /// whose one problem gives the line and column of the first syntax error.
    ///
    /// Why not Foundation: on Linux, `JSONSerialization` reads some doubles one unit in the last
    /// place off (16.856734693877552 becomes …556) and `JSONDecoder` neither says where a syntax
    /// error is nor decodes untyped values without throwing an error per value (ten seconds for
    /// a 100,000-segment file). This parser converts numbers with `Double(String)`, which rounds
    /// correctly, and refuses nesting deeper than ``JSONParser/maximumDepth``.
    ///
    /// A UTF-8 byte-order mark before the document is skipped (editors on Windows write one); a
    /// key twice in one object is an error naming its JSON path, never "the last one wins".
    package static func parse<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(ScriptError) -> JSONValue {
        var parser = JSONParser(
            bytes: bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : Array(bytes)
        )
        do {
            return try parser.document()
        } catch {
            let (line, column) = lineAndColumn(ofByte: error.offset, in: parser.bytes)
            throw ScriptError(
                .notJSON,
                ScriptProblem(location: "line \(line), column \(column)", rule: error.reason, line: line)
            )
        }
    }

    /// The UTF-8 byte-order mark a document may start with, which ``parse(_:)`` skips.
    package static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// The 1-based line and column (in characters) of byte `offset` of UTF-8 `bytes`.
    static func lineAndColumn(ofByte offset: Int, in bytes: [UInt8]) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(offset) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The name of this kind of value, for messages: "a string", "an array".
    package var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Where and why a text stops being JSON.
struct JSONSyntaxError: Error {
    let offset: Int
    let reason: String
}

/// A strict recursive-descent JSON parser over UTF-8 bytes.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted; a script needs three.
    static let maximumDepth = 64

    let bytes: [UInt8]
    private var index = 0
    private var depth = 0
    /// Where the parser is, as a validator names places (`segments[2].text`), for the one error
    /// that is about a place rather than a character: a duplicate key.
    private var path: [String] = []

    init(bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func document() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        if index == bytes.count {
            throw JSONSyntaxError(offset: index, reason: "the file is empty; expected a JSON object")
        }
        let value = try value()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected text after the end of the JSON value") }
        return value
    }

    private mutating func value() throws(JSONSyntaxError) -> JSONValue {
        guard index < bytes.count else { throw failure("the text ends where a value was expected") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("expected a value (object, array, string, number, true, false or null)")
        }
    }

    private mutating func object() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if consume(UInt8(ascii: "}")) {
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw failure("expected a key in double quotes")
            }
            let keyStart = index
            let key = try string()
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw failure("expected ':' after the key") }
            skipWhitespace()
            guard members[key] == nil else {
                let place = path.isEmpty ? "the top-level object" : path.joined()
                throw JSONSyntaxError(
                    offset: keyStart,
                    reason: "the key \(quoted(key)) appears twice in \(place); only one of them can count"
                )
            }
            path.append(path.isEmpty ? key : "." + key)
            members[key] = try value()
            path.removeLast()
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(UInt8(ascii: "}")) else { throw failure("expected ',' or '}' after a member of an object") }
            depth -= 1
            return .object(members)
        }
    }

    private mutating func array() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if consume(UInt8(ascii: "]")) {
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            path.append("[\(elements.count)]")
            elements.append(try value())
            path.removeLast()
            skipWhitespace()
            if consume(UInt8(ascii: ",")) { continue }
            guard consume(UInt8(ascii: "]")) else { throw failure("expected ',' or ']' after an element of an array") }
            depth -= 1
            return .array(elements)
        }
    }

    private mutating func string() throws(JSONSyntaxError) -> String {
        let start = index
        index += 1
        var utf8: [UInt8] = []
        while true {
            guard index < bytes.count else { throw JSONSyntaxError(offset: start, reason: "a string is not closed") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw JSONSyntaxError(offset: start, reason: "a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else {
                    throw JSONSyntaxError(offset: start, reason: "a string is not closed")
                }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default:
                    index -= 2
                    throw failure("unknown escape in a string")
                }
            case 0..<0x20:
                throw failure("a control character must be escaped inside a string")
            default:
                utf8.append(byte)
                index += 1
            }
        }
    }

    /// The UTF-8 of a `\uXXXX` escape (the `\u` already read), joining surrogate pairs.
    private mutating func unicodeEscape() throws(JSONSyntaxError) -> [UInt8] {
        let high = try hexQuad()
        var scalar: Unicode.Scalar?
        if (0xD800..<0xDC00).contains(high) {
            if index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                index += 2
                let low = try hexQuad()
                if (0xDC00..<0xE000).contains(low) {
                    scalar = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                }
            }
        } else {
            scalar = Unicode.Scalar(high)
        }
        guard let scalar else { throw failure("a \\u escape names a lone surrogate") }
        return Array(String(Character(scalar)).utf8)
    }

    private mutating func hexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard index + 4 <= bytes.count,
            let value = UInt32(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
        else {
            throw failure("expected four hexadecimal digits after \\u")
        }
        index += 4
        return value
    }

    private mutating func number() throws(JSONSyntaxError) -> Double {
        let start = index
        _ = consume(UInt8(ascii: "-"))
        if consume(UInt8(ascii: "0")) {
            // A leading zero stands alone.
        } else if digits() == 0 {
            throw failure("expected a digit")
        }
        if consume(UInt8(ascii: ".")), digits() == 0 {
            throw failure("expected a digit after the decimal point")
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            _ = consume(UInt8(ascii: "+")) || consume(UInt8(ascii: "-"))
            if digits() == 0 { throw failure("expected a digit in the exponent") }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let number = Double(text), number.isFinite else {
            throw JSONSyntaxError(offset: start, reason: "the number \(text.prefix(40)) is too large to represent")
        }
        return number
    }

    private mutating func digits() -> Int {
        let start = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        return index - start
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(JSONSyntaxError) -> JSONValue {
        let utf8 = Array(word.utf8)
        guard bytes.count - index >= utf8.count, Array(bytes[index..<(index + utf8.count)]) == utf8 else {
            throw failure("expected a value (object, array, string, number, true, false or null)")
        }
        index += utf8.count
        return value
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw failure("arrays and objects are nested more than \(Self.maximumDepth) deep")
        }
    }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        return true
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func failure(_ reason: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: index, reason: reason)
    }
}
