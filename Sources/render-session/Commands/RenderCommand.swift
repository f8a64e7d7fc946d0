import ArgumentParser
import Foundation
import SessionAudio
import SessionKit
import SessionTimeline

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a script into one audio file: \(FormatNames.titles).",
        discussion: """
            Prints the paths written on standard output (nothing when an output is standard \
            output); progress and a summary go to standard error. A file appears only when \
            complete; an existing file is replaced (a symbolic link keeps pointing at the new \
            file), unless -n is given. `-` reads the script from standard input, or writes the \
            audio or the timeline to standard output. The output's folder is created if needed. \
            The timeline goes beside the audio (out/session.wav.timeline.json), recording the \
            file's size and SHA-256, unless --timeline or --no-timeline says otherwise.

            Examples:
              render-session render Fixtures/scripts/ten-minute-session.json \\
                -o out/session.wav --cache Fixtures/cache --seed 7
              render-session render Fixtures/scripts/edge-cases.json -o - \\
                --cache Fixtures/cache --offline --seed 3 > out/edge-cases.wav
              render-session render Fixtures/scripts/ten-minute-session.json \\
                -o out/session.mp3 --cache Fixtures/cache --seed 7 --verify
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @OptionGroup var session: SessionOptions

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The audio file to write (\(FormatNames.extensions)); - for standard output.",
            valueName: "out.wav"
        ),
        completion: Completions.audio
    )
    var output: String

    @Option(
        help: ArgumentHelp(
            "Write the timeline JSON to this file; - for standard output. (default: beside the audio, out.wav.timeline.json)",
            valueName: "file.json"
        ),
        completion: Completions.json
    )
    var timeline: String?

    @Flag(
        help:
            "Write no timeline; one left beside the audio by an earlier render (out.wav.timeline.json) is removed, as it no longer describes the file."
    )
    var noTimeline = false

    @Option(
        help: ArgumentHelp(
            "Also write captions of the speech: WebVTT (.vtt, each word timed, the phases beside it as NAME.chapters.vtt), SubRip (.srt) or a Podcasting 2.0 JSON transcript (.json); - for standard output (WebVTT).",
            valueName: "file.vtt"
        )
    )
    var captions: String?

    @OptionGroup var encoding: EncodingOptions

    @Flag(
        help:
            "Then decode the file written and check it against its timeline, as `verify` does; problems go to standard error and exit with 1."
    )
    var verify = false

    @OptionGroup var overwrite: OverwriteOption

    @Flag(
        help: "Print one JSON object on standard output with what the summary line says, instead of the paths written."
    )
    var json = false

    var options: PipelineOptions {
        var output = encoding.settings(
            audio: OutputDestination(argument: output),
            timeline: timelineDestination,
            replaceExisting: !overwrite.noOverwrite
        )
        output.verifies = verify
        output.captions = captions.map(OutputDestination.init(argument:))
        return session.options(output: output)
    }

    /// Where the timeline goes: `--timeline`, else beside a file the audio is written to (a FIFO
    /// or device has no beside), unless `--no-timeline`.
    var timelineDestination: OutputDestination? {
        if noTimeline { return nil }
        if let timeline { return OutputDestination(argument: timeline) }
        return OutputDestination(argument: output).sidecarTimeline
    }

    func validate() throws {
        if noTimeline, timeline != nil {
            throw ValidationError("--no-timeline and --timeline contradict each other; give one")
        }
        try options.validate()
        if json, output == "-" || timeline == "-" {
            throw ValidationError(
                "--json: standard output carries the audio or timeline; write them to files to print JSON"
            )
        }
        if json, captions == "-" {
            throw ValidationError("--json: standard output carries the captions; write them to a file to print JSON")
        }
        if let captions, captions != "-", CaptionFormat(path: captions) == nil {
            throw ValidationError(CaptionsCommand.extensionRule("--captions", captions))
        }
        if [output, timeline, captions].filter({ $0 == "-" }).count > 1 {
            throw ValidationError("only one of the audio, --timeline and --captions can go to standard output")
        }
        try Console.refuseTerminal(output)
        if verify, output == "-" {
            throw ValidationError("--verify: standard output cannot be read back; write a file to verify it")
        }
    }

    func run() async throws {
        let (options, json) = (options, json)
        let scriptPath = session.scriptPath
        try await runCommand { pool in
            let clock = ContinuousClock()
            let started = clock.now
            let (outcome, voiceOrigin, script) = try await options.run(
                scriptAt: scriptPath,
                on: pool,
                summarizingCache: false
            )
            let summary = SessionSummary(
                outcome.timeline,
                script: script,
                prepared: outcome.clips,
                voiceOrigin: voiceOrigin,
                output: options.output,
                elapsed: clock.now - started
            )
            Console.summary(summary.lines(verb: "Rendered"), fields: summary)
            if json {
                Console.printJSON(summary)
            } else {
                Console.printWritten(
                    [
                        options.output.audio, options.output.timeline, options.output.captions,
                        options.output.captionChapters,
                    ]
                )
            }
            if let report = outcome.verification {
                for problem in report.problems { Console.error("\(report.path): \(problem.message)") }
                Console.status(report.summary)
                if !report.isClean { throw ExitCode.failure }
            }
        }
    }
}

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Print a script's timeline as JSON without rendering.",
        discussion: """
            Prints exactly the timeline that `render` with the same options and seed follows \
            (schema: docs/timeline.md). Without --seed, a random seed is drawn and recorded. \
            `-` reads the script from standard input. The encoding options say which file it is \
            the timeline of (default: 16-bit WAV): an Opus file's is at 48 kHz, and with loudness \
            on the room the limiter leaves the codec sets the sounds' gains.

            Example:
              render-session timeline Fixtures/scripts/ten-minute-session.json \\
                --cache Fixtures/cache --seed 7
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @OptionGroup var session: SessionOptions

    @OptionGroup var encoding: EncodingOptions

    var options: PipelineOptions {
        session.options(output: encoding.settings(audio: nil, timeline: .standardOutput))
    }

    func validate() throws {
        try options.validate()
    }

    func run() async throws {
        let options = options
        let scriptPath = session.scriptPath
        try await runCommand { pool in
            try await options.run(scriptAt: scriptPath, on: pool)
        }
    }
}

/// The options of one session, shared by `render` and `timeline`.
struct SessionOptions: ParsableArguments {
    @Argument(
        help: ArgumentHelp("The script JSON file; - for standard input.", valueName: "script"),
        completion: Completions.script
    )
    var scriptPath: String

    @OptionGroup var clip: ClipOptions

    @OptionGroup var seed: SeedOption

    @OptionGroup var plan: PlanOptions

    @OptionGroup var source: ProviderOptions

    func options(output: OutputSettings) -> PipelineOptions {
        PipelineOptions(clip: clip, plan: plan, source: source, seed: seed.seed, output: output)
    }
}

extension PipelineOptions {
    /// Loads the script at `path` and runs the pipeline on it, its blocking work on `pool`; with
    /// `--offline`, missing clips end with what to do about them. The cache's filling is said in
    /// a line of its own only if `summarizingCache` (a render's summary says it instead).
    /// Each clip that starts late is a warning of its own, naming the script, the clip's place in
    /// it and the clip that overran it.
    /// - Returns: what the render came to, where the voice asked for came from (`--voice`,
    ///   `$RENDER_SESSION_VOICE`, `script`, `default`), and the script.
    @discardableResult
    func run(
        scriptAt path: String,
        on pool: BlockingPool,
        summarizingCache: Bool = true
    ) async throws -> (outcome: RenderOutcome, voiceOrigin: String, script: Script) {
        let pipeline = try pipeline(observer: Console.observer(summarizingCache: summarizingCache), pool: pool)
        let script = try ScriptFile.load(path, strict: plan.sound.strict, warn: Console.warning) {
            pipeline.problems(voice: $0, sound: $1)
        }
        let origin = script.voice == nil ? clip.voiceChoice(for: source.provider).origin : "script"
        let name = path == "-" ? ScriptFile.standardInputName : path
        do {
            let outcome = try await pipeline.run(script)
            for late in LateClip.all(in: outcome.timeline, script: script) { Console.warning("\(name): \(late.line)") }
            return (outcome, origin, script)
        } catch {
            if error.code == .lateSpeech {
                throw SessionError(.lateSpeech, "\(name): \(error.lines[0])", underlyingError: error)
            }
            guard error.code == .missingClips, plan.offline else { throw error }
            throw SessionError(
                .missingClips,
                lines: error.flagLines + [clip.offlineHint(for: [path])],
                underlyingError: error
            )
        }
    }
}
