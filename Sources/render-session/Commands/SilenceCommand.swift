import ArgumentParser
import SessionKit
import SessionTimeline

struct SilenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silence",
        abstract: "Write a mono file of silence: \(FormatNames.titles) (WAV 16-bit by default).",
        discussion: """
            The file holds exactly round(seconds × rate) frames. An existing file is replaced \
            unless -n is given; - writes to standard output.

            Example:
              render-session silence --seconds 270 -o out/silence.wav
            """
    )

    @OptionGroup var verbosity: VerbosityOptions

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
            "The file to write (\(FormatNames.extensions)); - for standard output.",
            valueName: "file.wav"
        )
    )
    var output: String

    @Option(
        name: .customLong("sample-rate"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "The sample rate in hertz, \(SampleRate.supported.lowerBound) to \(SampleRate.supported.upperBound). (default: 48000 for Opus, else 8000)",
            valueName: "hz"
        ),
        transform: { try Parse.sampleRate($0) }
    )
    var sampleRate: SampleRate?

    /// The settings the options describe: the rate a format needs (Opus's 48 kHz) unless one is given.
    private var pipeline: SessionPipeline {
        SessionPipeline(
            plan: PlanSettings(sampleRate: sampleRate),
            output: encoding.settings(audio: OutputDestination(argument: output))
        )
    }

    /// The rate written.
    private var rate: SampleRate { pipeline.sampleRate ?? 8_000 }

    /// ``pipeline`` at the rate written, whose settings are checked for it.
    private var checkedPipeline: SessionPipeline {
        var checked = pipeline
        checked.plan.sampleRate = rate
        return checked
    }

    @OptionGroup var encoding: EncodingOptions

    @OptionGroup var overwrite: OverwriteOption

    func validate() throws {
        guard seconds.isFinite, seconds > 0, seconds <= ScriptRules.maximumDurationSeconds else {
            throw ValidationError(
                "--seconds: \(seconds) is outside the range above 0 up to \(Int(ScriptRules.maximumDurationSeconds))"
            )
        }
        if let problem = checkedPipeline.problems.first { throw ValidationError(problem.flagLine) }
        try Console.refuseTerminal(output)
    }

    func run() async throws {
        let (seconds, rate, destination, replace, pipeline) = (
            seconds, self.rate, OutputDestination(argument: output), !overwrite.noOverwrite, checkedPipeline
        )
        try await runCommand { _ in
            let encoder = try pipeline.checkSettings()
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
