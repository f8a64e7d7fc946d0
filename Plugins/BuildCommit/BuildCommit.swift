import Foundation
import PackagePlugin

/// Records the commit the command is built from, for `render-session --version`: before every
/// build, `git` names the checkout's commit (with `+modified` when the tree differs from it, and
/// `unknown` outside a git checkout), written to a Swift file only when that changes, so that
/// an unchanged tree costs no recompilation.
@main
struct BuildCommit: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let folder = context.pluginWorkDirectoryURL.appending(path: "generated")
        let script = #"""
            root="$1"; out="$2"
            mkdir -p "$(dirname "$out")"
            commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null) || commit=unknown
            if [ "$commit" != unknown ] && ! git -C "$root" diff --quiet HEAD -- 2>/dev/null; then
                commit="$commit+modified"
            fi
            text="/// The commit this binary was built from (written by the BuildCommit plugin).
            let buildCommit = \"$commit\""
            if [ ! -f "$out" ] || [ "$(cat "$out")" != "$text" ]; then printf '%s\n' "$text" > "$out"; fi
            """#
        return [
            .prebuildCommand(
                displayName: "Recording the commit render-session is built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    "-c", script, "sh", context.package.directoryURL.path,
                    folder.appending(path: "BuildCommit.swift").path,
                ],
                outputFilesDirectory: folder
            )
        ]
    }
}
