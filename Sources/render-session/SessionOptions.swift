public import ArgumentParser
import SessionKit

/// The options that decide what a session sounds like, shared by `render` and `timeline`.
struct SessionOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The script JSON file.", valueName: "script"))
    var scriptPath: String

    @Option(name: .long, help: ArgumentHelp(
        "The clip cache folder. (default: $XDG_CACHE_HOME/render-session/tts, else ~/.cache/render-session/tts)",
        valueName: "dir"))
    var cache: String?

    @Option(help: ArgumentHelp("The voice id; part of every clip's cache key.", valueName: "id"))
    var voice: String = RenderOptions.defaultVoice

    @Option(help: ArgumentHelp("The speaking speed, 0.25 to 4; part of every clip's cache key.", valueName: "x"))
    var speed: Double = 1.0

    @Option(help: ArgumentHelp("The seed for the interjections' random choices. (default: a random seed, recorded in the timeline)", valueName: "n"))
    var seed: UInt64?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("The output sample rate in hertz. (default: the rate of the first segment's clip)", valueName: "hz"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("The output channel count.", valueName: "n"))
    var channels: Int = 1

    @Option(help: ArgumentHelp("An audio file to use as the closing bell. (default: the built-in singing bowl)", valueName: "file"))
    var bell: String?

    func validate() throws {
        let problems = renderOptions(sampleFormat: .pcm16).problems
        if !problems.isEmpty { throw ValidationError(problems.joined(separator: "\n")) }
    }

    func renderOptions(sampleFormat: SampleFormat) -> RenderOptions {
        RenderOptions(
            cacheDirectory: cache ?? ClipCache.defaultDirectory(),
            voice: voice, speed: speed, seed: seed, sampleRate: sampleRate, channels: channels,
            bellPath: bell, sampleFormat: sampleFormat)
    }
}

extension SampleFormat: ExpressibleByArgument {}
