import ArgumentParser
import Foundation
import SessionKit
import SessionTimeline

/// `render-session captions`: a rendered timeline's speech as WebVTT, SubRip or a JSON transcript.
struct CaptionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "captions",
        abstract: "Write captions of a rendered timeline's speech: WebVTT, SubRip or a JSON transcript.",
        discussion: """
            FILE is a timeline JSON (render --timeline); - reads standard input. The captions are \
            the words its spoken items carry (docs/captions.md): a cue per sentence, at most two \
            lines of 42 characters, each cue from its first word's first frame to its last \
            word's last, to the millisecond and never early. WebVTT (.vtt) times every word \
            (<00:01:02.345> tags) and gets the phases as chapters beside it \
            (NAME.chapters.vtt); SubRip (.srt) has the cues alone; .json is the Podcasting 2.0 \
            transcript, word by word. Spoken items without word timing (clips made before word \
            marks, or by a voice that gives none) are left out, with a warning.
            Exit statuses: 0 written; 64 a usage error; 65 the timeline cannot be read, or is a \
            queue; 74 a file cannot be written.
            Examples:
              render-session captions out/session.wav.timeline.json -o out/session.vtt
              render-session captions out/session.wav.timeline.json --format srt
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

    @Argument(
        help: ArgumentHelp("The timeline JSON; - for standard input.", valueName: "file.json"),
        completion: Completions.json
    )
    var file: String

    @Option(
        name: [.short, .long],
        help: ArgumentHelp(
            "The captions file: .vtt, .srt or .json; - for standard output. (default: standard output)",
            valueName: "out.vtt"
        )
    )
    var output = "-"

    @Option(
        help: ArgumentHelp(
            "The format, whatever the file's name: vtt, srt or json. (default: the file's extension; vtt on standard output)",
            valueName: "format"
        ),
        transform: { text in
            guard let format = CaptionFormat(rawValue: text.lowercased()) else {
                throw ValidationError("--format: \"\(text)\" is not vtt, srt or json")
            }
            return format
        }
    )
    var format: CaptionFormat?

    func validate() throws {
        if output != "-", format == nil, CaptionFormat(path: output) == nil {
            throw ValidationError(CaptionsCommand.extensionRule("-o", output))
        }
    }

    /// The one line a captions file of no known extension is refused with.
    static func extensionRule(_ option: String, _ path: String) -> String {
        "\(option): cannot write captions to \(path); the name must end in .vtt, .srt or .json (WebVTT, SubRip, a JSON transcript)"
    }

    func run() async throws {
        let (path, output, format) = (file, output, format)
        try await runCommand { _ in
            let timeline = try CaptionsFile.timeline(at: path)
            if let leftOut = Captions.leftOut(of: timeline) { Console.warning("\(path): \(leftOut)") }
            if output == "-" {
                Console.writeStandardOutput((format ?? .webVTT).data(of: timeline))
            } else {
                let written = try CaptionsFile.write(
                    timeline,
                    to: output,
                    format: CaptionsFile.format(of: output, chosen: format)
                )
                Console.printLines(written)
            }
        }
    }
}
