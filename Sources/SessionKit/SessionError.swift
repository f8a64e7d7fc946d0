/// Why a session cannot be planned or rendered, as one line per problem.
///
/// Every line names the file, the place (JSON path, clip key or text) and the rule broken:
/// `reactivity-03.json: segments[2].startSeconds: 700 is past durationSeconds 600`.
public struct SessionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is.
    public let code: Code
    /// One self-contained sentence per problem.
    public let lines: [String]

    /// What kind of failure a ``SessionError`` is.
    public enum Code: String, Sendable, Equatable {
        /// The script file cannot be read.
        case unreadableScript
        /// The script is not valid JSON or breaks a rule.
        case invalidScript
        /// Clips the script needs are not in the cache.
        case missingClips
        /// Clips are in the cache but cannot be decoded.
        case unusableClips
        /// The bell file cannot be decoded.
        case unusableBell
        /// An option's value cannot be used.
        case invalidOption
        /// The output cannot be written.
        case cannotWrite
        /// SIGINT or SIGTERM stopped the work.
        case interrupted
    }

    /// The error for work stopped by a signal.
    public static let interrupted = SessionError(.interrupted, "Interrupted; unfinished files were removed")

    public init(_ code: Code, lines: [String]) {
        precondition(!lines.isEmpty, "a SessionError needs at least one line")
        self.code = code
        self.lines = lines
    }

    public init(_ code: Code, _ line: String) {
        self.init(code, lines: [line])
    }

    /// The lines, joined by newlines.
    public var description: String { lines.joined(separator: "\n") }
}
