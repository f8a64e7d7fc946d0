internal import Foundation
internal import SessionAudio
public import SessionTimeline

/// Reads script files, naming the file in every problem it reports.
public enum ScriptFile {
    /// What a script read from standard input (`-`) is called in messages.
    package static let standardInputName = "<stdin>"

    /// Reads and validates the script at `path`; `-` reads standard input, and a pipe or process
    /// substitution (`<(…)`) is read like any file.
    /// A stretching region file (a JSON array) has no id of its own: it takes the file's name
    /// without `.json`, when that is a valid id. With `strict`, keys a session's kind does not
    /// know are problems.
    /// - Throws: ``SessionError`` with one line per problem: `path: location: rule`.
    /// `warn` is told each key the script's shape does not know, as `path: location: rule`.
    public static func load(
        _ path: String,
        strict: Bool = false,
        warn: (String) -> Void = { _ in }
    ) throws(SessionError) -> Script {
        try load(path, strict: strict, warn: warn) { _, _ in nil }
    }

    /// ``load(_:strict:warn:)``, reporting with a broken script's problems those of its voice and
    /// sounds too, as `alsoChecking` finds them (``SessionPipeline/problems(voice:sound:)``) in
    /// what of them holds (``Script/voiceAndSound(salvagedFrom:)``): one run says every mistake it
    /// can, the keys it ignored among them.
    package static func load(
        _ path: String,
        strict: Bool = false,
        warn: (String) -> Void = { _ in },
        alsoChecking: (_ voice: String?, _ sound: SoundSettings?) -> SessionError?
    ) throws(SessionError) -> Script {
        let name = path == "-" ? standardInputName : path
        let data = try contents(of: path)
        var script: Script
        var warnings: [ScriptProblem] = []
        do {
            defer { for warning in warnings { warn("\(name): \(warning)") } }
            script = try Script(json: data, strict: strict, warnings: &warnings)
        } catch {
            if error.code == .notJSON, looksLikeMarkdown(path: path, data: data) {
                // A meditation file given where a script belongs: what to do, not where the JSON broke.
                throw SessionError(
                    .invalidScript,
                    "\(name): is Markdown, not a script's JSON; `render-session import \(path) -o DIR` makes a script of each of its meditations",
                    underlyingError: error
                )
            }
            let (voice, sound) = Script.voiceAndSound(salvagedFrom: data)
            let more = alsoChecking(voice, sound)?.markedLines ?? []
            throw SessionError(
                .invalidScript,
                lines: error.problems.map { "\(name): \($0)" } + more,
                underlyingError: error
            )
        }
        if case .stretch(let stretch) = script.kind, case .regions = stretch.source, path != "-" {
            let base = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            if ScriptRules.isValidIdentifier(base) { script.id = base }
        }
        return script
    }

    /// Whether a file that is not JSON is meant as meditation Markdown: named `.md`, or starting
    /// (after blank space) with a `#` heading.
    static func looksLikeMarkdown(path: String, data: Data) -> Bool {
        let suffix = (path as NSString).pathExtension.lowercased()
        if suffix == "md" || suffix == "markdown" { return true }
        return data.first { !" \t\r\n".utf8.contains($0) } == UInt8(ascii: "#")
    }

    /// The bytes of `path` (`-`: standard input), read to the end whatever kind of file it is,
    /// up to ``ScriptRules/maximumFileBytes``: a larger input is refused before it is parsed.
    static func contents(of path: String) throws(SessionError) -> Data {
        let name = path == "-" ? standardInputName : path
        // Read in pieces to the end: FIFOs and /dev/fd/N too, where a read sized by stat would not.
        let file: FileDescriptor
        if path == "-" {
            file = .standardInput
        } else {
            do {
                file = try FileDescriptor.open(path, .readOnly)
            } catch {
                throw SessionError(
                    .unreadableScript,
                    "\(path): cannot read the script: \(FileProblem.describeUnreadable(path))",
                    underlyingError: error
                )
            }
        }
        do {
            return try file.readToEnd(limit: ScriptRules.maximumFileBytes)
        } catch {
            switch error {
            case .tooLarge(let limit):
                throw SessionError(
                    .unreadableScript,
                    "\(name): the script is larger than \(limit >> 20) MiB, the most a script may be",
                    underlyingError: error
                )
            case .failed(let error):
                throw SessionError(
                    .unreadableScript,
                    "\(name): cannot read the script: \(FileProblem.describe(error, path: path))",
                    underlyingError: error
                )
            }
        }
    }

    /// The script files `paths` name: files as given (`-` too), folders as every `*.json` file
    /// directly in them, sorted by name.
    /// - Throws: ``SessionError`` for a path that does not exist or a folder that cannot be read.
    package static func scriptPaths(in paths: [String]) throws(SessionError) -> [String] {
        var result: [String] = []
        for path in paths {
            var isDirectory: ObjCBool = false
            guard path == "-" || FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                throw SessionError(.unreadableScript, "\(path): no such file or folder")
            }
            guard isDirectory.boolValue else {
                result.append(path)
                continue
            }
            do {
                let names = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".json") }
                    .sorted()
                result += names.map { (path as NSString).appendingPathComponent($0) }
            } catch {
                throw SessionError(
                    .unreadableScript,
                    "\(path): cannot list the folder: \(FileProblem.describe(error, path: path))",
                    underlyingError: error
                )
            }
        }
        return result
    }
}
