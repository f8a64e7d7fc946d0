/// Text from outside (a script's title, a server's error message, a file name) made safe to print
/// on a terminal: control characters (C0, DEL and C1, which carry terminal escape sequences),
/// bidirectional controls and invisible characters (``Unicode/Scalar/isHiddenWhenPrinted``) are
/// shown as `\u{…}` escapes, and the text is cut to `limit` characters with an ellipsis.
///
/// Everything the tool prints that came from a file or a server goes through this or ``quoted(_:limit:)``,
/// so a hostile title cannot move the cursor, retitle the terminal or hide a line.
package func printable(_ text: some StringProtocol, limit: Int = 300) -> String {
    escapedForPrinting(text, limit: limit, keepsLineBreaks: false)
}

/// ``printable(_:limit:)`` for text shown where a line break is one (an HTML page's text, a
/// tooltip): each line break (`\n`, `\r\n`, `\r`, U+2028, U+2029…) is kept, as `\n`.
package func printableLines(_ text: some StringProtocol, limit: Int = 300) -> String {
    escapedForPrinting(text, limit: limit, keepsLineBreaks: true)
}

/// The work of ``printable(_:limit:)`` and ``printableLines(_:limit:)``.
private func escapedForPrinting(_ text: some StringProtocol, limit: Int, keepsLineBreaks: Bool) -> String {
    var shown = ""
    for character in text.prefix(limit) {
        if keepsLineBreaks && character.isNewline {
            shown += "\n"
            continue
        }
        for scalar in character.unicodeScalars {
            if scalar.isControlCharacter || scalar.isHiddenWhenPrinted {
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
    }
    return text.count > limit ? shown + "…" : shown
}

/// ``printable(_:limit:)`` for one line (a table's cell, a label): a line
/// break is a space and a paragraph break (a blank line) ` ¶ `, never a `\u{a}` escape;
/// text without line breaks is unchanged.
package func printableLine(_ text: some StringProtocol, limit: Int = 300) -> String {
    guard text.contains(where: \.isNewline) else { return printable(text, limit: limit) }
    var paragraphs: [[String]] = [[]]
    for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
        let words = line.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if !words.isEmpty {
            paragraphs[paragraphs.count - 1].append(words)
        } else if !paragraphs[paragraphs.count - 1].isEmpty {
            paragraphs.append([])
        }
    }
    let lines = paragraphs.filter { !$0.isEmpty }.map { $0.joined(separator: " ") }
    return printable(lines.joined(separator: " ¶ "), limit: limit)
}

/// A string quoted for a message: quotes and control characters escaped, long strings cut to
/// 60 characters.
package func quoted(_ text: String, limit: Int = 60) -> String {
    var shown = ""
    for character in text.prefix(limit) {
        for scalar in character.unicodeScalars {
            switch scalar {
            case "\"": shown += "\\\""
            case "\\": shown += "\\\\"
            case "\n": shown += "\\n"
            case "\t": shown += "\\t"
            case _ where scalar.isControlCharacter || scalar.isHiddenWhenPrinted:
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
    }
    return "\"" + shown + (text.count > limit ? "…\"" : "\"")
}

extension Unicode.Scalar {
    /// C0 controls, DEL and the C1 controls (U+0080–U+009F, among them the one-character CSI).
    package var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value)
    }

    /// Whether the scalar, printed as it is, would reorder or hide the text around it, or is no
    /// character at all: a bidirectional control (U+061C, U+200E–200F, U+202A–202E,
    /// U+2066–2069: `U+202E` makes `evil\u{202e}txt.wav` read `evilvaw.txt`), an invisible one
    /// that joins nothing (U+200B zero-width space, U+2060 word joiner, U+FEFF), or a
    /// noncharacter (U+FDD0–FDEF and the last two of every plane, which XML parsers refuse).
    /// The joiners U+200C and U+200D stay: Persian and emoji sequences need them.
    package var isHiddenWhenPrinted: Bool {
        switch value {
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x200B, 0x2060, 0xFEFF: true
        case 0xFDD0...0xFDEF: true
        default: value & 0xFFFE == 0xFFFE
        }
    }
}
