public import Foundation
public import SessionTimeline

/// Reads script files, naming the file in every problem it reports.
public enum ScriptFile {
    /// What a script read from standard input (`-`) is called in messages.
    public static let standardInputName = "<stdin>"

    /// Reads and validates the script at `path`; `-` reads standard input, and a pipe or process
    /// substitution (`<(…)`) is read like any file.
    /// - Throws: ``SessionError`` with one line per problem: `path: location: rule`.
    public static func load(_ path: String) throws(SessionError) -> Script {
        let name = path == "-" ? standardInputName : path
        let data = try contents(of: path)
        do {
            return try Script(json: data)
        } catch {
            throw SessionError(.invalidScript, lines: error.problems.map { "\(name): \($0)" })
        }
    }

    /// The bytes of `path` (`-`: standard input), read to the end whatever kind of file it is.
    static func contents(of path: String) throws(SessionError) -> Data {
        if path == "-" {
            do {
                return try FileHandle.standardInput.readToEnd() ?? Data()
            } catch {
                throw SessionError(
                    .unreadableScript,
                    "\(standardInputName): cannot read the script: \(error.localizedDescription)"
                )
            }
        }
        // FileHandle reads FIFOs and /dev/fd/N to their end, where a read sized by stat would not.
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw SessionError(
                .unreadableScript,
                "\(path): cannot read the script: \(FileProblem.describeUnreadable(path))"
            )
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw SessionError(
                .unreadableScript,
                "\(path): cannot read the script: \(FileProblem.describe(error, path: path))"
            )
        }
    }

    /// The script files `paths` name: files as given (`-` too), folders as every `*.json` file
    /// directly in them, sorted by name.
    /// - Throws: ``SessionError`` for a path that does not exist or a folder that cannot be read.
    public static func scriptPaths(in paths: [String]) throws(SessionError) -> [String] {
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
                    "\(path): cannot list the folder: \(FileProblem.describe(error, path: path))"
                )
            }
        }
        return result
    }
}
