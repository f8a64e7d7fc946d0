public import Foundation

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
public enum MeditationMarkdown {
    /// How long every imported meditation lasts: ten minutes.
    public static let durationSeconds: Double = 600
    /// How far an interjection window reaches either side of its marker.
    public static let windowHalfWidthSeconds: Double = 10

    /// The category a file describes, with its scripts.
    public struct Category: Sendable, Equatable {
        /// The category's id, such as `reactivity`.
        public let id: String
        /// Its name as written, such as `Reactivity`.
        public let name: String
        /// Its meditations, in order.
        public let scripts: [Script]
    }

    /// Parses `text`.
    /// - Throws: ``ScriptError`` with one problem, the first thing that is not as the format says,
    ///   carrying its 1-based ``ScriptProblem/line`` (none for an empty file): code
    ///   ``ScriptError/Code/malformedMarkdown``, or ``ScriptError/Code/brokenRule`` when a
    ///   meditation is well-formed but its script breaks a rule in ``ScriptRules``.
    public static func parse(_ text: String) throws(ScriptError) -> Category {
        var parser = Parser(lines: text.split(separator: "\n", omittingEmptySubsequences: false).map {
            String($0.hasSuffix("\r") ? $0.dropLast() : $0)
        })
        return try parser.category()
    }

    /// The id a category or script name turns into: lowercase letters and digits, other runs as `-`.
    public static func identifier(_ name: String) -> String {
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
    public static func json(_ script: Script) -> Data {
        CanonicalJSON.encode(script)
    }

    private struct Parser {
        let lines: [String]
        var index = 0

        init(lines: [String]) {
            self.lines = lines
        }

        mutating func category() throws(ScriptError) -> Category {
            skipBlank()
            guard index < lines.count else { throw ScriptError(.malformedMarkdown, ScriptProblem(location: "", rule: "the file is empty; expected '# Category name' first")) }
            guard lines[index].hasPrefix("# "), case let name = lines[index].dropFirst(2).trimmingCharacters(in: .whitespaces), !name.isEmpty else {
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
            guard !scripts.isEmpty else { throw problem("expected at least one meditation, '## 1. Title'", line: lines.count) }
            return Category(id: id, name: name, scripts: scripts)
        }

        private mutating func meditation(category: String, number: Int) throws(ScriptError) -> Script {
            let heading = lines[index]
            let prefix = "## \(number). "
            guard heading.hasPrefix(prefix), case let title = heading.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces), !title.isEmpty else {
                throw problem(heading.hasPrefix("## ")
                    ? "expected meditation number \(number): '\(prefix)Title'"
                    : "expected the next meditation, '\(prefix)Title'")
            }
            let headingLine = index + 1
            index += 1
            skipBlank()
            guard index < lines.count, case let line = lines[index].trimmingCharacters(in: .whitespaces),
                  line.count > 2, line.hasPrefix("*"), line.hasSuffix("*"), !line.hasPrefix("**") else {
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
                guard let seconds = Self.marker(lines[index]) else {
                    throw problem("expected a time marker such as '[2:00]' alone on a line")
                }
                guard seconds > lastSeconds else { throw problem("time markers must increase; this one is not after the one before") }
                guard seconds < durationSeconds else { throw problem("the marker is at or past the end of the meditation (\(Int(durationSeconds)) s)") }
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
                    interjections.append(Script.Interjection(
                        windowStartSeconds: max(0, seconds - windowHalfWidthSeconds),
                        windowEndSeconds: min(durationSeconds, seconds + windowHalfWidthSeconds),
                        textOptions: options))
                } else {
                    var paragraphs: [String] = []
                    var paragraph: [String] = []
                    while index < lines.count, Self.marker(lines[index]) == nil, !lines[index].hasPrefix("## ") {
                        let line = lines[index].trimmingCharacters(in: .whitespaces)
                        if line.hasPrefix("- ") { throw problem("a list item inside prose; put interjection options under their own marker") }
                        if line.hasPrefix("#") { throw problem("a heading inside a section; meditations start with '## N. Title'") }
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
                        throw problem("the marker has nothing under it; expected prose or a list of options", line: markerLine)
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
                id: "\(category)-\(number < 10 ? "0" : "")\(number)", category: category, title: title, subtitle: subtitle,
                orderIndex: number, durationSeconds: durationSeconds, segments: segments, interjections: interjections)
            do {
                _ = try Script(json: json(script))
            } catch {
                throw ScriptError(.brokenRule, ScriptProblem(
                    line: headingLine, rule: "meditation \(number) breaks a script rule: \(error.problems[0])"))
            }
            return script
        }

        /// The seconds of a marker line `[m:ss]`, or `nil` if the line is not one.
        static func marker(_ line: String) -> Double? {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("["), trimmed.hasSuffix("]") else { return nil }
            let parts = trimmed.dropFirst().dropLast().split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1].count == 2, let minutes = Int(parts[0]), let seconds = Int(parts[1]),
                  minutes >= 0, (0..<60).contains(seconds) else { return nil }
            // In Double, so that a huge minute count is reported as past the end, not an overflow.
            return Double(minutes) * 60 + Double(seconds)
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
