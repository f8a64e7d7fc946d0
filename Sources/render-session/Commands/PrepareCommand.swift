import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

struct PrepareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Make sure the cache holds every clip the scripts can need.",
        discussion: """
            Checks every segment's text and every interjection option of each script (a folder \
            means every *.json file in it) and synthesizes what the cache lacks, several clips \
            at a time, retrying timeouts, HTTP 429 and 5xx up to 3 tries. A corrupt cache entry \
            is synthesized again. A second run over the same scripts makes no request at all.

            Examples:
              render-session prepare Fixtures/scripts --cache out/cache
              render-session prepare Fixtures/scripts/ten-minute-session.json \\
                --cache out/cache --provider proxy --tts-url https://api.example.com \\
                --header 'X-Firebase-AppCheck: TOKEN'
              OPENAI_API_KEY=sk-… render-session prepare Fixtures/scripts \\
                --cache out/cache --provider openai --voice nova \\
                --tts-url https://api.example.com
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp(
            "Script JSON files, or folders of them; - for standard input.",
            valueName: "script-or-folder"
        )
    )
    var paths: [String]

    @OptionGroup var clip: ClipOptions

    @OptionGroup var source: ProviderOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "How many clips to synthesize at once, 1 to 64; for Piper, how many workers (each loads the model once). (default: the number of cores for espeak and piper, 4 for the servers)",
            valueName: "n"
        ),
        transform: { try Parse.number($0, as: Int.self, in: 1...64, what: "a number of clips") }
    )
    var jobs: Int?

    @Flag(help: "Print one JSON object on standard output with what the summary line says.")
    var json = false

    func validate() throws {
        guard !paths.isEmpty else { throw ValidationError("Give at least one script or folder.") }
        let problems = SessionPipeline(clips: clip.identity(for: source.provider)).problems
        if !problems.isEmpty {
            throw ValidationError(
                problems.map(\.flagLine).joined(separator: "\n")
            )
        }
    }

    func run() async throws {
        let (paths, json, clip, source, jobs) = (paths, json, clip, source, jobs)
        // One thread of the pool for each clip synthesized at once.
        try await runCommand(threads: jobs) { pool in
            var pipeline = SessionPipeline(
                clips: clip.identity(for: source.provider),
                source: try source.source(offline: false, jobs: jobs),
                observer: Console.observer(summarizingCache: false)
            )
            pipeline.fallbackVoice = source.fallback
            pipeline.speechCheck = source.speechCheck
            pipeline.pool = pool
            let library = try ScriptLibrary(paths: paths, warn: Console.warning)
            for problem in library.problems {
                for line in problem.error.flagLines { Console.error(line) }
            }
            let prepared = try await pipeline.prepare(scripts: library.entries.map(\.script))
            let scripts = library.entries.count == 1 ? "1 script" : "\(library.entries.count) scripts"
            let summary = PrepareSummary(
                scripts: library.entries.count,
                invalidScripts: library.problems.map(\.path),
                clips: SessionSummary.Clips(
                    needed: prepared.needed,
                    cached: prepared.alreadyCached,
                    synthesized: prepared.synthesized,
                    failed: prepared.failed
                ),
                replaced: prepared.replaced,
                problems: prepared.problemLines(),
                elapsedSeconds: prepared.elapsed.roundedSeconds,
                speech: prepared.speech
            )
            Console.summary(["Prepared \(scripts), \(prepared.summary)"], fields: summary)
            for line in prepared.problemLines() { Console.error(line) }
            if json { Console.printJSON(summary) }
            if !library.problems.isEmpty || !prepared.problems.isEmpty { throw ExitCode.failure }
        }
    }
}

/// What `prepare --json` prints: the summary line's facts.
struct PrepareSummary: Encodable {
    var scripts: Int
    var invalidScripts: [String]
    var clips: SessionSummary.Clips
    /// Corrupt cache entries synthesized again.
    var replaced: Int
    var problems: [String]
    var elapsedSeconds: Double
    /// What the speech check heard, with `--check-speech` (absent without).
    var speech: SpeechCheckSummary?
}
