package import Foundation

/// Guided meditations written in Markdown, one category per file, turned into scripts.
///
/// The format (docs/meditations.md has an example):
///
///     # Reactivity                        the category's name, once, first
///
///     ## 1. The Space Between             a meditation: its number (1, 2, … in order) and title
///     *Finding the pause…*                its subtitle, in single asterisks
///
///     [0:00]                              a time marker, m:ss, alone on a line
///     Prose paragraphs…                   spoken text: a segment starting at the marker
///
///     [6:00]
///     - Short option.                     a list: an interjection window of marker ± 10 s
///     - Another option.
///
/// Prose sections become segments in order: the first is `opening`, the last `closing`, those
/// between `teachings` (ids and phases alike; `teachings-2`, … if there are several). Paragraphs
/// are joined by a blank line. Every meditation lasts ``durationSeconds``.
///
/// A line that starts like a marker, that is whose first character after leading blanks is `[` and
/// whose next character after any blanks is a digit (or `-` and a digit), is always read as one: if
/// it is not exactly `[m:ss]` (seconds 00–59), with nothing after it, it is an error naming its
/// line, never spoken text. Prose may hold brackets anywhere else: `Breathe [slowly]`, `[pause]`.
package enum MeditationMarkdown {
    /// How long every imported meditation lasts: ten minutes.
    package static let durationSeconds: Double = 600
    /// How far an interjection window reaches either side of its marker.
    package static let windowHalfWidthSeconds: Double = 10

    /// The category a file describes, with its scripts.
    package struct Category: Sendable, Equatable {
        /// The category's id, such as `reactivity`.
        package let id: String
        /// Its name as written, such as `Reactivity`.
        package let name: String
        /// Its meditations, in order.
        package let scripts: [Script]
    }

    /// Parses `text`.
    /// - Throws: ``ScriptError`` with one problem, the first thing that is not as the format says,
    ///   carrying its 1-based ``ScriptProblem/line`` (none for an empty file): code
    ///   ``ScriptError/Code/malformedMarkdown``, or ``ScriptError/Code/brokenRule`` when a
    ///   meditation is well-formed but its script breaks a rule in ``ScriptRules``.
    package static func parse(_ text: String) throws(ScriptError) -> Category {
        var parser = Parser(lines: lines(of: text))
        return try parser.category()
    }

    /// The lines of `text` as the parser sees them: split at LF, a CR before it removed.
    static func lines(of text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.hasSuffix("\r") ? $0.dropLast() : $0)
        }
    }

    /// The id a category or script name turns into: lowercase letters and digits, other runs as `-`.
    package static func identifier(_ name: String) -> String {
        var result = ""
        for scalar in name.lowercased().unicodeScalars {
            if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else if !result.isEmpty && !result.hasSuffix("-") {
                result += "-"
            }
        }
        while result.hasSuffix("-") { result.removeLast() }
        return result
    }

    /// A script's JSON as `import` writes it: pretty-printed, keys sorted, a final newline.
    package static func json(_ script: Script) -> Data {
        CanonicalJSON.encode(script)
    }

    struct Parser {
        let lines: [String]
        var index = 0

        init(lines: [String]) {
            self.lines = lines
        }

        mutating func category() throws(ScriptError) -> Category {
            skipBlank()
            guard index < lines.count else {
                throw ScriptError(
                    .malformedMarkdown,
                    ScriptProblem(location: "", rule: "the file is empty; expected '# Category name' first")
                )
            }
            guard lines[index].hasPrefix("# "),
                case let name = lines[index].dropFirst(2).trimmingCharacters(in: .whitespaces), !name.isEmpty
            else {
                throw problem("expected '# Category name' as the first line")
            }
            let id = identifier(name)
            guard !id.isEmpty else { throw problem("the category name needs a letter or digit") }
            index += 1
            var scripts: [Script] = []
            skipBlank()
            while index < lines.count {
                scripts.append(try meditation(category: id, number: scripts.count + 1))
                skipBlank()
            }
            guard !scripts.isEmpty else {
                throw problem("expected at least one meditation, '## 1. Title'", line: lines.count)
            }
            return Category(id: id, name: name, scripts: scripts)
        }

        private mutating func meditation(category: String, number: Int) throws(ScriptError) -> Script {
            let heading = lines[index]
            let prefix = "## \(number). "
            guard heading.hasPrefix(prefix),
                case let title = heading.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces), !title.isEmpty
            else {
                throw problem(
                    heading.hasPrefix("## ")
                        ? "expected meditation number \(number): '\(prefix)Title'"
                        : "expected the next meditation, '\(prefix)Title'"
                )
            }
            let headingLine = index + 1
            index += 1
            skipBlank()
            guard index < lines.count, case let line = lines[index].trimmingCharacters(in: .whitespaces),
                line.count > 2, line.hasPrefix("*"), line.hasSuffix("*"), !line.hasPrefix("**")
            else {
                throw problem("expected the subtitle in single asterisks, '*Subtitle*', after the title")
            }
            let subtitle = String(line.dropFirst().dropLast())
            index += 1

            var prose: [(seconds: Double, text: String)] = []
            var interjections: [Script.Interjection] = []
            var lastSeconds = -1.0
            skipBlank()
            while index < lines.count, !lines[index].hasPrefix("## ") {
                let markerLine = index + 1
                guard Self.looksLikeMarker(lines[index]) else {
                    throw problem("expected a time marker such as '[2:00]' alone on a line")
                }
                let seconds: Double
                switch Self.marker(lines[index]) {
                case .seconds(let value): seconds = value
                case .defect(let reason):
                    throw problem(
                        "\(Self.quoted(lines[index])) is not a time marker: \(reason); a marker is m:ss alone on its line, such as '[2:00]'"
                    )
                }
                guard seconds > lastSeconds else {
                    throw problem("time markers must increase; this one is not after the one before")
                }
                guard seconds < durationSeconds else {
                    throw problem("the marker is at or past the end of the meditation (\(Int(durationSeconds)) s)")
                }
                lastSeconds = seconds
                index += 1
                skipBlank()
                if index < lines.count, lines[index].hasPrefix("- ") {
                    var options: [String] = []
                    while index < lines.count, lines[index].hasPrefix("- ") {
                        let option = lines[index].dropFirst(2).trimmingCharacters(in: .whitespaces)
                        guard !option.isEmpty else { throw problem("an interjection option is empty") }
                        options.append(option)
                        index += 1
                    }
                    interjections.append(
                        Script.Interjection(
                            windowStartSeconds: max(0, seconds - windowHalfWidthSeconds),
                            windowEndSeconds: min(durationSeconds, seconds + windowHalfWidthSeconds),
                            textOptions: options
                        )
                    )
                } else {
                    var paragraphs: [String] = []
                    var paragraph: [String] = []
                    while index < lines.count, !Self.looksLikeMarker(lines[index]), !lines[index].hasPrefix("## ") {
                        let line = lines[index].trimmingCharacters(in: .whitespaces)
                        if line.hasPrefix("- ") {
                            throw problem("a list item inside prose; put interjection options under their own marker")
                        }
                        if line.hasPrefix("#") {
                            throw problem("a heading inside a section; meditations start with '## N. Title'")
                        }
                        if line.isEmpty {
                            if !paragraph.isEmpty { paragraphs.append(paragraph.joined(separator: " ")) }
                            paragraph = []
                        } else {
                            paragraph.append(line)
                        }
                        index += 1
                    }
                    if !paragraph.isEmpty { paragraphs.append(paragraph.joined(separator: " ")) }
                    guard !paragraphs.isEmpty else {
                        throw problem(
                            "the marker has nothing under it; expected prose or a list of options",
                            line: markerLine
                        )
                    }
                    prose.append((seconds, paragraphs.joined(separator: "\n\n")))
                }
                skipBlank()
            }
            guard !prose.isEmpty else {
                throw problem("the meditation has no spoken section; expected '[0:00]' and prose", line: headingLine)
            }
            let segments = prose.enumerated().map { offset, section in
                let phase = offset == 0 ? "opening" : offset == prose.count - 1 ? "closing" : "teachings"
                // Teachings sections count from 1, the opening being section 0.
                let id = phase == "teachings" && offset > 1 ? "teachings-\(offset)" : phase
                return Script.Segment(id: id, startSeconds: section.seconds, text: section.text, phase: phase)
            }
            let script = Script(
                id: "\(category)-\(number < 10 ? "0" : "")\(number)",
                category: category,
                title: title,
                subtitle: subtitle,
                orderIndex: number,
                durationSeconds: durationSeconds,
                kind: .guided(GuidedSession(segments: segments, interjections: interjections))
            )
            do {
                _ = try Script(json: json(script))
            } catch {
                throw ScriptError(
                    .brokenRule,
                    ScriptProblem(
                        line: headingLine,
                        rule: "meditation \(number) breaks a script rule: \(error.problems[0])"
                    )
                )
            }
            return script
        }

        /// Whether `line` starts like a time marker: after leading blanks, `[`, any blanks, then a
        /// digit or `-` and a digit. Such a line is a marker or an error, never prose.
        static func looksLikeMarker(_ line: String) -> Bool {
            let blank = CharacterSet.whitespaces
            var rest = line.unicodeScalars.drop { blank.contains($0) }
            guard rest.first == "[" else { return false }
            rest = rest.dropFirst().drop { blank.contains($0) }
            if rest.first == "-" { rest = rest.dropFirst() }
            return rest.first.map(isDigit) ?? false
        }

        /// The seconds of a marker line `[m:ss]` (blanks allowed around it, none inside), or why the
        /// line is not one, as a phrase that follows "is not a time marker:".
        static func marker(_ line: String) -> MarkerReading {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("["), let close = trimmed.firstIndex(of: "]") else {
                return .defect("it has no closing ']'")
            }
            let inside = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            guard !inside.unicodeScalars.contains(where: { $0.properties.isWhitespace }) else {
                return .defect("it has a space inside the brackets")
            }
            guard inside.contains(":") else {
                return .defect("its minutes and seconds are not separated by ':'")
            }
            let parts = inside.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else { return .defect("it has more than one ':'") }
            let (minutes, seconds) = (parts[0], parts[1])
            guard !minutes.isEmpty, minutes.unicodeScalars.allSatisfy(isDigit) else {
                return .defect("its minutes, '\(minutes)', are not digits")
            }
            guard seconds.count == 2, seconds.unicodeScalars.allSatisfy(isDigit), let secondsValue = Int(seconds) else {
                return .defect("its seconds, '\(seconds)', are not two digits")
            }
            guard secondsValue < 60 else {
                return .defect("its seconds, \(seconds), are more than 59")
            }
            guard trimmed.index(after: close) == trimmed.endIndex else {
                return .defect("text follows the ']' on the same line")
            }
            // In Double, so that a huge minute count is reported as past the end, not an overflow.
            return .seconds((Double(minutes) ?? .infinity) * 60 + Double(secondsValue))
        }

        /// What a line that starts like a marker holds.
        enum MarkerReading {
            /// A valid marker at this many seconds (possibly past the end of the meditation).
            case seconds(Double)
            /// Not a valid marker, with why, as a phrase.
            case defect(String)
        }

        private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
            ("0"..."9").contains(scalar)
        }

        /// `line` without its surrounding blanks, in double quotes, cut to 40 characters.
        static func quoted(_ line: String) -> String {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            return "\"\(trimmed.count > 40 ? String(trimmed.prefix(39)) + "…" : trimmed)\""
        }

        private mutating func skipBlank() {
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces).isEmpty { index += 1 }
        }

        /// A malformed-Markdown error at `line`, by default the current line, or the last line
        /// when the file has ended.
        private func problem(_ message: String, line: Int? = nil) -> ScriptError {
            ScriptError(.malformedMarkdown, ScriptProblem(line: line ?? min(index + 1, lines.count), rule: message))
        }
    }
}
