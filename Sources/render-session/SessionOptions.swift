public import ArgumentParser
import Foundation
import SessionKit

/// Where clips are cached and which voice and speed they are spoken in: part of every clip's key.
struct ClipOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The clip cache folder. (default: $XDG_CACHE_HOME/render-session/tts, else ~/.cache/render-session/tts)",
        valueName: "dir"))
    var cache: String?

    @Option(help: ArgumentHelp(
        "The voice id; part of every clip's cache key. (default: espeak:en-us, or en-US-Chirp3-HD-Algenib with --provider proxy, alloy with --provider openai)",
        valueName: "id"))
    var voice: String?

    @Option(help: ArgumentHelp("The speaking speed, 0.25 to 4; part of every clip's cache key.", valueName: "x"))
    var speed: Double = 1.0

    var cacheDirectory: String { cache ?? ClipCache.defaultDirectory() }

    func voice(for provider: ProviderKind) -> String { voice ?? provider.defaultVoice }
}

/// Where missing clips come from.
struct ProviderOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Where missing clips come from: espeak (embedded, no network), proxy (the app backend's TTS proxy) or openai (an OpenAI-compatible speech server).", valueName: "name"))
    var provider: ProviderKind = .espeak

    @Option(name: .customLong("tts-url"), help: ArgumentHelp("The TTS server's base URL: the proxy's (required with --provider proxy), or an OpenAI-compatible server's. (default for openai: https://api.openai.com)", valueName: "url"))
    var ttsURL: String?

    @Option(name: .customLong("header"), help: ArgumentHelp("An extra HTTP header for the TTS server, 'Name: value'; repeatable (App Check, auth).", valueName: "header"))
    var headers: [String] = []

    @Option(name: .customLong("api-key-env"), help: ArgumentHelp("The environment variable holding the OpenAI API key.", valueName: "name"))
    var apiKeyVariable: String = "OPENAI_API_KEY"

    @Option(help: ArgumentHelp("The model an OpenAI-compatible server speaks with.", valueName: "name"))
    var model: String = "tts-1"

    @Option(help: ArgumentHelp("How long one request to a TTS server may take, in seconds.", valueName: "s"))
    var timeout: Double = 60

    func validate() throws {
        for header in headers where ProviderSettings.header(header) == nil {
            throw ValidationError("--header: \"\(header)\" is not 'Name: value'")
        }
        if let ttsURL {
            guard let url = URL(string: ttsURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--tts-url: \"\(ttsURL)\" is not an http or https URL")
            }
        }
        guard timeout.isFinite, timeout > 0, timeout <= 3_600 else {
            throw ValidationError("--timeout: \(timeout) is outside the range above 0 up to 3600 seconds")
        }
    }

    var settings: ProviderSettings {
        ProviderSettings(
            kind: provider,
            baseURL: ttsURL.flatMap(URL.init(string:)),
            headers: headers.compactMap(ProviderSettings.header),
            apiKeyVariable: apiKeyVariable,
            model: model,
            timeoutSeconds: timeout)
    }
}

/// The output's shape, shared by `render`, `timeline` and `batch`.
struct ShapeOptions: ParsableArguments {
    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("The output sample rate in hertz. (default: the rate of the first segment's clip)", valueName: "hz"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("The output channel count.", valueName: "n"))
    var channels: Int = 1

    @Option(help: ArgumentHelp("An audio file to use as the closing bell. (default: the built-in singing bowl)", valueName: "file"))
    var bell: String?

    @Flag(help: "Never synthesize: fail on a missing clip.")
    var offline = false

    @Flag(name: .customLong("allow-missing"), help: "Render anyway when a clip cannot be had, leaving its slot silent (with a warning).")
    var allowMissing = false
}

/// The options of one session, shared by `render` and `timeline`.
struct SessionOptions: ParsableArguments {
    @Argument(help: ArgumentHelp("The script JSON file.", valueName: "script"))
    var scriptPath: String

    @OptionGroup var clip: ClipOptions

    @Option(help: ArgumentHelp("The seed for the interjections' random choices. (default: a random seed, recorded in the timeline)", valueName: "n"))
    var seed: UInt64?

    @OptionGroup var shape: ShapeOptions

    @OptionGroup var source: ProviderOptions

    func validate() throws {
        try validateRenderOptions(renderOptions(clip: clip, shape: shape, source: source, seed: seed, sampleFormat: .pcm16))
    }

    /// Loads the script, fills the cache with its missing clips unless `--offline`, and plans it.
    func plan(sampleFormat: SampleFormat) async throws -> Timeline {
        let options = renderOptions(clip: clip, shape: shape, source: source, seed: seed, sampleFormat: sampleFormat)
        let script = try ScriptFile.load(scriptPath)
        if !shape.offline {
            try await CacheFilling.fill(texts: script.allTexts, options: options, source: source,
                                       onFailure: shape.allowMissing ? .warn : .fail, quietWhenCached: true)
        }
        return try SessionPlanner.plan(script: script, options: options, warn: Console.warning)
    }
}

/// The render settings the option groups describe.
func renderOptions(clip: ClipOptions, shape: ShapeOptions, source: ProviderOptions, seed: UInt64?, sampleFormat: SampleFormat) -> RenderOptions {
    RenderOptions(
        cacheDirectory: clip.cacheDirectory,
        voice: clip.voice(for: source.provider), speed: clip.speed, seed: seed, sampleRate: shape.sampleRate,
        channels: shape.channels, bellPath: shape.bell, sampleFormat: sampleFormat, allowMissing: shape.allowMissing)
}

/// Throws a usage error listing what is wrong with `options`.
func validateRenderOptions(_ options: RenderOptions) throws {
    let problems = options.problems
    if !problems.isEmpty { throw ValidationError(problems.joined(separator: "\n")) }
}

extension SampleFormat: ExpressibleByArgument {}
extension ProviderKind: ExpressibleByArgument {}
