internal import Foundation

/// A parsed JSON document, kept loose so that a validator can report every problem in it
/// rather than the first one a typed decoder trips over.
enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses `data` with Foundation's `JSONSerialization`, or throws a ``ScriptError`` whose one
    /// problem gives the line and column of the first syntax error.
    static func parse(_ data: Data) throws(ScriptError) -> JSONValue {
        do {
            return JSONValue(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
        } catch {
            throw ScriptError(problems: [syntaxProblem(error, in: data)])
        }
    }

    /// Converts what `JSONSerialization` returns. It gives `true` and `false` as boolean
    /// `NSNumber`s (Objective-C type `c`), which must not be read as the numbers 1 and 0.
    private init(_ value: Any) {
        switch value {
        case let string as String:
            self = .string(string)
        case let number as NSNumber:
            self = String(cString: number.objCType) == "c" ? .bool(number.boolValue) : .number(number.doubleValue)
        case let array as [Any]:
            self = .array(array.map(JSONValue.init))
        case let object as [String: Any]:
            self = .object(object.mapValues(JSONValue.init))
        default:
            self = .null
        }
    }

    /// Where and why `data` is not JSON, as a problem located by line and column.
    ///
    /// `JSONSerialization` gives a byte offset in its message ("around character 25"), which is
    /// turned into a 1-based line and column here.
    private static func syntaxProblem(_ error: any Error, in data: Data) -> ScriptProblem {
        if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
            return ScriptProblem(location: "line 1, column 1", rule: "the file is empty; expected a JSON object")
        }
        let message = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String ?? ""
        var offset: Int?
        if let range = message.range(of: #"around (line \d+, column \d+|character \d+)"#, options: .regularExpression) {
            let digits = message[range].split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            if digits.count == 1 { offset = digits[0] }
            if digits.count == 2 {
                return ScriptProblem(location: "line \(digits[0]), column \(digits[1])", rule: cleaned(message))
            }
        }
        // Numbers that overflow a Double are reported without a position: find the number itself.
        if offset == nil, let range = message.range(of: #"^Number \S+ is not representable"#, options: .regularExpression) {
            let number = Data(message[range].split(separator: " ")[1].utf8)
            offset = data.firstRange(of: number)?.lowerBound
        }
        let reason = message.isEmpty ? "not valid JSON" : cleaned(message)
        let (line, column) = lineAndColumn(ofByte: min(offset ?? data.count, data.count), in: data)
        return ScriptProblem(location: "line \(line), column \(column)", rule: reason)
    }

    /// Foundation's message without its trailing position and full stop, lowercased to read as a rule.
    private static func cleaned(_ message: String) -> String {
        var text = message
        if let range = text.range(of: #"\s*around (line \d+, column \d+|character \d+)\.?"#, options: .regularExpression) {
            text.removeSubrange(range)
        }
        while text.hasSuffix(".") { text.removeLast() }
        guard let first = text.first else { return "not valid JSON" }
        return first.lowercased() + text.dropFirst()
    }

    /// The 1-based line and column (in characters) of byte `offset` of UTF-8 `data`.
    static func lineAndColumn(ofByte offset: Int, in data: Data) -> (line: Int, column: Int) {
        var line = 1
        var column = 1
        for byte in data.prefix(offset) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }

    /// The name of this kind of value, for messages: "a string", "an array".
    var kindName: String {
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
