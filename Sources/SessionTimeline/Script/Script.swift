public import Foundation

/// A session as the app backend serves it: what every kind has (identifier, titles, length,
/// sound, voice) and its ``kind``, which carries what that kind plays (a guided script's segments
/// and interjections, `GuidedMeditationScript`, or a timer's, breathing, workout or stretching session).
///
/// Create one with ``Script/init(json:)``, which validates every rule in ``ScriptRules``.
public struct Script: Sendable, Equatable, Encodable {
    /// The script's identifier; it names output files, so it is limited to `[A-Za-z0-9._-]`.
    public var id: String
    /// The category the script belongs to, such as `reactivity`.
    public var category: String
    /// The title, written into the rendered WAV's title tag.
    public var title: String
    /// A one-line description.
    public var subtitle: String
    /// The script's place within its category.
    public var orderIndex: Int
    /// The planned length of the session before the closing bell.
    public var durationSeconds: Double
    /// The script's `sound` block: bed, gongs, lead-in, loudness; `nil` when it has none. For
    /// timer sessions it also holds the timer's own gong and bed fields.
    public var sound: SoundSettings?
    /// The session's shape and what it plays: ``SessionKind/guided(_:)`` for a script with segments.
    public var kind: SessionKind
    /// The voice the session's texts are spoken in (`espeak:de`, a script's top-level `voice`,
    /// for every kind), over the command's; `nil` for the command's.
    public var voice: String?

    /// A spoken part of a script.
    public struct Segment: Sendable, Equatable, Encodable {
        /// The segment's identifier, unique within its script.
        public var id: String
        /// When the segment is planned to start.
        public var startSeconds: Double
        /// What is spoken.
        public var text: String
        /// The part of the session it belongs to, such as `opening`, `teachings` or `closing`.
        public var phase: String

        public init(id: String, startSeconds: Double, text: String, phase: String) {
            self.id = id
            self.startSeconds = startSeconds
            self.text = text
            self.phase = phase
        }
    }

    /// A window in which one of several texts is spoken at a random whole second.
    public struct Interjection: Sendable, Equatable, Encodable {
        /// The earliest planned start.
        public var windowStartSeconds: Double
        /// The latest planned start.
        public var windowEndSeconds: Double
        /// The texts to choose from.
        public var textOptions: [String]

        public init(windowStartSeconds: Double, windowEndSeconds: Double, textOptions: [String]) {
            self.windowStartSeconds = windowStartSeconds
            self.windowEndSeconds = windowEndSeconds
            self.textOptions = textOptions
        }
    }

    public init(
        id: String,
        category: String,
        title: String,
        subtitle: String = "",
        orderIndex: Int = 0,
        durationSeconds: Double,
        kind: SessionKind,
        sound: SoundSettings? = nil,
        voice: String? = nil
    ) {
        self.id = id
        self.category = category
        self.title = title
        self.subtitle = subtitle
        self.orderIndex = orderIndex
        self.durationSeconds = durationSeconds
        self.sound = sound
        self.kind = kind
        self.voice = voice
    }

    /// A guided script's JSON keys; other kinds are not written back as JSON.
    private enum CodingKeys: String, CodingKey {
        case id, category, title, subtitle, orderIndex, durationSeconds, segments, interjections, sound, voice
    }

    /// Writes a guided script as the backend serves it (`render-session import` writes these);
    /// a script of another kind is written with no segments or interjections.
    public func encode(to encoder: any Encoder) throws {
        let guided = if case .guided(let session) = kind { session } else { GuidedSession(segments: []) }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(category, forKey: .category)
        try container.encode(title, forKey: .title)
        try container.encode(subtitle, forKey: .subtitle)
        try container.encode(orderIndex, forKey: .orderIndex)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(guided.segments, forKey: .segments)
        try container.encode(guided.interjections, forKey: .interjections)
        try container.encodeIfPresent(sound, forKey: .sound)
        try container.encodeIfPresent(voice, forKey: .voice)
    }

    /// Decodes and validates a script from the backend's JSON.
    ///
    /// Numbers may be written as integers or decimals. A key the script's shape does not know is
    /// ignored (``init(json:strict:warnings:)`` says which), or, when `strict`, is a problem.
    /// - Throws: ``ScriptError`` with code ``ScriptError/Code/brokenRule`` listing every problem
    ///   found, each with its JSON path and rule, or ``ScriptError/Code/notJSON`` with the line and
    ///   column where the text stops being JSON.
    public init(json data: Data, strict: Bool = false) throws(ScriptError) {
        var warnings: [ScriptProblem] = []
        try self.init(json: data, strict: strict, warnings: &warnings)
    }

    /// ``init(json:strict:)``, with the keys it ignored (each with its path and the nearest known
    /// key) added to `warnings`, also when it throws; under `strict` they are problems instead.
    package init(json data: Data, strict: Bool = false, warnings: inout [ScriptProblem]) throws(ScriptError) {
        let value = try JSONValue.parse(data)
        var validator = ScriptValidator()
        validator.strict = strict
        let script = validator.script(from: value)
        // The ignored keys are said beside the problems too: a misspelt key is often the cause.
        warnings += validator.warnings
        guard let script, validator.problems.isEmpty else {
            throw ScriptError(.brokenRule, problems: validator.problems)
        }
        self = script
    }

    /// Every text a render of this script can need: for a guided script the segments' texts and
    /// every interjection option, in script order, each once; none for other kinds (see
    /// ``texts(hasSound:sound:)``).
    public var allTexts: [String] {
        guard case .guided(let guided) = kind else { return [] }
        return guided.allTexts
    }
}

/// One thing wrong with a script's text: where it is and what is wrong.
public struct ScriptProblem: Sendable, Equatable, CustomStringConvertible {
    /// Where the problem is: a JSON path such as `segments[2].startSeconds`, `line 3, column 12` for
    /// a JSON syntax error, `line 13` for a Markdown problem, or empty for a problem with the text
    /// as a whole (an empty Markdown file).
    public let location: String
    /// The rule that is broken or what was expected, as a phrase: `700 is past durationSeconds 600`.
    public let rule: String
    /// The 1-based line of the text the problem is on, when it has one: set for a JSON syntax error
    /// and for every Markdown problem but an empty file, `nil` for a JSON path.
    public let line: Int?

    /// A problem at `location`, with a line if the location is on one.
    package init(location: String, rule: String, line: Int? = nil) {
        self.location = location
        self.rule = rule
        self.line = line
    }

    /// A problem on 1-based `line` of a text: its location is `line N`.
    package init(line: Int, rule: String) {
        self.init(location: "line \(line)", rule: rule, line: line)
    }

    /// `location: rule`, or the rule alone when the problem has no location.
    public var description: String { location.isEmpty ? rule : "\(location): \(rule)" }
}

/// The problems that keep a script, or a file of meditations, from being used: all of them for
/// script JSON, in document order; the first one for Markdown.
///
/// The one error type of SessionTimeline, thrown by ``Script/init(json:)`` and
/// ``MeditationMarkdown/parse(_:)``, and by ``PlaybackMap`` for positions outside a session.
public struct ScriptError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// Every problem found, at least one.
    public let problems: [ScriptProblem]

    /// What kind of failure a ``ScriptError`` is.
    public enum Code: String, Sendable, Equatable {
        /// The bytes are not one JSON document (a syntax error, invalid UTF-8, a number too large,
        /// nesting too deep); the one problem gives the line and column where the text stops being JSON.
        case notJSON
        /// The text is well-formed, but the script it describes breaks rules in ``ScriptRules``: for
        /// JSON, one problem per broken rule with its JSON path; for Markdown, one problem at the
        /// meditation's heading naming the first rule broken.
        case brokenRule
        /// Meditation Markdown that is not as the format says; the one problem gives the line
        /// (none for an empty file) and what was expected there.
        case malformedMarkdown
        /// A playback position, item or offset outside a session (``PlaybackMap``); the one
        /// problem's location is the ``PlaybackMap/Argument`` and its rule gives the valid range.
        case positionOutOfRange
        /// Items a ``PlaybackMap`` cannot count exactly: their rates' common tick makes the
        /// session longer than 2^53 ticks, or an item's length is negative.
        case unmappablePlayback
    }

    /// An error of kind `code` with `problems`, which must not be empty.
    package init(_ code: Code, problems: [ScriptProblem]) {
        precondition(!problems.isEmpty, "a ScriptError needs at least one problem")
        self.code = code
        self.problems = problems
    }

    /// An error of kind `code` with one problem.
    package init(_ code: Code, _ problem: ScriptProblem) {
        self.init(code, problems: [problem])
    }

    /// One line per problem.
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

extension Script {
    /// The voice and the `sound` block of a script that broke a rule elsewhere, each where it
    /// holds on its own: so that the run that reports the script's mistakes can check that voice
    /// and those sounds too, and report theirs with them, rather than one more run each. `nil`
    /// for either that is absent or broken itself (its problem is among the script's), and for
    /// both when `data` is not a JSON object.
    package static func voiceAndSound(salvagedFrom data: Data) -> (voice: String?, sound: SoundSettings?) {
        guard case .object(let root)? = try? JSONValue.parse(data) else { return (nil, nil) }
        var validator = ScriptValidator()
        let voice = root["voice"] == nil ? nil : validator.label(root, "voice", at: "", required: true)
        let voiceProblems = validator.problems.count
        let sound = validator.soundSettings(root)
        let soundHolds = validator.problems.count == voiceProblems
        return (voiceProblems == 0 ? voice : nil, soundHolds ? sound ?? nil : nil)
    }
}
