/// The limits a script must keep. docs/script.md lists them with their reasons.
package enum ScriptRules {
    /// Ids become file names: 1…128 of `[A-Za-z0-9._-]`, never `.` or `..`.
    package static let maximumIdLength = 128
    /// The longest session, in seconds (24 hours).
    package static let maximumDurationSeconds: Double = 86_400
    /// The TTS proxy's limit on one text, in UTF-16 code units (as the backend's validator counts).
    package static let maximumTextLength = 5_000
    /// The most segments, and separately the most interjections, in one script.
    package static let maximumCueCount = 10_000
    /// The most text options in one interjection.
    package static let maximumTextOptions = 1_000
    /// The largest script or `sounds.json` file read, in bytes, checked before parsing (which
    /// takes several times a file's size in memory): 3,000 texts of 5,000 characters fit; the
    /// 10-minute fixture is 2 KB.
    package static let maximumFileBytes = 16 << 20
    /// The longest title, subtitle, category or phase name, in UTF-16 code units (as texts are counted).
    package static let maximumLabelLength = 500
    /// How many problems an error lists before it summarizes the rest.
    package static let maximumReportedProblems = 100

    /// What is wrong with `name` as a sound a script names, or `nil`: it must be a name in the
    /// sound library, not empty, with no `/` and not `.` or `..` (a path is given on the command
    /// line, never in a script).
    package static func soundNameProblem(_ name: String) -> String? {
        if name.isEmpty { return "must not be empty" }
        if name.contains("/") || name == "." || name == ".." || name.contains("\0") {
            return
                "\(quoted(name)) is a path; a script names a sound by its name in the sound library, and only the command line gives a sound file's path"
        }
        return nil
    }

    /// Whether `id` may name a script or a file: 1…128 of `[A-Za-z0-9._-]`, not `.` or `..`.
    package static func isValidIdentifier(_ id: String) -> Bool {
        identifierProblem(id) == nil
    }

    /// What is wrong with `id` as a script id, or `nil` if nothing is.
    static func identifierProblem(_ id: String) -> String? {
        let length = id.unicodeScalars.count
        if length == 0 || length > maximumIdLength {
            return "must be 1 to \(maximumIdLength) characters long, found \(length)"
        }
        if id == "." || id == ".." {
            return "\(quoted(id)) is not allowed, since ids become file names"
        }
        let allowed = id.unicodeScalars.allSatisfy { scalar in
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9", ".", "_", "-": true
            default: false
            }
        }
        return allowed
            ? nil : "\(quoted(id)) may contain only letters, digits, '.', '_' and '-', since ids become file names"
    }
}

/// Walks a parsed JSON document, collecting every problem and building a ``Script`` when there are none.
struct ScriptValidator {
    private(set) var problems: [ScriptProblem] = []
    /// Keys the script's shape does not know, each with its path and the nearest known key:
    /// problems under ``strict``, else these warnings (a typo such as `"ambiance"` must not pass
    /// without a word).
    private(set) var warnings: [ScriptProblem] = []
    private var omittedProblems = 0
    /// Whether keys a session's kind does not know are problems (`--strict`) or warnings.
    var strict = false

    /// The script in `value`, or `nil` when a required part could not be read at all.
    /// Problems, including those found on the way, are in ``problems``.
    mutating func script(from value: JSONValue) -> Script? {
        defer { summarizeOmittedProblems() }
        // An array of objects is a stretching region file (the backend's `StretchRegion` list).
        if case .array(let regions) = value, case .object? = regions.first {
            return stretchRegions(regions)
        }
        guard case .object(let root) = value else {
            report("(top level)", "expected a JSON object, found \(value.kindName)")
            return nil
        }
        if let kind = root["kind"], kind != .string("guided") {
            return session(kind: kind, root)
        }
        unknownKeys(in: root, known: Self.guidedKeys, at: "", what: "a guided script")
        let id = string(root, "id", at: "")
        if let id, let problem = ScriptRules.identifierProblem(id) {
            report("id", problem)
        }
        let voice = root["voice"] == nil ? nil : label(root, "voice", at: "", required: true)
        let category = label(root, "category", at: "", required: true)
        let title = label(root, "title", at: "", required: true)
        let subtitle = label(root, "subtitle", at: "", required: false) ?? ""
        let orderIndex = wholeNumber(root, "orderIndex", at: "") ?? 0

        let duration = number(root, "durationSeconds", at: "")
        var validDuration: Double?
        if let duration {
            if duration <= 0 {
                report("durationSeconds", "\(formatted(duration)) must be greater than 0")
            } else if duration > ScriptRules.maximumDurationSeconds {
                report(
                    "durationSeconds",
                    "\(formatted(duration)) is longer than the limit of \(formatted(ScriptRules.maximumDurationSeconds)) (24 hours)"
                )
            } else {
                validDuration = duration
            }
        }

        let segments = segments(root, duration: validDuration)
        let interjections = interjections(root, duration: validDuration)
        let sound = soundSettings(root)

        guard let id, let category, let title, let duration, let segments, let interjections, let sound else {
            return nil
        }
        return Script(
            id: id,
            category: category,
            title: title,
            subtitle: subtitle,
            orderIndex: orderIndex,
            durationSeconds: duration,
            kind: .guided(GuidedSession(segments: segments, interjections: interjections)),
            sound: sound,
            voice: voice
        )
    }

    /// The keys a guided script has.
    static let guidedKeys = [
        "kind", "id", "category", "title", "subtitle", "orderIndex", "durationSeconds", "segments", "interjections",
        "sound", "voice",
    ]

    /// Reports each key of `fields` that is not `known`: a problem under ``strict``, else a
    /// warning; both name the key's path and the nearest known key.
    mutating func unknownKeys(in fields: [String: JSONValue], known: [String], at path: String, what: String) {
        for key in fields.keys.sorted() where !known.contains(key) {
            let rule = "is not a field of \(what)\(didYouMean(key, among: known))"
            if strict {
                report(join(path, key), rule)
            } else if warnings.count < ScriptRules.maximumReportedProblems {
                warnings.append(ScriptProblem(location: join(path, key), rule: rule + "; it is ignored"))
            }
        }
    }

    // MARK: Parts

    private mutating func segments(_ root: [String: JSONValue], duration: Double?) -> [Script.Segment]? {
        guard let items = array(root, "segments", at: "", required: true) else { return nil }
        if items.isEmpty {
            report("segments", "needs at least one segment")
        }
        if items.count > ScriptRules.maximumCueCount {
            report("segments", "\(items.count) segments are more than the limit of \(ScriptRules.maximumCueCount)")
            return nil
        }
        var firstIndexOfId: [String: Int] = [:]
        var result: [Script.Segment] = []
        for (index, item) in items.enumerated() {
            let path = "segments[\(index)]"
            guard case .object(let fields) = item else {
                report(path, "expected an object, found \(item.kindName)")
                continue
            }
            unknownKeys(in: fields, known: ["id", "startSeconds", "text", "phase"], at: path, what: "a segment")
            let id = string(fields, "id", at: path)
            if let id {
                if id.isEmpty || id.unicodeScalars.count > ScriptRules.maximumIdLength {
                    report(
                        "\(path).id",
                        "must be 1 to \(ScriptRules.maximumIdLength) characters long, found \(id.unicodeScalars.count)"
                    )
                } else if let first = firstIndexOfId[id] {
                    report("\(path).id", "\(quoted(id)) is already the id of segments[\(first)]")
                } else {
                    firstIndexOfId[id] = index
                }
            }
            let start = startSeconds(fields, "startSeconds", at: path, duration: duration)
            let text = text(fields, "text", at: path)
            let phase = label(fields, "phase", at: path, required: true)
            if let id, let start, let text, let phase {
                result.append(Script.Segment(id: id, startSeconds: start, text: text, phase: phase))
            }
        }
        return result.count == items.count ? result : nil
    }

    private mutating func interjections(_ root: [String: JSONValue], duration: Double?) -> [Script.Interjection]? {
        guard let items = array(root, "interjections", at: "", required: false) else {
            return root["interjections"] == nil ? [] : nil
        }
        if items.count > ScriptRules.maximumCueCount {
            report(
                "interjections",
                "\(items.count) interjections are more than the limit of \(ScriptRules.maximumCueCount)"
            )
            return nil
        }
        var result: [Script.Interjection] = []
        for (index, item) in items.enumerated() {
            let path = "interjections[\(index)]"
            guard case .object(let fields) = item else {
                report(path, "expected an object, found \(item.kindName)")
                continue
            }
            unknownKeys(
                in: fields,
                known: ["windowStartSeconds", "windowEndSeconds", "textOptions"],
                at: path,
                what: "an interjection"
            )
            let start = startSeconds(fields, "windowStartSeconds", at: path, duration: duration)
            let end = startSeconds(fields, "windowEndSeconds", at: path, duration: duration)
            if let start, let end, start > end {
                report(path, "windowStartSeconds \(formatted(start)) is after windowEndSeconds \(formatted(end))")
            }
            var options: [String]?
            if let values = array(fields, "textOptions", at: path, required: true) {
                if values.isEmpty {
                    report("\(path).textOptions", "needs at least one text")
                } else if values.count > ScriptRules.maximumTextOptions {
                    report(
                        "\(path).textOptions",
                        "\(values.count) options are more than the limit of \(ScriptRules.maximumTextOptions)"
                    )
                } else {
                    let texts = values.indices.compactMap { text(values[$0], at: "\(path).textOptions[\($0)]") }
                    if texts.count == values.count { options = texts }
                }
            }
            if let start, let end, start <= end, let options {
                result.append(
                    Script.Interjection(windowStartSeconds: start, windowEndSeconds: end, textOptions: options)
                )
            }
        }
        return result.count == items.count ? result : nil
    }

    /// The optional `sound` block: `nil` inside when absent, `nil` outside when it is broken.
    mutating func soundSettings(_ root: [String: JSONValue]) -> SoundSettings?? {
        guard let value = field(root, "sound", at: "", required: false) else { return .some(nil) }
        guard case .object(let fields) = value else {
            report("sound", "expected an object, found \(value.kindName)")
            return nil
        }
        let before = problems.count
        unknownKeys(
            in: fields,
            known: SoundSettings.Field.allCases.map(\.rawValue),
            at: "sound",
            what: "the sound block"
        )
        func name(_ field: SoundSettings.Field) -> String? {
            fields[field.rawValue] == nil ? nil : string(fields, field.rawValue, at: "sound")
        }
        func soundName(_ field: SoundSettings.Field) -> String? {
            fields[field.rawValue] == nil ? nil : self.soundName(fields, field.rawValue, at: "sound")
        }
        func amount(_ field: SoundSettings.Field) -> Double? {
            fields[field.rawValue] == nil ? nil : number(fields, field.rawValue, at: "sound")
        }
        var loudness: SoundSettings.Loudness?
        switch fields[SoundSettings.Field.loudness.rawValue] {
        case nil, .null?: break
        case .string("off")?: loudness = .off
        case .string(let name)? where LoudnessPreset(rawValue: name) != nil:
            loudness = LoudnessPreset(rawValue: name).map { .preset($0) }
        case .number(let lufs)?: loudness = .target(lufs)
        case .string(let text)?:
            let names = ["off"] + LoudnessPreset.allCases.map(\.rawValue)
            report(
                "sound.loudness",
                "\"\(text)\" is not a preset; expected a number of LUFS or one of \(names.map { "\"\($0)\"" }.joined(separator: ", "))\(didYouMean(text, among: names))"
            )
        case let other?:
            report("sound.loudness", "expected a number of LUFS, a preset's name or \"off\", found \(other.kindName)")
        }
        var anchor: LoudnessAnchor?
        if let text = name(.loudnessAnchor) {
            anchor = LoudnessAnchor(rawValue: text)
            if anchor == nil {
                let names = LoudnessAnchor.allCases.map(\.rawValue)
                report(
                    "sound.loudnessAnchor",
                    "expected \"speech\" or \"program\", found \"\(text)\"\(didYouMean(text, among: names))"
                )
            }
        }
        /// A true-or-false field; `nil` when left out or broken (and reported).
        func flag(_ field: SoundSettings.Field) -> Bool? {
            switch fields[field.rawValue] {
            case nil, .null?: return nil
            case .bool(let value)?: return value
            case let other?:
                report("sound.\(field.rawValue)", "expected true or false, found \(other.kindName)")
                return nil
            }
        }
        let settings = SoundSettings(
            ambience: soundName(.ambience),
            ambienceGain: amount(.ambienceGain),
            ambienceFadeInSeconds: amount(.ambienceFadeInSeconds),
            ambienceFadeOutSeconds: amount(.ambienceFadeOutSeconds),
            startGong: soundName(.startGong),
            intervalGong: soundName(.intervalGong),
            intervalMinutes: amount(.intervalMinutes),
            bell: soundName(.bell),
            leadInSeconds: amount(.leadInSeconds),
            duckDecibels: amount(.duckDecibels),
            loudness: loudness,
            loudnessAnchor: anchor,
            truePeak: amount(.truePeak),
            speechLeveling: flag(.speechLeveling),
            soundsOverLeadIn: flag(.soundsOverLeadIn),
            silencePhase: flag(.silencePhase),
            speechOverGongs: flag(.speechOverGongs)
        )
        for problem in settings.problems {
            report("sound.\(problem.field.rawValue)", problem.rule)
        }
        return problems.count == before ? .some(settings) : nil
    }

    // MARK: Fields

    mutating func field(
        _ object: [String: JSONValue],
        _ key: String,
        at path: String,
        required: Bool
    ) -> JSONValue? {
        guard let value = object[key], value != .null else {
            if required { report(join(path, key), "is required but missing") }
            return nil
        }
        return value
    }

    /// A sound a script names: a name in the sound library (an id, or a file name in the
    /// library's folder), never a path. A script comes from others; a path in it would mix any
    /// file the render can read into the output (and `queue` would copy it), so paths belong to
    /// the command line, which the user types.
    mutating func soundName(_ object: [String: JSONValue], _ key: String, at path: String) -> String? {
        guard let name = string(object, key, at: path) else { return nil }
        // An empty name is the sound settings' own rule (`must not be empty`), reported with theirs.
        if !name.isEmpty, let problem = ScriptRules.soundNameProblem(name) {
            report(join(path, key), problem)
            return nil
        }
        return name
    }

    mutating func string(_ object: [String: JSONValue], _ key: String, at path: String) -> String? {
        guard let value = field(object, key, at: path, required: true) else { return nil }
        guard case .string(let string) = value else {
            report(join(path, key), "expected a string, found \(value.kindName)")
            return nil
        }
        return string
    }

    mutating func label(
        _ object: [String: JSONValue],
        _ key: String,
        at path: String,
        required: Bool
    ) -> String? {
        guard let value = field(object, key, at: path, required: required) else { return nil }
        guard case .string(let string) = value else {
            report(join(path, key), "expected a string, found \(value.kindName)")
            return nil
        }
        if required && string.isEmpty {
            report(join(path, key), "must not be empty")
            return nil
        }
        // Counted as texts are, in UTF-16 code units: a count of graphemes lets one letter carry
        // a million combining marks into a file's tags and chapters.
        if string.utf16.count > ScriptRules.maximumLabelLength {
            report(
                join(path, key),
                "\(string.utf16.count) characters are more than the limit of \(ScriptRules.maximumLabelLength)"
            )
            return nil
        }
        return string
    }

    mutating func text(_ object: [String: JSONValue], _ key: String, at path: String) -> String? {
        guard let value = field(object, key, at: path, required: true) else { return nil }
        return text(value, at: join(path, key))
    }

    /// A text to be spoken: 1…5000 UTF-16 code units with something besides white space.
    mutating func text(_ value: JSONValue, at path: String) -> String? {
        guard case .string(let text) = value else {
            report(path, "expected a string, found \(value.kindName)")
            return nil
        }
        let length = text.utf16.count
        if length == 0 {
            report(path, "is empty; a text needs 1 to \(ScriptRules.maximumTextLength) characters")
        } else if length > ScriptRules.maximumTextLength {
            report(path, "\(length) characters are more than the TTS limit of \(ScriptRules.maximumTextLength)")
        } else if text.allSatisfy(\.isWhitespace) {
            report(path, "holds only white space; there is nothing to speak")
        } else if let (offset, scalar) = text.unicodeScalars.enumerated().first(where: { Self.isForbidden($0.element) })
        {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            let why =
                scalar == "\0"
                ? "a speech engine reads up to a NUL and drops the rest" : "control characters are not speech"
            report(path, "holds the control character \(code) at character \(offset + 1); \(why)")
        } else {
            return text
        }
        return nil
    }

    /// Control characters a text may not hold: all but tab, line feed and carriage return.
    private static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isControlCharacter && scalar != "\t" && scalar != "\n" && scalar != "\r"
    }

    mutating func number(_ object: [String: JSONValue], _ key: String, at path: String) -> Double? {
        guard let value = field(object, key, at: path, required: true) else { return nil }
        guard case .number(let number) = value else {
            report(join(path, key), "expected a number, found \(value.kindName)")
            return nil
        }
        guard number.isFinite else {
            report(join(path, key), "the number is too large to represent")
            return nil
        }
        return number
    }

    mutating func wholeNumber(_ object: [String: JSONValue], _ key: String, at path: String) -> Int? {
        guard object[key] != nil, let number = number(object, key, at: path) else { return nil }
        guard number.rounded() == number, let whole = Int(exactly: number), abs(whole) <= 1_000_000_000 else {
            report(join(path, key), "\(formatted(number)) is not a whole number between -1000000000 and 1000000000")
            return nil
        }
        return whole
    }

    /// A time within the session: `0 ≤ value ≤ durationSeconds` (the upper bound only when the duration is valid).
    mutating func startSeconds(
        _ object: [String: JSONValue],
        _ key: String,
        at path: String,
        duration: Double?
    ) -> Double? {
        guard let seconds = number(object, key, at: path) else { return nil }
        if seconds < 0 {
            report(join(path, key), "\(formatted(seconds)) is negative")
            return nil
        }
        if let duration, seconds > duration {
            report(join(path, key), "\(formatted(seconds)) is past durationSeconds \(formatted(duration))")
            return nil
        }
        if seconds > ScriptRules.maximumDurationSeconds {
            report(
                join(path, key),
                "\(formatted(seconds)) is past the longest possible session of \(formatted(ScriptRules.maximumDurationSeconds)) seconds"
            )
            return nil
        }
        return seconds
    }

    mutating func array(
        _ object: [String: JSONValue],
        _ key: String,
        at path: String,
        required: Bool
    ) -> [JSONValue]? {
        guard let value = field(object, key, at: path, required: required) else { return nil }
        guard case .array(let items) = value else {
            report(join(path, key), "expected an array, found \(value.kindName)")
            return nil
        }
        return items
    }

    // MARK: Reporting

    mutating func report(_ location: String, _ rule: String) {
        if problems.count < ScriptRules.maximumReportedProblems {
            problems.append(ScriptProblem(location: location, rule: rule))
        } else {
            omittedProblems += 1
        }
    }

    private mutating func summarizeOmittedProblems() {
        if omittedProblems > 0 {
            problems.append(ScriptProblem(location: "(script)", rule: "\(omittedProblems) more problems not listed"))
        }
    }

    func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }
}

/// A number as a person would write it: `700`, `350.5`.
package func formatted(_ number: Double) -> String {
    if number.rounded() == number, abs(number) < 1e15 {
        return String(Int64(number))
    }
    return "\(number)"
}
