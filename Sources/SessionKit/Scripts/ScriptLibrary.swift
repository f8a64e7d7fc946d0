package import Foundation
internal import SessionAudio
package import SessionTimeline

/// A folder of script files, read and grouped as the backend's categories endpoint groups them.
package struct ScriptLibrary: Sendable {
    /// A script and the file it came from.
    package struct Entry: Sendable {
        package let path: String
        package let script: Script
    }

    /// A file that could not be used, and why.
    package struct Problem: Sendable {
        package let path: String
        package let error: SessionError
    }

    /// The folders and files the library was read from.
    package let paths: [String]
    /// The valid scripts, by path.
    package let entries: [Entry]
    /// One problem per file that could not be used.
    package let problems: [Problem]

    /// Reads every `*.json` file directly in each folder of `paths`, and each file named; with
    /// `strict`, keys a script's shape does not know are problems, else `warn` is told of each.
    package init(paths: [String], strict: Bool = false, warn: (String) -> Void = { _ in }) throws(SessionError) {
        var entries: [Entry] = []
        var problems: [Problem] = []
        for path in try ScriptFile.scriptPaths(in: paths) {
            do {
                entries.append(Entry(path: path, script: try ScriptFile.load(path, strict: strict, warn: warn)))
            } catch {
                problems.append(Problem(path: path, error: error))
            }
        }
        self.paths = paths
        self.entries = entries
        self.problems = problems
    }

    /// The scripts grouped by category (categories by id), each category's scripts by `orderIndex`, then id.
    package var categories: [CategorySummary] {
        Dictionary(grouping: entries.map(\.script), by: \.category)
            .map { id, scripts in
                let sorted = scripts.sorted { ($0.orderIndex, $0.id) < ($1.orderIndex, $1.id) }
                return CategorySummary(
                    id: id,
                    name: CategorySummary.name(of: id),
                    scriptCount: sorted.count,
                    scripts: sorted.map(ScriptSummary.init)
                )
            }
            .sorted { $0.id < $1.id }
    }

    /// The JSON of ``categories``, shaped like the backend's `GET /guided-meditations/categories`
    /// with each category's scripts (without their text) added.
    package static func json(_ categories: [CategorySummary]) -> Data {
        CanonicalJSON.encode(categories)
    }
}

/// A category as the backend lists it, with its scripts.
package struct CategorySummary: Sendable, Equatable, Encodable {
    package let id: String
    package let name: String
    package let scriptCount: Int
    package let scripts: [ScriptSummary]

    /// A display name for a category id: `reactivity` → `Reactivity`, `body-scan` → `Body Scan`.
    static func name(of id: String) -> String {
        id.split(separator: "-").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined(separator: " ")
    }
}

/// A script as a category listing shows it: everything but the text.
package struct ScriptSummary: Sendable, Equatable, Encodable {
    package let id: String
    package let title: String
    package let subtitle: String
    package let orderIndex: Int
    package let durationSeconds: Double
    /// The session's kind: `guided`, `timer`, `breathing`, `workout` or `stretch`.
    package let kind: String

    init(_ script: Script) {
        kind = script.kind.name
        id = script.id
        title = script.title
        subtitle = script.subtitle
        orderIndex = script.orderIndex
        durationSeconds = script.durationSeconds
    }
}

/// Turning a Markdown file of meditations into script files.
package enum MeditationImport {
    /// Reads `markdownPath` and writes one script JSON per meditation into `folder`
    /// (`{id}.json`, each written atomically). Returns the paths written, in order. `warn` is told
    /// what is probably a mistake, as `FILE.md:LINE: what` (a duration that leaves more than a
    /// minute of silence after the last speech).
    /// - Throws: ``SessionError``: `FILE.md:LINE: what was expected`, before anything is written.
    package static func run(
        markdownPath: String,
        into folder: String,
        warn: (String) -> Void = { _ in }
    ) throws(SessionError) -> [String] {
        let text: String
        do {
            text = try String(contentsOfFile: markdownPath, encoding: .utf8)
        } catch {
            throw SessionError(
                .unreadableScript,
                "\(markdownPath): cannot read the file: \(FileProblem.describe(error, path: markdownPath))",
                underlyingError: error
            )
        }
        let category: MeditationMarkdown.Category
        do {
            category = try MeditationMarkdown.parse(text)
        } catch {
            let problem = error.problems[0]
            throw SessionError(
                .invalidScript,
                problem.line.map { "\(markdownPath):\($0): \(problem.rule)" } ?? "\(markdownPath): \(problem.rule)",
                underlyingError: error
            )
        }
        for warning in category.warnings {
            warn(warning.line.map { "\(markdownPath):\($0): \(warning.rule)" } ?? "\(markdownPath): \(warning.rule)")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot create the folder \(folder): \(FileProblem.describe(error, path: folder))",
                underlyingError: error
            )
        }
        var written: [String] = []
        for script in category.scripts {
            let path = (folder as NSString).appendingPathComponent("\(script.id).json")
            try AtomicFile.write(MeditationMarkdown.json(script), to: path)
            written.append(path)
        }
        return written
    }
}
