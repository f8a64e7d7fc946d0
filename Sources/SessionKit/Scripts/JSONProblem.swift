import Foundation

/// Plain words for JSON decoding errors, which Foundation words for programmers, not for files.
enum JSONProblem {
    /// A JSON decoding error as a phrase: where in the file and what is wrong.
    static func describe(_ error: any Error) -> String {
        func at(_ path: [any CodingKey]) -> String {
            let text = path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return text.isEmpty ? "" : text.dropFirst(text.hasPrefix(".") ? 1 : 0) + ": "
        }
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            return "\(at(context.codingPath))\(key.stringValue) is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            let cause = (context.underlyingError as NSError?)?.localizedDescription ?? context.debugDescription
            return "\(at(context.codingPath))\(cause)"
        default:
            return "\(error)"
        }
    }
}
