package import Foundation

/// Guided meditations written in Markdown, one category per file, turned into scripts.
///
/// The format (docs/meditations.md has an example):
///
///     # Reactivity                        the category's name, once, first
///     Duration: 10:00                     header lines for every meditation (optional):
///     Voice: espeak:en                    length, voice, and a `sound` block in a fenced
///     Sound:                              JSON code block
///     ```json
///     {"ambience": "rain"}
///     ```
///
///     ## 1. The Space Between             a meditation: its number (1, 2, … in order) and title
///     *Finding the pause…*                its subtitle, in single asterisks
///     Duration: 5:00                      header lines for this meditation alone (optional)
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
/// are joined by a blank line.
///
/// A meditation lasts its `Duration:` (its own header's, else the category's). Without one it ends
/// ``windowHalfWidthSeconds`` after its last marker, or when the speech there ends if that is later
/// (the planner lets speech run past a script's end): no silence is appended that no one asked
/// for. When a duration leaves more than ``appendedSilenceWarningSeconds`` after the last speech,
/// estimated at ``estimatedWordsPerMinute``, the parse warns.
///
/// A line that starts like a marker, that is whose first character after leading blanks is `[` and
/// whose next character after any blanks is a digit (or `-` and a digit), is always read as one: if
/// it is not exactly `[m:ss]` (seconds 00–59), with nothing after it, it is an error naming its
/// line, never spoken text. Prose may hold brackets anywhere else: `Breathe [slowly]`, `[pause]`.
package enum MeditationMarkdown {
    /// How far an interjection window reaches either side of its marker, and how long a
    /// meditation without a `Duration:` lasts past its last marker at least.
    package static let windowHalfWidthSeconds: Double = 10
    /// The speaking rate the last speech's length is estimated at: a typical cloud voice's, slower
    /// than the embedded voice's 175, so that the estimate errs towards less silence.
    package static let estimatedWordsPerMinute: Double = 150
    /// The silence after the last speech beyond which a duration is probably a mistake.
    package static let appendedSilenceWarningSeconds: Double = 60

    /// The category a file describes, with its scripts.
    package struct Category: Sendable, Equatable {
        /// The category's id, such as `reactivity`.
        package let id: String
        /// Its name as written, such as `Reactivity`.
        package let name: String
        /// Its meditations, in order.
        package let scripts: [Script]
        /// What is probably a mistake but not an error, each at its line: a `Duration:` that
        /// leaves more than a minute of silence after the last speech.
        package var warnings: [ScriptProblem] = []
    }

    /// What a header (the category's, after `# Name`, or a meditation's, after its subtitle) sets.
    struct Header {
        var durationSeconds: Double?
        /// The line of the `Duration:` that set ``durationSeconds``.
        var durationLine: Int?
        var voice: String?
        var sound: SoundSettings?
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
        var warnings: [ScriptProblem] = []

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
            let header = try self.header(over: Header(), ofMeditation: false)
            while index < lines.count {
                scripts.append(try meditation(category: id, number: scripts.count + 1, header: header))
                skipBlank()
            }
            guard !scripts.isEmpty else {
                throw problem("expected at least one meditation, '## 1. Title'", line: lines.count)
            }
            return Category(id: id, name: name, scripts: scripts, warnings: warnings)
        }

        /// The header lines at the current line, if any, over `inherited`: `Duration: [h:]m:ss`,
        /// `Voice: NAME` and `Sound:` followed by a fenced JSON code block holding a script's
        /// `sound` object. Stops at a marker or a meditation's heading.
        private mutating func header(over inherited: Header, ofMeditation: Bool) throws(ScriptError) -> Header {
            var header = inherited
            var seen: Set<String> = []
            while index < lines.count, !lines[index].hasPrefix("## "), !Self.looksLikeMarker(lines[index]) {
                let line = lines[index].trimmingCharacters(in: .whitespaces)
                guard let colon = line.firstIndex(of: ":"),
                    case let key = String(line[..<colon]), Self.headerKeys.contains(key)
                else {
                    throw problem(
                        ofMeditation
                            ? "expected a time marker such as '[2:00]' alone on a line, or a header line (Duration:, Voice:, Sound:)"
                            : "expected the first meditation, '## 1. Title', or a header line (Duration:, Voice:, Sound:)"
                    )
                }
                guard seen.insert(key).inserted else { throw problem("\(key): is given twice in this header") }
                let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                let lineNumber = index + 1
                index += 1
                switch key {
                case "Duration":
                    guard let seconds = Self.clockSeconds(value), seconds > 0 else {
                        throw problem(
                            "Duration: \(Self.quoted(value)) is not a length; write m:ss or h:mm:ss, such as 'Duration: 10:00'",
                            line: lineNumber
                        )
                    }
                    guard seconds <= ScriptRules.maximumDurationSeconds else {
                        throw problem(
                            "Duration: \(value) is longer than the longest session, 24:00:00",
                            line: lineNumber
                        )
                    }
                    header.durationSeconds = seconds
                    header.durationLine = lineNumber
                case "Voice":
                    guard !value.isEmpty, !value.contains(where: \.isWhitespace) else {
                        throw problem("Voice: expected one voice name, such as 'Voice: espeak:en'", line: lineNumber)
                    }
                    header.voice = value
                default:
                    guard value.isEmpty else {
                        throw problem(
                            "Sound: expected nothing after it, and its JSON block on the next lines",
                            line: lineNumber
                        )
                    }
                    header.sound = try soundBlock(after: lineNumber)
                }
                skipBlank()
            }
            return header
        }

        static let headerKeys: Set<String> = ["Duration", "Voice", "Sound"]

        /// The fenced code block (```` ``` ```` or ```` ```json ````) at the current line: a script's `sound`
        /// object, validated by the script rules, each problem named at the block's line.
        private mutating func soundBlock(after soundLine: Int) throws(ScriptError) -> SoundSettings {
            skipBlank()
            guard index < lines.count, case let fence = lines[index].trimmingCharacters(in: .whitespaces),
                fence == "```" || fence == "```json"
            else {
                throw problem("Sound: expected a fenced JSON block, '```json', on the next line", line: soundLine)
            }
            let blockLine = index + 1
            index += 1
            var json: [String] = []
            while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
                json.append(lines[index])
                index += 1
            }
            guard index < lines.count else {
                throw problem("Sound: the JSON block has no closing '```'", line: blockLine)
            }
            index += 1
            let value: JSONValue
            do {
                value = try JSONValue.parse(Data(json.joined(separator: "\n").utf8))
            } catch {
                throw problem("Sound: the block is not JSON: \(error.problems[0].rule)", line: blockLine)
            }
            var validator = ScriptValidator()
            validator.strict = true
            guard case .some(.some(let sound)) = validator.soundSettings(["sound": value]),
                validator.problems.isEmpty
            else {
                let first = validator.problems.first.map(\.description) ?? "sound: expected an object"
                throw problem("Sound: \(first)", line: blockLine)
            }
            return sound
        }

        /// The seconds of `m:ss` or `h:mm:ss` (minutes and seconds two digits after the first
        /// part, each below 60), or `nil`.
        static func clockSeconds(_ text: String) -> Double? {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard (2...3).contains(parts.count),
                parts.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.unicodeScalars.allSatisfy(isDigit) }),
                parts.dropFirst().allSatisfy({ $0.count == 2 })
            else { return nil }
            let numbers = parts.compactMap { Double($0) }
            guard numbers.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
            return numbers.reduce(0) { $0 * 60 + $1 }
        }

        private mutating func meditation(
            category: String,
            number: Int,
            header categoryHeader: Header
        ) throws(ScriptError) -> Script {
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
            skipBlank()
            let header = try self.header(over: categoryHeader, ofMeditation: true)

            var prose: [(seconds: Double, text: String)] = []
            var lists: [(seconds: Double, options: [String])] = []
            var lastSeconds = -1.0
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
                if let duration = header.durationSeconds, seconds >= duration {
                    throw problem(
                        "the marker is at or past the end of the meditation (Duration: \(Self.clock(duration)), line \(header.durationLine ?? 0))"
                    )
                }
                guard seconds < ScriptRules.maximumDurationSeconds else {
                    throw problem("the marker is past the longest session, 24:00:00")
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
                    lists.append((seconds, options))
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
            let lastSpeech = Self.lastSpeech(prose: prose, lists: lists)
            let durationSeconds: Double
            if let duration = header.durationSeconds {
                durationSeconds = duration
                let silence = duration - lastSpeech.estimatedEnd
                if silence > appendedSilenceWarningSeconds {
                    warnings.append(
                        ScriptProblem(
                            line: header.durationLine ?? headingLine,
                            rule:
                                "meditation \(number) (\"\(title)\") lasts \(Self.clock(duration)), but its last speech ([\(Self.clock(lastSpeech.marker))]) ends at about \(Self.clock(lastSpeech.estimatedEnd.rounded(.up))) at \(Int(estimatedWordsPerMinute)) words per minute: \(Self.clock(silence.rounded(.down))) of silence at the end; give it its own Duration: line, or none to end with its speech"
                        )
                    )
                }
            } else {
                durationSeconds = lastSpeech.marker + windowHalfWidthSeconds
            }
            let interjections = lists.map { seconds, options in
                Script.Interjection(
                    windowStartSeconds: max(0, seconds - windowHalfWidthSeconds),
                    windowEndSeconds: min(durationSeconds, seconds + windowHalfWidthSeconds),
                    textOptions: options
                )
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
                kind: .guided(GuidedSession(segments: segments, interjections: interjections)),
                sound: header.sound,
                voice: header.voice
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

        /// The last marker and when the speech there ends, estimated at ``estimatedWordsPerMinute``:
        /// a prose section's words, or a list's longest option said at the end of its window.
        static func lastSpeech(
            prose: [(seconds: Double, text: String)],
            lists: [(seconds: Double, options: [String])]
        ) -> (marker: Double, estimatedEnd: Double) {
            func speaking(_ text: String) -> Double {
                Double(text.split(whereSeparator: \.isWhitespace).count) * 60 / estimatedWordsPerMinute
            }
            let sections =
                prose.map { ($0.seconds, $0.seconds + speaking($0.text)) }
                + lists.map { list in
                    (list.seconds, list.seconds + windowHalfWidthSeconds + (list.options.map(speaking).max() ?? 0))
                }
            return sections.max { $0.0 < $1.0 }.map { (marker: $0.0, estimatedEnd: $0.1) } ?? (0, 0)
        }

        /// `seconds` as `m:ss`, or `h:mm:ss` from an hour.
        static func clock(_ seconds: Double) -> String {
            FrameClock.clock(seconds: Int64(seconds.rounded(.down)))
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
