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
            Decodes the file (wav, flac, mp3, opus, ogg, m4a, m4b) and checks that its length is the \
            timeline's, that its silences are silent (digital zero when lossless, below -60 dBFS \
            when lossy), that every clip's sound starts where the timeline puts it, and that \
            nothing clips (docs/verify.md). Without --timeline, FILE's sidecar \
            (out/x.mp3 → out/x.mp3.timeline.json, else the older out/x.timeline.json) is used if \
            it exists, and a timeline of another format is refused; else only decoding and \
            clipping are checked.

            Prints one line per problem on standard output (FILE: sentence), or with --json one \
            JSON object; a summary goes to standard error.

            The example checks out/session.mp3 against out/session.mp3.timeline.json, beside it.

            Exit statuses: 0 no problems; 1 problems found; 65 the file or the timeline cannot be \
            read, or the timeline is of another format's render; 64 a usage error.

            Example:
              render-session verify out/session.mp3
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(help: ArgumentHelp("The audio file to check.", valueName: "file"))
    var file: String

    @Option(
        help: ArgumentHelp(
            "The timeline JSON the file was rendered from; default: the file's sidecar.",
            valueName: "file.json"
        )
    )
    var timeline: String?

    @Flag(help: "Print the report as JSON instead of one line per problem.")
    var json = false

    func run() async throws {
        let (file, timelinePath, json) = (file, timeline, json)
        try await runCommand { _ in
            let report: VerificationReport
            do {
                let (timeline, name) = try Self.timeline(at: timelinePath, for: file)
                // The command runs on its pool: decoding a long file blocks one of its threads.
                report = try SessionVerifier.verify(file: file, timeline: timeline, timelineName: name)
            } catch let error as SessionError where error.code != .cancelled {
                // 1 means "problems found"; a file or timeline that cannot be read is an input's 65.
                for line in error.flagLines { Console.error(line) }
                throw error.exitStatus
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
                Console.writeStandardOutput((try encoder.encode(report)) + Data("\n".utf8))
            } else {
                let lines = report.problems.map { "\(file): \($0.message)\n" }.joined()
                Console.writeStandardOutput(Data(lines.utf8))
            }
            Console.status(report.summary)
            if !report.isClean { throw ExitCode.failure }
        }
    }

    /// The timeline given, else the file's sidecar if there is one (`x.mp3.timeline.json`, else
    /// the older `x.timeline.json`), with its path; `nil` (said on standard error) when there is none.
    static func timeline(at path: String?, for file: String) throws(SessionError) -> (Timeline?, String?) {
        if let path { return (try SessionVerifier.readTimeline(at: path), path) }
        let sidecar = SessionVerifier.sidecarTimelinePath(for: file)
        for candidate in [sidecar, SessionVerifier.legacySidecarTimelinePath(for: file)]
        where FileManager.default.fileExists(atPath: candidate) {
            return (try SessionVerifier.readTimeline(at: candidate), candidate)
        }
        Console.warning("no timeline (\(sidecar) does not exist): length and placement were not checked")
        return (nil, nil)
    }
}
