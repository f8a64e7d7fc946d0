import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

/// `render-session verify`: decodes a rendered file and checks it against its timeline.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a rendered audio file against its timeline.",
        discussion: """
            Decodes the file (\(FormatNames.names)) and checks that its length is the \
            timeline's, that its silences are silent (digital zero when lossless, below -60 dBFS \
            when lossy), that every clip's sound starts where the timeline puts it, and that \
            nothing clips (docs/verify.md). Without --timeline, FILE's sidecar is used \
            (out/x.mp3 → out/x.mp3.timeline.json, else the older out/x.timeline.json), and there \
            must be one: with --no-timeline only decoding and clipping are checked. A timeline \
            that records another file than FILE (its size and SHA-256: an older render's, another \
            session's) or another format is refused, naming the session it belongs to.

            With --speech, every spoken item's sound in the file is transcribed by an offline \
            recognizer and compared with its text: an item that does not say it (more than 4 words \
            in a row differ, or a word error rate over 0.25) is a problem (docs/speech-check.md; \
            scripts/setup-speech-check installs the recognizer). It needs the file's timeline.

            Prints one line per problem on standard output (FILE: sentence), or with --json one \
            JSON object; a summary goes to standard error.

            The example checks out/session.mp3 against out/session.mp3.timeline.json, beside it.

            Exit statuses: 0 no problems; 1 problems found; 65 the file or the timeline cannot be \
            read, there is no timeline, or the timeline is another render's; 64 a usage error; 69 \
            the speech check's recognizer is not installed or does not load.

            Example:
              render-session verify out/session.mp3
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(help: ArgumentHelp("The audio file to check.", valueName: "file"), completion: Completions.audio)
    var file: String

    @Option(
        help: ArgumentHelp(
            "The timeline JSON the file was rendered from; default: the file's sidecar.",
            valueName: "file.json"
        ),
        completion: Completions.json
    )
    var timeline: String?

    @Flag(help: "Check the file without a timeline: only that it decodes and does not clip.")
    var noTimeline = false

    @Flag(help: "Print the report as JSON instead of one line per problem.")
    var json = false

    @Option(
        help: ArgumentHelp(
            "The clip cache the file was rendered from: where a clip's own lead-in is read, to tell how late it starts. (default: $XDG_CACHE_HOME/render-session/tts, else ~/.cache/render-session/tts)",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var cache: String?

    @Option(
        help: ArgumentHelp(
            "The sound library the file was rendered with. (default: the built-in library, docs/sound.md)",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var sounds: String?

    @Flag(help: "Also transcribe each spoken item and check that it says its text (docs/speech-check.md).")
    var speech = false

    @OptionGroup var speechCheck: SpeechCheckOptions

    func validate() throws {
        if noTimeline, timeline != nil {
            throw ValidationError("--no-timeline and --timeline contradict each other; give one")
        }
        if noTimeline, speech {
            throw ValidationError("--speech needs the file's timeline, which --no-timeline leaves out")
        }
        if speechCheck.speechModel != nil && !speech {
            throw ValidationError("--speech-model is the speech check's model; give --speech as well")
        }
    }

    func run() async throws {
        let (file, timelinePath, withoutTimeline, json) = (file, timeline, noTimeline, json)
        let check = speech ? speechCheck.check : nil
        let sources = SourceFolders(
            clips: cache ?? ClipCache.defaultDirectory(),
            sounds: sounds ?? SoundLibrary.defaultFolder()
        )
        try await runCommand { _ in
            var report: VerificationReport
            do {
                let (timeline, name) =
                    withoutTimeline ? (nil, nil) : try Self.timeline(at: timelinePath, for: file)
                // The command runs on its pool: decoding a long file blocks one of its threads.
                report = try SessionVerifier.verify(
                    file: file,
                    timeline: timeline,
                    timelineName: name,
                    sources: sources
                )
                if let check, let timeline {
                    try await SessionVerifier.checkSpeech(of: &report, timeline: timeline, check: check)
                }
            } catch let error as SessionError where error.code != .cancelled {
                // 1 means "problems found"; a file or timeline that cannot be read is an input's 65.
                for line in error.flagLines { Console.error(line) }
                throw error.exitStatus
            }
            if json {
                Console.printJSON(report)
            } else {
                Console.printLines(report.problems.map { "\(file): \($0.message)" })
            }
            Console.status(report.summary)
            if !report.isClean { throw ExitCode.failure }
        }
    }

    /// The timeline given, else the file's sidecar (`x.mp3.timeline.json`, else the older
    /// `x.timeline.json`), with its path.
    /// - Throws: ``SessionError`` (`unreadableTimeline`) when there is none: a file verified
    ///   against nothing would pass with "0 problems" whatever its content.
    static func timeline(at path: String?, for file: String) throws(SessionError) -> (Timeline?, String?) {
        if let path { return (try SessionVerifier.readTimeline(at: path), path) }
        let sidecar = SessionVerifier.sidecarTimelinePath(for: file)
        for candidate in [sidecar, SessionVerifier.legacySidecarTimelinePath(for: file)]
        where FileManager.default.fileExists(atPath: candidate) {
            return (try SessionVerifier.readTimeline(at: candidate), candidate)
        }
        throw SessionError(
            .unreadableTimeline,
            "Cannot verify \(file): it has no timeline (\(sidecar) does not exist); name it with --timeline, or check only that it decodes and does not clip with --no-timeline"
        )
    }
}
