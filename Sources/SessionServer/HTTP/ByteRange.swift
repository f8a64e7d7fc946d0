/// What a `Range` request header asks of a representation `size` bytes long, read as RFC 9110
/// (§14.1.2) says: one `bytes=first-last`, `bytes=first-` or `bytes=-suffix` range.
///
/// Written here rather than taken from Hummingbird's `FileMiddleware`, which reads `bytes=-500`
/// as the first 501 bytes (it is the last 500) and answers a range past the end with an inverted
/// `Content-Range` instead of 416: Apple's players and ffmpeg ask for both.
package enum ByteRange: Equatable, Sendable {
    /// The whole representation: no range, or a header this server may ignore (another unit,
    /// a syntax error, several ranges), which RFC 9110 answers with 200 and every byte.
    case whole
    /// These bytes, within the representation: 206.
    case part(ClosedRange<Int64>)
    /// No byte of the representation is in the range: 416 with `Content-Range: bytes */size`.
    case unsatisfiable

    /// Reads `header` (the `Range` field's value, `nil` when absent) against `size` bytes.
    package init(header: String?, size: Int64) {
        guard let header else {
            self = .whole
            return
        }
        let trimmed = header.trimmingBlanks
        guard trimmed.lowercased().hasPrefix("bytes=") else {
            self = .whole
            return
        }
        let spec = trimmed.dropFirst("bytes=".count).trimmingBlanks
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else {
            self = .whole
            return
        }
        let first = spec[..<dash].trimmingBlanks
        let last = spec[spec.index(after: dash)...].trimmingBlanks
        switch (Self.number(first), Self.number(last)) {
        case (.some(let first), .some(let last)) where first <= last:
            self = first < size ? .part(first...min(last, size - 1)) : .unsatisfiable
        case (.some(let first), nil) where last.isEmpty:
            self = first < size ? .part(first...(size - 1)) : .unsatisfiable
        case (nil, .some(let suffix)) where first.isEmpty:
            self = suffix > 0 && size > 0 ? .part(max(0, size - suffix)...(size - 1)) : .unsatisfiable
        default:
            self = .whole
        }
    }

    /// A run of decimal digits as a number; a number too large for 63 bits is as large as can
    /// be (it reaches past any file); anything else is `nil`.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return Int64(text) ?? Int64.max
    }
}

extension StringProtocol {
    /// Without the spaces and tabs (HTTP's optional whitespace) at either end.
    fileprivate var trimmingBlanks: Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = Substring(self)
        guard let start = text.firstIndex(where: { !blank($0) }), let end = text.lastIndex(where: { !blank($0) })
        else { return "" }
        return text[start...end]
    }
}
