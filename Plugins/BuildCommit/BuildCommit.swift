import Foundation
import PackagePlugin

/// Records the commit the command is built from, for `render-session --version`: `git` names the
/// checkout's commit (`unknown` outside a git checkout), written to a Swift file that is made
/// again whenever git's record of HEAD moves (a commit, checkout, merge or reset), and only then,
/// so that an unchanged checkout costs no recompilation.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let root = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "BuildCommit.swift")
        let script = #"""
            commit=$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            printf '/// The commit this binary was built from (written by the BuildCommit plugin).\nlet buildCommit = "%s"\n' "$commit" > "$2"
            """#
        return [
            .buildCommand(
                displayName: "Recording the commit render-session is built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", script, "sh", root.path, output.path],
                inputFiles: Self.headRecords(of: root),
                outputFiles: [output]
            )
        ]
    }

    /// The files git rewrites when HEAD moves: its reflog and index, in the checkout's git folder
    /// (`.git`, or the folder a worktree's `.git` file names); none outside a checkout.
    static func headRecords(of root: URL) -> [URL] {
        let dotGit = root.appending(path: ".git")
        var folder = dotGit
        if let link = try? String(contentsOf: dotGit, encoding: .utf8), link.hasPrefix("gitdir: ") {
            let path = link.dropFirst("gitdir: ".count).trimmingCharacters(in: .whitespacesAndNewlines)
            folder = path.hasPrefix("/") ? URL(fileURLWithPath: path) : root.appending(path: path)
        }
        return ["logs/HEAD", "index", "HEAD"].map { folder.appending(path: $0) }.filter {
            FileManager.default.fileExists(atPath: $0.path)
        }
    }
}
