import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct BatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Render every script in a folder.",
        discussion: """
            Prepares every clip first (one pass, shared texts made once), then renders several \
            sessions at once, writing {id}.wav and {id}.timeline.json. A session whose output is up \
            to date (manifest.json in the output folder) is skipped; --force renders it anyway. One \
            failing script does not stop the others; the exit status is 1 if any failed, or if \
            there is no script at all. Seeds are derived from --seed and each session's name, so a \
            batch is reproducible.

            Examples:
              render-session batch Fixtures/scripts -o out/sessions --cache Fixtures/cache
              render-session batch Fixtures/scripts -o out/daily \\
                --cache Fixtures/cache --variants 3 --seed 20261122
            """
    )

    @Argument(help: ArgumentHelp("The folder of script JSON files (or script files).", valueName: "folder"))
    var paths: [String]

    @Option(name: .shortAndLong, help: ArgumentHelp("The output folder (created if needed).", valueName: "dir"))
    var output: String

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How many sessions render at once, 1 to 64. (default: the number of cores)", valueName: "n"),
        transform: { try Parse.number($0, as: Int.self, in: 1...64, what: "a number of sessions") }
    )
    var jobs: Int?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Render this many versions of each script with different interjection draws, 0 to 1000: {id}-v1.wav …",
            valueName: "k"
        ),
        transform: { try Parse.number($0, as: Int.self, in: 0...1_000, what: "a number of variants") }
    )
    var variants: Int = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The base seed every session's seed is derived from, 0 to 2^64 − 1.", valueName: "n"),
        transform: { try Parse.number($0, as: UInt64.self, what: "a seed") }
    )
    var seed: UInt64 = 0

    @Flag(help: "Render sessions whose output is up to date too.")
    var force = false

    @OptionGroup var encoding: EncodingOptions

    @OptionGroup var clip: ClipOptions

    @OptionGroup var plan: PlanOptions

    @OptionGroup var source: ProviderOptions

    var options: PipelineOptions {
        PipelineOptions(clip: clip, plan: plan, source: source, seed: nil, output: encoding.settings(audio: nil))
    }

    func validate() throws {
        try options.validate()
    }

    func run() async throws {
        let (paths, folder) = (paths, output)
        let options = BatchOptions(
            outputFolder: folder,
            pipeline: try options.pipeline(),
            baseSeed: seed,
            variants: variants,
            jobs: jobs ?? ProcessInfo.processInfo.activeProcessorCount,
            force: force
        )
        try await runCommand {
            let clock = ContinuousClock()
            let started = clock.now
            let library = try ScriptLibrary(paths: paths, strict: plan.sound.strict)
            var failedNames: [String] = []
            for problem in library.problems {
                for line in problem.error.lines { Console.error(line) }
                failedNames.append(problem.path)
            }
            let progress = ProgressLine { done, total, elapsed in
                let eta = done > 0 ? Console.duration(elapsed / Double(done) * Double(total - done)) : "?"
                return "\(done)/\(total) sessions, ETA \(eta)"
            }
            let report = try await BatchRenderer.run(library, options: options) { done, total in
                progress.update(Int64(done), total: Int64(total))
            }
            progress.finish()
            // Clips that could not be made: once for the batch, not once per session.
            let clipProblems = report.clips.problemLines()
            for line in clipProblems {
                if options.pipeline.plan.allowMissing { Console.warning(line) } else { Console.error(line) }
            }
            var counts = (rendered: 0, upToDate: 0)
            for (session, result) in zip(report.sessions, report.results) {
                switch result {
                case .rendered: counts.rendered += 1
                case .upToDate: counts.upToDate += 1
                case .failed(let lines):
                    failedNames.append(session.name)
                    for line in lines { Console.error("\(session.name): \(line)") }
                case .lacksClips:
                    failedNames.append(session.name)
                }
            }
            let failedText =
                failedNames.isEmpty
                ? "0 failed" : "\(failedNames.count) failed (\(failedNames.joined(separator: ", ")))"
            Console.status(
                "Batch of \(report.sessions.count) sessions into \(folder): \(counts.rendered) rendered, \(counts.upToDate) up to date, \(failedText), in \(Console.seconds(clock.now - started))"
            )
            if !failedNames.isEmpty { throw ExitCode.failure }
        }
    }
}
