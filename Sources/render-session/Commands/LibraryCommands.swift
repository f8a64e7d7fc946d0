import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn a Markdown file of meditations into script JSON files.",
        discussion: """
            Writes one script per meditation, {category}-{NN}.json, and prints their paths. The \
            format is in docs/meditations.md; a malformed file fails with its line number and \
            what was expected, and nothing is written. A meditation lasts its Duration: line's \
            length (its own, else the file header's); without one it ends with its last speech. \
            A duration that leaves more than a minute of silence after the last speech is a warning.

            Example:
              render-session import Fixtures/meditations/reactivity.md -o out/scripts
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(help: ArgumentHelp("The Markdown file.", valueName: "file.md"), completion: Completions.markdown)
    var markdownPath: String

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp("The folder to write the scripts into (created if needed).", valueName: "folder"),
        completion: Completions.folder
    )
    var output: String

    func run() async throws {
        let (markdownPath, output) = (markdownPath, output)
        try await runCommand { _ in
            let written = try MeditationImport.run(
                markdownPath: markdownPath,
                into: output,
                warn: Console.warning
            )
            Console.printLines(written)
            Console.status("Imported \(written.count) scripts from \(markdownPath) into \(output)")
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the scripts in a folder by category.",
        discussion: """
            Prints each category with its script count, then its scripts in orderIndex order: \
            order, id, title, subtitle, duration. --json prints the backend's categories shape, \
            [{"id", "name", "scriptCount", "scripts": [...]}].

            Example:
              render-session list Fixtures/meditations --json
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp("Folders of script JSON files, or script files.", valueName: "folder"),
        completion: Completions.script
    )
    var paths: [String]

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        let (paths, json) = (paths, json)
        try await runCommand { _ in
            let library = try ScriptLibrary(paths: paths)
            for problem in library.problems {
                for line in problem.error.flagLines { Console.error(line) }
            }
            let categories = library.categories
            if json {
                Console.writeStandardOutput(Console.printableJSON(ScriptLibrary.json(categories)))
                if !library.problems.isEmpty { throw ExitCode.failure }
                return
            }
            // Names, titles and subtitles are the scripts' own text: printed with their control
            // characters escaped, so a script cannot send the terminal escape sequences.
            var text = ""
            for category in categories {
                let count = "\(category.scriptCount) script\(category.scriptCount == 1 ? "" : "s")"
                text += "\(printable(category.name)) (\(printable(category.id))): \(count)\n"
                for script in category.scripts {
                    let duration = Console.duration(script.durationSeconds)
                    let order = String(script.orderIndex).leftPadded(to: 3)
                    text +=
                        "  \(order)  \(printable(script.id))  \(printable(script.title)) — \(printable(script.subtitle))  \(duration)  \(script.kind)\n"
                }
            }
            Console.printText(text)
            if !library.problems.isEmpty { throw ExitCode.failure }
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
