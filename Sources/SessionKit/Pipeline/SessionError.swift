/// Why a session cannot be prepared, planned or rendered, as one line per problem.
///
/// Every line names the file, the place (JSON path, clip key or text) and the rule broken:
/// `reactivity-03.json: segments[2].startSeconds: 700 is past durationSeconds 600`.
/// Speech providers throw it too, with one line that is the cause as a phrase
/// (`HTTP 503: upstream overloaded`), which SessionKit then places in a sentence about the clip.
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// One self-contained sentence per problem.
    public let lines: [String]

    /// What kind of failure a ``SessionError`` is.
    public enum Code: String, Sendable, Equatable {
        /// The script file cannot be read.
        case unreadableScript
        /// The script is not valid JSON or Markdown, or breaks a rule.
        case invalidScript
        /// A folder of scripts holds none.
        case noScripts
        /// Clips the script needs are not in the cache.
        case missingClips
        /// Clips are in the cache but cannot be decoded.
        case unusableClips
        /// A sound (the bell, a gong, the ambience bed) exists but cannot be decoded.
        case unusableSound
        /// A sound asked for is in no library and no file, and ``PlanSettings/strict`` makes that an error.
        case missingSound
        /// A sound library's folder cannot be read, or its `sounds.json` is not valid JSON or breaks a rule.
        case invalidSoundLibrary
        /// A setting's value cannot be used; ``SessionPipeline/problems`` names it.
        case invalidSetting
        /// A speech provider answered with an error that trying again will not fix.
        case providerFailed
        /// A speech provider did not answer in time or is overloaded (HTTP 429, 5xx): trying again may work.
        case providerUnavailable
        /// A voice cannot be had at all: its engine or model is missing or does not load. The
        /// pipeline falls back to the embedded voice unless told not to.
        case voiceUnavailable
        /// A voice id names no voice of its engine (a typo, or a path where a name belongs).
        case unknownVoice
        /// An output exists and replacing outputs was not allowed.
        case outputExists
        /// The output cannot be written.
        case cannotWrite
        /// An audio file to verify cannot be read at all (no such file, a folder, permission denied).
        case unreadableAudio
        /// A timeline JSON file cannot be read, or is not a timeline; or a queue JSON file, likewise.
        case unreadableTimeline
        /// A position, item or offset asked of a timeline or queue lies outside it; the line gives the range.
        case positionOutOfRange
        /// The task was cancelled (Ctrl-C, SIGTERM); unfinished files were removed.
        case cancelled
    }

    /// The error for work stopped by cancellation.
    public static let cancelled = SessionError(.cancelled, "Interrupted; unfinished files were removed")

    public init(_ code: Code, lines: [String]) {
        precondition(!lines.isEmpty, "a SessionError needs at least one line")
        self.code = code
        self.lines = lines
    }

    public init(_ code: Code, _ line: String) {
        self.init(code, lines: [line])
    }

    /// Whether trying the same request again may succeed.
    public var isRetryable: Bool { code == .providerUnavailable }

    /// The lines, joined by newlines.
    public var description: String { lines.joined(separator: "\n") }
}
