import ArgumentParser
import Foundation
import SessionKit

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
              render-session prepare Fixtures/scripts
              render-session prepare Fixtures/scripts/ten-minute-session.json --provider proxy \\
                --tts-url https://api.example.com --header 'X-Firebase-AppCheck: TOKEN'
              OPENAI_API_KEY=sk-… render-session prepare Fixtures/scripts --provider openai --voice nova
            """
    )

    @Argument(help: ArgumentHelp("Script JSON files, or folders of them.", valueName: "script-or-folder"))
    var paths: [String]

    @OptionGroup var clip: ClipOptions

    @OptionGroup var source: ProviderOptions

    @Option(help: ArgumentHelp("How many clips to synthesize at once. (default: the number of cores for espeak, 4 for the servers)", valueName: "n"))
    var jobs: Int?

    func validate() throws {
        if let jobs, !(1...64).contains(jobs) {
            throw ValidationError("--jobs: \(jobs) is outside 1…64")
        }
        guard !paths.isEmpty else { throw ValidationError("Give at least one script or folder.") }
        guard clip.speed.isFinite, RenderOptions.speedRange.contains(clip.speed) else {
            throw ValidationError("--speed: \(clip.speed) is outside \(RenderOptions.speedRange.lowerBound)…\(RenderOptions.speedRange.upperBound)")
        }
    }

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        var failed = false
        var texts: [String] = []
        var scriptCount = 0
        for path in try ScriptFile.scriptPaths(in: paths) {
            do {
                texts += try ScriptFile.load(path).allTexts
                scriptCount += 1
            } catch {
                for line in error.lines { Console.error(line) }
                failed = true
            }
        }
        try await reportingErrors {
            let options = RenderOptions(cacheDirectory: clip.cacheDirectory, voice: clip.voice(for: source.provider), speed: clip.speed)
            let scripts = scriptCount == 1 ? "1 script" : "\(scriptCount) scripts"
            try await CacheFilling.fill(texts: texts, options: options, source: source, jobs: jobs, onFailure: .fail,
                                        quietWhenCached: false, summaryPrefix: "Prepared \(scripts), ")
        }
        try exitIfFailed(failed)
    }
}

/// Filling the cache for a command: progress on a terminal, one summary line, and errors (or
/// warnings) for the clips that could not be made.
enum CacheFilling {
    /// What to do about clips that could not be made.
    enum FailurePolicy {
        /// List them as errors and exit with status 1.
        case fail
        /// List them as warnings and go on.
        case warn
    }

    /// Prepares the clips of `texts` with the provider `source` describes.
    static func fill(texts: [String], options: RenderOptions, source: ProviderOptions, jobs: Int? = nil,
                     onFailure: FailurePolicy, quietWhenCached: Bool,
                     summaryPrefix: String = "Filled the clip cache, ") async throws {
        let preparer = ClipPreparer(cache: ClipCache(directory: options.cacheDirectory), provider: try source.settings.makeProvider(),
                                    voice: options.voice, speed: options.speed, jobs: jobs)
        let progress = ProgressLine(total: 0) { done, total, elapsed in
            let rate = Double(done) / max(elapsed, 0.001)
            let eta = rate > 0 ? Console.duration(Double(total - done) / rate) : "?"
            return "\(done)/\(total) clips, \(String(format: "%.1f", rate)) clips/s, ETA \(eta)"
        }
        let result = try await preparer.prepare(texts: texts, warn: Console.warning) { state in
            progress.update(Int64(state.done), total: Int64(state.needed))
        }
        progress.finish()
        if !(quietWhenCached && result.synthesized == 0 && result.failures.isEmpty && result.replaced == 0) {
            Console.status(summaryPrefix + result.summary)
        }
        guard !result.failures.isEmpty else { return }
        switch onFailure {
        case .warn:
            for failure in result.failures { Console.warning(failure.description) }
        case .fail:
            for failure in result.failures { Console.error(failure.description) }
            throw ExitCode.failure
        }
    }
}
