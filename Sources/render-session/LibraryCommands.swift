import ArgumentParser
import Foundation
import SessionKit

struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Turn a Markdown file of meditations into script JSON files.",
        discussion: """
            Writes one script per meditation, {category}-{NN}.json, and prints their paths. The \\
            format is in docs/meditations.md; a malformed file fails with its line number and \\
            what was expected, and nothing is written.

            Example:
              render-session import Fixtures/meditations/reactivity.md -o Fixtures/meditations
            """
    )

    @Argument(help: ArgumentHelp("The Markdown file.", valueName: "file.md"))
    var markdownPath: String

    @Option(name: .shortAndLong, help: ArgumentHelp("The folder to write the scripts into (created if needed).", valueName: "folder"))
    var output: String

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        try await reportingErrors {
            let written = try MeditationImport.run(markdownPath: markdownPath, into: output)
            for path in written { print(path) }
            Console.status("Imported \(written.count) scripts from \(markdownPath) into \(output)")
        }
    }
}

struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the scripts in a folder by category.",
        discussion: """
            Prints each category with its script count, then its scripts in orderIndex order: \\
            order, id, title, subtitle, duration. --json prints the backend's categories shape, \\
            [{"id", "name", "scriptCount", "scripts": [...]}].

            Example:
              render-session list Fixtures/meditations --json
            """
    )

    @Argument(help: ArgumentHelp("Folders of script JSON files, or script files.", valueName: "folder"))
    var paths: [String]

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func run() async throws {
        var failed = false
        try await reportingErrors {
            let library = try ScriptLibrary(paths: paths)
            for problem in library.problems {
                for line in problem.lines { Console.error(line) }
                failed = true
            }
            let categories = library.categories
            if json {
                Console.writeStandardOutput(ScriptLibrary.json(categories))
                return
            }
            var text = ""
            for category in categories {
                text += "\(category.name) (\(category.id)): \(category.scriptCount) script\(category.scriptCount == 1 ? "" : "s")\n"
                for script in category.scripts {
                    let duration = Console.duration(script.durationSeconds)
                    text += "  \(String(script.orderIndex).leftPadded(to: 3))  \(script.id)  \(script.title) — \(script.subtitle)  \(duration)\n"
                }
            }
            Console.writeStandardOutput(Data(text.utf8))
        }
        try exitIfFailed(failed)
    }
}

struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Render every script in a folder.",
        discussion: """
            Prepares every clip first (one pass, shared texts made once), then renders several \\
            sessions at once, writing {id}.wav and {id}.timeline.json. A session whose output is up \\
            to date (manifest.json in the output folder) is skipped; --force renders it anyway. One \\
            failing script does not stop the others; the exit status is 1 if any failed. Seeds are \\
            derived from --seed and each session's name, so a batch is reproducible.

            Example:
              render-session batch Fixtures/meditations -o out/reactivity
              render-session batch Fixtures/meditations -o out/daily --variants 7 --seed 20261122
            """
    )

    @Argument(help: ArgumentHelp("The folder of script JSON files (or script files).", valueName: "folder"))
    var paths: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("The output folder (created if needed).", valueName: "dir"))
    var output: String

    @Option(help: ArgumentHelp("How many sessions render at once. (default: the number of cores)", valueName: "n"))
    var jobs: Int = ProcessInfo.processInfo.activeProcessorCount

    @Option(help: ArgumentHelp("Render this many versions of each script with different interjection draws: {id}-v1.wav …", valueName: "k"))
    var variants: Int = 0

    @Option(help: ArgumentHelp("The base seed every session's seed is derived from.", valueName: "n"))
    var seed: UInt64 = 0

    @Flag(help: "Render sessions whose output is up to date too.")
    var force = false

    @Option(help: ArgumentHelp("The output sample format: s16, s24 or f32.", valueName: "format"))
    var format: SampleFormat = .pcm16

    @OptionGroup var clip: ClipOptions

    @OptionGroup var shape: ShapeOptions

    @OptionGroup var source: ProviderOptions

    func validate() throws {
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs: \(jobs) is outside 1…64") }
        guard (0...1_000).contains(variants) else { throw ValidationError("--variants: \(variants) is outside 0…1000") }
        try validateRenderOptions(renderOptions(clip: clip, shape: shape, source: source, seed: nil, sampleFormat: format))
    }

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        let clock = ContinuousClock()
        let started = clock.now
        var failedNames: [String] = []
        try await reportingErrors {
            let library = try ScriptLibrary(paths: paths)
            for problem in library.problems {
                for line in problem.lines { Console.error(line) }
            }
            failedNames += library.problems.map { $0.lines.first.map { String($0.prefix { $0 != ":" }) } ?? "?" }
            let options = BatchOptions(
                outputFolder: output,
                render: renderOptions(clip: clip, shape: shape, source: source, seed: nil, sampleFormat: format),
                baseSeed: seed, variants: variants, jobs: jobs, force: force)
            if !shape.offline {
                try await CacheFilling.fill(texts: library.entries.flatMap(\.script.allTexts), options: options.render, source: source,
                                           onFailure: .warn, quietWhenCached: true)
            }
            let sessions = BatchRenderer.sessions(of: library, options: options)
            let progress = ProgressLine(total: Int64(sessions.count)) { done, total, elapsed in
                let eta = done > 0 ? Console.duration(elapsed / Double(done) * Double(total - done)) : "?"
                return "\(done)/\(total) sessions, ETA \(eta)"
            }
            let results = try await BatchRenderer.run(sessions, options: options, warn: Console.warning) { done, _ in
                progress.update(Int64(done))
            }
            progress.finish()
            var counts = (rendered: 0, upToDate: 0)
            for (session, result) in zip(sessions, results) {
                switch result {
                case .rendered: counts.rendered += 1
                case .upToDate: counts.upToDate += 1
                case .failed(let lines):
                    failedNames.append(session.name)
                    if Interruption.isRequested { continue }
                    for line in lines { Console.error("\(session.name): \(line)") }
                }
            }
            if Interruption.isRequested { return }
            let failedText = failedNames.isEmpty ? "0 failed" : "\(failedNames.count) failed (\(failedNames.joined(separator: ", ")))"
            Console.status("Batch of \(sessions.count) sessions into \(output): \(counts.rendered) rendered, \(counts.upToDate) up to date, \(failedText), in \(Console.seconds(clock.now - started))")
        }
        try exitIfFailed(!failedNames.isEmpty)
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(0, width - count)) + self
    }
}
