package import SessionTimeline

/// Why a session cannot be prepared, planned or rendered, as one line per problem.
///
/// Every line names the file, the place (JSON path, clip key or text) and the rule broken:
/// `reactivity-03.json: segments[2].startSeconds: 700 is past durationSeconds 600`.
/// Speech providers throw it too, with one line that is the cause as a phrase
/// (`HTTP 503: upstream overloaded`), which SessionKit then places in a sentence about the clip.
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// The lines as made, settings still marked (``SettingReference``) for whoever prints them.
    let markedLines: [String]
    /// The error this one was caused by, when there is one: an `AudioError` from decoding or
    /// writing, a system error, a provider's error.
    public let underlyingError: (any Error & Sendable)?

    /// One self-contained sentence per problem, settings named in the library's words.
    public var lines: [String] { lines(namingSettings: { $0.words }) }

    /// The lines with every setting named by `name`: the command names its flags.
    package func lines(namingSettings name: (SettingReference) -> String) -> [String] {
        markedLines.map { namingSettings(in: $0, name) }
    }

    /// What kind of failure a ``SessionError`` is: a struct over a private list, so that kinds can
    /// be added without breaking code that switches over them (swift-subprocess's `SubprocessError.Code`).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case unreadableScript, invalidScript, noScripts, missingClips, unusableClips, unusableSound, missingSound,
                invalidSoundLibrary, invalidSetting, providerFailed, providerUnavailable, voiceUnavailable,
                unknownVoice, outputExists, cannotWrite, unreadableAudio, unreadableTimeline, positionOutOfRange,
                cancelled, lateSpeech, recognizerUnavailable
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The script file cannot be read.
        public static let unreadableScript = Code(.unreadableScript)
        /// The script is not valid JSON or Markdown, or breaks a rule.
        public static let invalidScript = Code(.invalidScript)
        /// A folder of scripts holds none.
        package static let noScripts = Code(.noScripts)
        /// Clips the script needs are not in the cache.
        public static let missingClips = Code(.missingClips)
        /// Clips are in the cache but cannot be decoded.
        public static let unusableClips = Code(.unusableClips)
        /// A sound (the bell, a gong, the ambience bed) exists but cannot be decoded.
        public static let unusableSound = Code(.unusableSound)
        /// A sound asked for is in no library and no file, and ``PlanSettings/allowsMissingSounds`` is off.
        public static let missingSound = Code(.missingSound)
        /// A sound library's folder cannot be read, or its `sounds.json` is not valid JSON or breaks a rule.
        public static let invalidSoundLibrary = Code(.invalidSoundLibrary)
        /// A setting's value cannot be used; ``SessionPipeline/problems`` names it.
        public static let invalidSetting = Code(.invalidSetting)
        /// A speech provider answered with an error that trying again will not fix.
        public static let providerFailed = Code(.providerFailed)
        /// A speech provider did not answer in time or is overloaded (HTTP 429, 5xx): trying again may work.
        public static let providerUnavailable = Code(.providerUnavailable)
        /// A voice cannot be had at all: its engine or model is missing or does not load, and no
        /// ``SessionPipeline/fallbackVoice`` is set.
        public static let voiceUnavailable = Code(.voiceUnavailable)
        /// The speech check's recognizer is not installed, or its model is missing or does not load.
        package static let recognizerUnavailable = Code(.recognizerUnavailable)
        /// A voice id names no voice of its engine (a typo, or a path where a name belongs).
        public static let unknownVoice = Code(.unknownVoice)
        /// An output exists and replacing outputs was not allowed.
        public static let outputExists = Code(.outputExists)
        /// The output cannot be written.
        public static let cannotWrite = Code(.cannotWrite)
        /// An audio file to verify cannot be read at all (no such file, a folder, permission denied).
        public static let unreadableAudio = Code(.unreadableAudio)
        /// A timeline JSON file cannot be read, or is not a timeline; or a queue JSON file, likewise.
        public static let unreadableTimeline = Code(.unreadableTimeline)
        /// A position, item or offset asked of a timeline or queue lies outside it; the line gives the range.
        package static let positionOutOfRange = Code(.positionOutOfRange)
        /// Speech starts later than ``PlanSettings/maximumLateSeconds`` allows.
        public static let lateSpeech = Code(.lateSpeech)
        /// The task was cancelled (Ctrl-C, SIGTERM); unfinished files were removed.
        public static let cancelled = Code(.cancelled)

        /// The kind's name: `invalidScript`.
        public var description: String { kind.rawValue }
    }

    /// The error for work stopped by cancellation.
    public static let cancelled = SessionError(.cancelled, "Interrupted; unfinished files were removed")

    package init(_ code: Code, lines: [String], underlyingError: (any Error & Sendable)? = nil) {
        precondition(!lines.isEmpty, "a SessionError needs at least one line")
        self.code = code
        self.markedLines = lines
        self.underlyingError = underlyingError
    }

    public init(_ code: Code, _ line: String, underlyingError: (any Error & Sendable)? = nil) {
        self.init(code, lines: [line], underlyingError: underlyingError)
    }

    /// `cause`'s own sentence as the one line, keeping `cause` as the underlying error.
    /// This error with `path` (a hidden temporary file the user never named) said as `name`
    /// (the path the user gave) in every line.
    package func naming(_ path: String, as name: String) -> SessionError {
        SessionError(code, lines: markedLines.map { $0.replacing(path, with: name) }, underlyingError: underlyingError)
    }

    package init(_ code: Code, wrapping cause: some Error & Sendable & CustomStringConvertible) {
        self.init(code, lines: [cause.description], underlyingError: cause)
    }

    /// Equal when the kind and the lines are; the underlying error is not compared.
    public static func == (left: SessionError, right: SessionError) -> Bool {
        left.code == right.code && left.markedLines == right.markedLines
    }

    /// Whether trying the same request again may succeed.
    package var isRetryable: Bool { code == .providerUnavailable }

    /// The lines, joined by newlines.
    public var description: String { lines.joined(separator: "\n") }
}
