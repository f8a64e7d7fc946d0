/// Text from outside (a script's title, a server's error message, a file name) made safe to print
/// on a terminal: control characters (C0, DEL and C1, which carry terminal escape sequences) are
/// shown as `\u{…}` escapes, and the text is cut to `limit` characters with an ellipsis.
///
/// Everything the tool prints that came from a file or a server goes through this or ``quoted(_:limit:)``,
/// so a hostile title cannot move the cursor, retitle the terminal or hide a line.
package func printable(_ text: some StringProtocol, limit: Int = 300) -> String {
    var shown = ""
    for character in text.prefix(limit) {
        for scalar in character.unicodeScalars {
            if scalar.isControlCharacter {
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
    }
    return text.count > limit ? shown + "…" : shown
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
            case _ where scalar.isControlCharacter:
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
    }
    return "\"" + shown + (text.count > limit ? "…\"" : "\"")
}

extension Unicode.Scalar {
    /// C0 controls, DEL and the C1 controls (U+0080–U+009F, among them the one-character CSI).
    var isControlCharacter: Bool {
        value < 0x20 || (0x7F...0x9F).contains(value)
    }
}
