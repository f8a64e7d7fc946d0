import ArgumentParser
import Foundation
import SessionKit

struct RenderCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a script into one WAV file.",
        discussion: """
            Prints the path of the written file on standard output; progress and a summary go to \
            standard error. The file appears only when complete.

            Example:
              render-session render Fixtures/scripts/evening-reset.json -o out/evening-reset.wav \\
                --cache Fixtures/cache --seed 7 --timeline out/evening-reset.timeline.json
            """
    )

    @OptionGroup var session: SessionOptions

    @Option(name: .shortAndLong, help: ArgumentHelp("The WAV file to write.", valueName: "out.wav"))
    var output: String

    @Option(help: ArgumentHelp("Also write the timeline JSON to this file.", valueName: "file.json"))
    var timeline: String?

    @Option(help: ArgumentHelp("The output sample format: s16, s24 or f32.", valueName: "format"))
    var format: SampleFormat = .pcm16

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        let clock = ContinuousClock()
        let started = clock.now
        try await reportingErrors {
            let plan = try await session.plan(sampleFormat: format)
            let progress = ProgressLine(total: plan.totalFrames.count) { done, total, _ in
                "\(Console.duration(Double(done) / Double(plan.sampleRate))) of \(Console.duration(Double(total) / Double(plan.sampleRate)))"
            }
            try SessionRenderer.render(plan, to: output, format: format, timelinePath: timeline) { progress.update($0.count) }
            progress.finish()
            let elapsed = clock.now - started
            let seconds = Double(plan.totalFrames.count) / Double(plan.sampleRate)
            Console.status("Rendered \(plan.scriptId): \(Console.duration(seconds)), \(plan.totalFrames) frames at \(plan.sampleRate) Hz, seed \(plan.seed), in \(Console.seconds(elapsed)) → \(output)")
        }
        print(output)
        if let timeline { print(timeline) }
    }
}

struct TimelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Print a script's timeline as JSON without rendering.",
        discussion: """
            Prints exactly the timeline that `render` with the same options and seed follows \
            (schema: docs/timeline.md). Without --seed, a random seed is drawn and recorded.

            Example:
              render-session timeline Fixtures/scripts/evening-reset.json --cache Fixtures/cache --seed 7
            """
    )

    @OptionGroup var session: SessionOptions

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        try await reportingErrors {
            let plan = try await session.plan(sampleFormat: .pcm16)
            Console.writeStandardOutput(TimelineJSON.encode(plan))
        }
    }
}

struct SilenceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "silence",
        abstract: "Write a 16-bit mono WAV file of silence.",
        discussion: """
            The file holds exactly round(seconds × rate) frames.

            Example:
              render-session silence --seconds 270 -o out/silence.wav
            """
    )

    @Option(help: ArgumentHelp("The length in seconds.", valueName: "s"))
    var seconds: Double

    @Option(name: .shortAndLong, help: ArgumentHelp("The WAV file to write.", valueName: "file.wav"))
    var output: String

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("The sample rate in hertz.", valueName: "hz"))
    var sampleRate: Int = 8_000

    func validate() throws {
        guard RenderOptions.sampleRateRange.contains(sampleRate) else {
            throw ValidationError("--sample-rate: \(sampleRate) Hz is outside \(RenderOptions.sampleRateRange.lowerBound)…\(RenderOptions.sampleRateRange.upperBound) Hz")
        }
        guard seconds.isFinite, seconds > 0, seconds <= ScriptRules.maximumDurationSeconds else {
            throw ValidationError("--seconds: \(seconds) is outside the range above 0 up to \(Int(ScriptRules.maximumDurationSeconds))")
        }
    }

    func run() async throws {
        Interruption.removeTemporaryFilesOnExit()
        try await reportingErrors {
            let rate = SampleRate(sampleRate)!
            let frames = rate.frames(atSeconds: seconds)!
            try SilenceFile.write(frameCount: frames, sampleRate: sampleRate, to: output)
            Console.status("Wrote \(frames) frames of silence at \(sampleRate) Hz → \(output)")
        }
        print(output)
    }
}

/// Runs `body`, printing a ``SessionError`` as one line per problem on standard error and
/// exiting with status 1.
func reportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as SessionError {
        if Interruption.isRequested {
            Console.status(SessionError.interrupted.description)
            throw ExitCode(Interruption.exitStatus)
        }
        for line in error.lines { Console.error(line) }
        throw ExitCode.failure
    } catch let exit as ExitCode where Interruption.isRequested && exit != .success {
        Console.status(SessionError.interrupted.description)
        throw ExitCode(Interruption.exitStatus)
    }
    if Interruption.isRequested {
        Console.status(SessionError.interrupted.description)
        throw ExitCode(Interruption.exitStatus)
    }
}

/// Exits with 128 + the signal if interrupted, else with status 1 if `failed`.
func exitIfFailed(_ failed: Bool) throws {
    if Interruption.isRequested { throw ExitCode(Interruption.exitStatus) }
    if failed { throw ExitCode.failure }
}
