import ArgumentParser
import SessionKit
import SessionTimeline

struct SilenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silence",
        abstract: "Write a mono file of silence: WAV (16-bit by default), FLAC, MP3, Opus or Ogg Vorbis.",
        discussion: """
            The file holds exactly round(seconds × rate) frames. An existing file is replaced \
            unless -n is given; - writes to standard output.

            Example:
              render-session silence --seconds 270 -o out/silence.wav
            """
    )

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The length in seconds, above 0 up to \(Int(ScriptRules.maximumDurationSeconds)).",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a length in seconds") }
    )
    var seconds: Double

    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The file to write (.wav, .flac, .mp3, .opus, .ogg); - for standard output.",
            valueName: "file.wav"
        )
    )
    var output: String

    @Option(
        name: .customLong("sample-rate"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "The sample rate in hertz, \(SampleRate.supported.lowerBound) to \(SampleRate.supported.upperBound).",
            valueName: "hz"
        ),
        transform: { try Parse.sampleRate($0) }
    )
    var sampleRate: SampleRate = 8_000

    @OptionGroup var encoding: EncodingOptions

    @OptionGroup var overwrite: OverwriteOption

    func validate() throws {
        guard seconds.isFinite, seconds > 0, seconds <= ScriptRules.maximumDurationSeconds else {
            throw ValidationError(
                "--seconds: \(seconds) is outside the range above 0 up to \(Int(ScriptRules.maximumDurationSeconds))"
            )
        }
        if let problem = SessionPipeline(output: encoding.settings(audio: OutputDestination(argument: output))).problems
            .first
        {
            throw ValidationError(problem.flagLine)
        }
    }

    func run() async throws {
        let (seconds, rate, destination, replace) = (
            seconds, sampleRate, OutputDestination(argument: output), !overwrite.noOverwrite
        )
        let encoder = encoding.settings(audio: destination).encoder
        try await runCommand {
            let frames = rate.frames(atSeconds: seconds)!
            try SilenceFile.write(
                frameCount: frames,
                sampleRate: rate,
                to: destination,
                encoder: encoder,
                replaceExisting: replace
            )
            Console.status("Wrote \(frames) frames of silence at \(rate) → \(destination)")
            Console.printWritten([destination])
        }
    }
}
