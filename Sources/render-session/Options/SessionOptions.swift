public import ArgumentParser
import Foundation
public import SessionKit
public import SessionTimeline

/// Where clips are cached, how they are keyed, and which voice and speed they are spoken in.
struct ClipOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The clip cache folder. (default: $XDG_CACHE_HOME/render-session/tts, else ~/.cache/render-session/tts)",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var cache: String?

    @Option(
        name: .customLong("cache-key"),
        help: ArgumentHelp(
            "How clips are keyed: voice (SHA-256 of text, voice and speed) or text (the stretching app's layout: SHA-256 of the text alone, one voice per cache folder; voice and speed are not in the key, so clips made in another voice or speed are reused).",
            valueName: "voice|text"
        )
    )
    var cacheKey: CacheKeyScheme = .textVoiceSpeed

    @Option(
        help: ArgumentHelp(
            "The voice id; part of every clip's cache key unless --cache-key text. A script's own voice wins. (default: $RENDER_SESSION_VOICE, else espeak:en-us, or en-US-Chirp3-HD-Algenib with --provider proxy, alloy with --provider openai)",
            valueName: "id"
        ),
        completion: Completions.voice
    )
    var voice: String?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The speaking speed, 0.25 to 4; part of every clip's cache key unless --cache-key text.",
            valueName: "x"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a speed") }
    )
    var speed: Double = 1.0

    @Option(
        name: .customLong("sentence-pause"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Piper voices: the silence between sentences inside a clip, in seconds; part of the cache key when not the default. (default: \(SpeechPacing.defaultSentencePauseSeconds))",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a pause in seconds") }
    )
    var sentencePause: Double = SpeechPacing.defaultSentencePauseSeconds

    @Option(
        name: .customLong("paragraph-pause"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Piper voices: the silence between paragraphs (text parted by a blank line) inside a clip, in seconds; part of the cache key when not the default. (default: \(SpeechPacing.defaultParagraphPauseSeconds))",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a pause in seconds") }
    )
    var paragraphPause: Double = SpeechPacing.defaultParagraphPauseSeconds

    /// The environment variable that names the voice when `--voice` does not.
    static let voiceVariable = "RENDER_SESSION_VOICE"

    /// The voice asked for and where that came from: `--voice`, `$RENDER_SESSION_VOICE` or the
    /// provider's default. (A script's own voice wins over all three.)
    func voiceChoice(
        for provider: ProviderKind,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> (voice: Voice, origin: String) {
        if let voice { return (Voice(id: voice), "--voice") }
        if let named = environment[Self.voiceVariable], !named.isEmpty {
            return (Voice(id: named), "$\(Self.voiceVariable)")
        }
        return (provider.defaultVoice, "default")
    }

    func identity(for provider: ProviderKind) -> ClipIdentity {
        ClipIdentity(
            cacheFolder: cache ?? ClipCache.defaultDirectory(),
            voice: voiceChoice(for: provider).voice,
            speed: speed,
            keyScheme: cacheKey,
            pacing: SpeechPacing(sentencePauseSeconds: sentencePause, paragraphPauseSeconds: paragraphPause)
        )
    }
}

extension ClipOptions {
    /// What to do when `--offline` finds clips missing from the cache: the `prepare` that fills it
    /// for the scripts at `paths`, naming clips as the run that lacked them does.
    func offlineHint(for paths: [String]) -> String {
        let cache = self.cache.map { " --cache \($0)" } ?? ""
        let voice = self.voice.map { " --voice \($0)" } ?? ""
        let scheme = cacheKey == .textVoiceSpeed ? "" : " --cache-key \(cacheKey.rawValue)"
        return
            "The cache lacks these clips and --offline makes none: fill it with `render-session prepare \(paths.joined(separator: " "))\(cache)\(scheme)\(voice)`, or run without --offline"
    }
}

/// Where missing clips come from.
struct ProviderOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where missing clips come from: espeak (the voices on this machine: embedded eSpeak NG, and Piper for piper: voices), piper (the same, speaking piper:en_US-joe-medium unless --voice says otherwise), proxy (the app backend's TTS proxy) or openai (an OpenAI-compatible speech server).",
            valueName: "name"
        )
    )
    var provider: ProviderKind = .espeak

    @Option(
        name: .customLong("tts-url"),
        help: ArgumentHelp(
            "The TTS server's base URL: the proxy's (required with --provider proxy), or an OpenAI-compatible server's. (default for openai: https://api.openai.com)",
            valueName: "url"
        )
    )
    var ttsURL: String?

    @Option(
        name: .customLong("header"),
        help: ArgumentHelp(
            "An extra HTTP header for the TTS server, 'Name: value'; repeatable (App Check, auth).",
            valueName: "header"
        )
    )
    var headers: [String] = []

    @Option(
        name: .customLong("header-file"),
        help: ArgumentHelp(
            "A file of extra HTTP headers, one 'Name: value' a line (blank lines and # comments skipped), read before --header; repeatable. $\(ProviderSettings.headersVariable) may hold such lines too, read first.",
            valueName: "file"
        )
    )
    var headerFiles: [String] = []

    @Option(
        name: .customLong("api-key-env"),
        help: ArgumentHelp("The environment variable holding the OpenAI API key.", valueName: "name")
    )
    var apiKeyVariable: String = "OPENAI_API_KEY"

    @Option(help: ArgumentHelp("The model an OpenAI-compatible server speaks with.", valueName: "name"))
    var model: String = "tts-1"

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("How long one request to a TTS server may take, in seconds.", valueName: "s"),
        transform: { try Parse.number($0, as: Double.self, what: "a time in seconds") }
    )
    var timeout: Double = 60

    @OptionGroup var piper: PiperModelOptions

    @Option(
        name: .customLong("fallback-voice"),
        help: ArgumentHelp(
            "The voice to speak in when the one asked for cannot be had (a Piper engine or model missing), with a warning and recorded in the timeline; espeak is eSpeak NG in the asked voice's language. (default: none, so that is an error)",
            valueName: "voice|espeak"
        )
    )
    var fallbackVoice: String?

    /// The fallback voice, unless none was given (or `--no-fallback`, now the default, was).
    var fallback: FallbackVoice? {
        noFallback ? nil : fallbackVoice.map(FallbackVoice.init(id:))
    }

    /// What was once needed to make a missing voice an error, now the default; still accepted.
    @Flag(name: .customLong("no-fallback"), help: .hidden)
    var noFallback = false

    @Flag(
        help:
            "Transcribe every clip and check that the voice said its text; a clip that fails is synthesized again, at most twice, then fails (docs/speech-check.md)."
    )
    var checkSpeech = false

    @OptionGroup var speechCheckOptions: SpeechCheckOptions

    /// The speech check, if `--check-speech` asks for it.
    var speechCheck: SpeechCheck? { checkSpeech ? speechCheckOptions.check : nil }

    func validate() throws {
        if speechCheckOptions.speechModel != nil && !checkSpeech {
            throw ValidationError("--speech-model is the speech check's model; give --check-speech as well")
        }
        for header in headers {
            if let problem = ProviderSettings.headerProblem(header) { throw ValidationError("--header: \(problem)") }
        }
        if let ttsURL {
            guard let url = URL(string: ttsURL), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else {
                // Not echoed: a URL can carry a password or a key.
                throw ValidationError("--tts-url: the URL given is not an http or https URL with a host")
            }
        }
        if provider == .proxy && ttsURL == nil {
            throw ValidationError(
                "--provider proxy needs --tts-url, the backend's base URL (the part before /tts/synthesize)"
            )
        }
        guard timeout.isFinite, timeout > 0, timeout <= 3_600 else {
            throw ValidationError("--timeout: \(timeout) is outside the range above 0 up to 3600 seconds")
        }
    }

    /// The clip source these options describe: the provider, or offline.
    /// Each request to a TTS server that is tried again is a warning as it happens.
    func source(offline: Bool, jobs: Int? = nil) throws -> ClipSource {
        guard !offline else { return .offline }
        do {
            return .provider(try settings().makeProvider(retryNotice: Console.retried), jobs: jobs)
        } catch {
            // Printed as the commands' own errors are (this runs before their work starts).
            for line in error.flagLines { Console.error(line) }
            throw error.exitStatus
        }
    }

    /// The extra headers, in the order they apply (a later one replaces an earlier one of the
    /// same name): `$RENDER_SESSION_HEADERS`, each `--header-file`, each `--header`.
    func resolvedHeaders(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SessionError) -> [(name: String, value: String)] {
        var resolved: [(name: String, value: String)] = []
        if let lines = environment[ProviderSettings.headersVariable] {
            resolved += try ProviderSettings.headers(lines: lines, source: "$\(ProviderSettings.headersVariable)")
        }
        for file in headerFiles { resolved += try ProviderSettings.headers(file: file) }
        return resolved + headers.compactMap(ProviderSettings.header)
    }

    /// The provider settings these options describe (``validate()`` has made sure the proxy has
    /// its URL, and that a URL given is one).
    func settings() throws(SessionError) -> ProviderSettings {
        let url = ttsURL.flatMap(URL.init(string:))
        switch provider {
        case .espeak, .piper:
            return .local(piperModelFolders: piper.folders)
        case .proxy:
            guard let url else {
                throw SessionError(
                    .invalidSetting,
                    "The proxy provider needs the backend's base URL (the part before /tts/synthesize)"
                )
            }
            return .proxy(baseURL: url, http: try http())
        case .openai:
            return .openAI(
                baseURL: url ?? OpenAISpeechProvider.defaultBaseURL,
                model: model,
                apiKeyVariable: apiKeyVariable,
                http: try http()
            )
        }
    }

    /// How the speech server is talked to: the headers, and the time one request may take.
    private func http() throws(SessionError) -> HTTPSettings {
        HTTPSettings(headers: try resolvedHeaders(), timeoutSeconds: timeout)
    }
}

/// Where Piper models are looked for, for the commands that speak and for `voices`.
struct PiperModelOptions: ParsableArguments {
    @Option(
        name: .customLong("piper-models"),
        help: ArgumentHelp(
            "A folder of Piper voice models (NAME.onnx with NAME.onnx.json), searched instead of $RENDER_SESSION_PIPER_MODELS and the installed voice packages; repeatable.",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var piperModels: [String] = []

    /// The folders given, or `nil` for the default search path.
    var folders: [String]? { piperModels.isEmpty ? nil : piperModels }
}

/// What decides the plan besides the script, shared by `render`, `timeline` and `batch`.
struct PlanOptions: ParsableArguments {
    @Option(
        name: .customLong("sample-rate"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "The output sample rate in hertz, \(SampleRate.supported.lowerBound) to \(SampleRate.supported.upperBound). (default: the rate of the first segment's clip)",
            valueName: "hz"
        ),
        transform: { try Parse.sampleRate($0) }
    )
    var sampleRate: SampleRate?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("The output channel count, 1 to 8.", valueName: "n"),
        transform: { try Parse.number($0, as: Int.self, in: PlanSettings.channelCountRange, what: "a channel count") }
    )
    var channels: Int = 1

    @Flag(help: "Never synthesize: fail on a missing clip.")
    var offline = false

    @Flag(
        name: .customLong("allow-missing"),
        help: "Render anyway when a clip cannot be had, leaving its slot silent (with a warning)."
    )
    var allowMissing = false

    @Option(
        name: .customLong("max-late"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Fail, before rendering, when a clip starts more than this many seconds after its planned start (pushed by a long clip before it). (default: any lateness, reported in the summary)",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, in: 0...86_400, what: "a number of seconds") }
    )
    var maxLate: Double?

    @Option(
        help: ArgumentHelp(
            "The regions a stretching region file draws from, by id, comma-separated. (default: every region)",
            valueName: "ids"
        ),
        transform: { $0.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) } }
    )
    var regions: [String]?

    @Option(
        name: .customLong("per-region"),
        parsing: .unconditional,
        help: ArgumentHelp("How many stretches a region file draws from each region. (default: 1)", valueName: "n"),
        transform: { try Parse.number($0, as: Int.self, in: 1...1_000, what: "a count of stretches") }
    )
    var perRegion: Int?

    @Option(
        name: .customLong("stretch-seconds"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "How long a stretch lasts whose length the file does not give (a region file's never do). (default: 60)",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, in: 0.001...86_400, what: "a stretch's length in seconds") }
    )
    var stretchSeconds: Double?

    @OptionGroup(title: "Sound options")
    var sound: SoundOptions

    func settings(seed: UInt64?) -> PlanSettings {
        PlanSettings(
            seed: seed,
            sampleRate: sampleRate,
            channelCount: ChannelCount(channels) ?? .mono,
            sound: sound.settings,
            soundLibrary: sound.library,
            allowMissing: allowMissing,
            allowsMissingSounds: sound.allowMissingSounds,
            stretchRegions: regions,
            stretchesPerRegion: perRegion,
            stretchSeconds: stretchSeconds,
            maximumLateSeconds: maxLate
        )
    }
}

/// The seed option of `render` and `timeline`.
struct SeedOption: ParsableArguments {
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The seed for the interjections' random choices, 0 to 2^64 − 1. (default: a random seed, recorded in the timeline)",
            valueName: "n"
        ),
        transform: { try Parse.number($0, as: UInt64.self, what: "a seed") }
    )
    var seed: UInt64?
}

/// Whether existing outputs may be replaced (`-n`, as ffmpeg and sox say it; `-y`, ffmpeg's
/// word for the default, is accepted so that a command line written for ffmpeg works).
struct OverwriteOption: ParsableArguments {
    @Flag(
        name: [.customShort("n"), .customLong("no-overwrite")],
        help: "Fail, before any work, if an output file exists (outputs are replaced by default)."
    )
    var noOverwrite = false

    @Flag(
        name: [.customShort("y"), .customLong("overwrite")],
        help: "Replace existing outputs: the default, accepted as ffmpeg's -y is."
    )
    var overwrite = false

    func validate() throws {
        try Self.check(noOverwrite: noOverwrite, overwrite: overwrite)
    }

    /// Refuses `-n` with `-y`, which contradict each other.
    static func check(noOverwrite: Bool, overwrite: Bool) throws {
        if noOverwrite && overwrite { throw ValidationError("-n and -y contradict each other; give one") }
    }
}

/// Everything that makes a pipeline: the option groups of `render`, `timeline` and `batch`.
struct PipelineOptions {
    var clip: ClipOptions
    var plan: PlanOptions
    var source: ProviderOptions
    var seed: UInt64?
    var output: OutputSettings

    /// The settings the options describe, before a speech source is made: what ``validate()``
    /// checks is what ``pipeline(observer:)`` runs with.
    private var settings: SessionPipeline {
        SessionPipeline(clips: clip.identity(for: source.provider), plan: plan.settings(seed: seed), output: output)
    }

    /// The pipeline the options describe, telling the console what it does, its blocking work on `pool`.
    func pipeline(observer: PipelineObserver = Console.observer, pool: BlockingPool) throws -> SessionPipeline {
        var pipeline = settings
        pipeline.source = try source.source(offline: plan.offline)
        pipeline.observer = observer
        pipeline.fallbackVoice = source.fallback
        pipeline.speechCheck = source.speechCheck
        pipeline.pool = pool
        return pipeline
    }

    /// Throws a usage error naming, in flag terms, every setting that cannot be used.
    func validate() throws {
        let problems = settings.problems
        guard !problems.isEmpty else { return }
        throw ValidationError(problems.map(\.flagLine).joined(separator: "\n"))
    }

    /// The command-line name of a setting.
    static func flag(_ setting: SettingProblem.Setting) -> String {
        switch setting {
        case .voice: "--voice"
        case .speed: "--speed"
        case .sentencePause: "--sentence-pause"
        case .paragraphPause: "--paragraph-pause"
        case .sampleRate: "--sample-rate"
        case .channelCount: "--channels"
        case .sound(let field): SoundOptions.flag(field)
        case .audioOutput: "--output"
        case .timelineOutput: "--timeline"
        case .encoding: "--format"
        }
    }

    /// The flag of a setting a library message mentions (``SettingReference``).
    static func flag(_ setting: SettingReference) -> String {
        switch setting {
        case .bitrate: "--bitrate"
        case .quality: "--quality"
        case .format: "--format"
        case .noOverwrite: "-n/--no-overwrite"
        case .reencode: "--reencode"
        case .loudnessOff: "--loudness off"
        case .proxyProvider: "--provider proxy --tts-url"
        case .regions: "--regions"
        case .shard: "--shard"
        case .shards: "--shards N"
        case .allowMissingSounds: "--allow-missing-sounds"
        case .fallbackVoice: "--fallback-voice"
        case .stretchSeconds: "--stretch-seconds"
        case .renderedFile: "--audio"
        case .ambienceSound: "--ambience"
        case .startGongSound: "--start-gong"
        case .intervalGongSound: "--interval-gong"
        case .bellSound: "--bell"
        case .soundListing: "`render-session sounds`"
        }
    }
}

extension SessionError {
    /// The lines as the command prints them: settings named by their flags.
    var flagLines: [String] { lines(namingSettings: PipelineOptions.flag) }
}

extension SettingProblem {
    /// `--speed: 5.0 is outside 0.25…4.0`: the setting and the settings its rule mentions named by their flags.
    var flagLine: String { "\(PipelineOptions.flag(setting)): \(rule(namingSettings: PipelineOptions.flag))" }
}

/// Parsing option values so that a wrong one says what is allowed.
enum Parse {
    /// A number of type `T`, in `range` if given; `-1` for an unsigned one says its range too.
    static func number<T: LosslessStringConvertible & Comparable>(
        _ text: String,
        as type: T.Type,
        in range: ClosedRange<T>? = nil,
        what: String
    ) throws -> T {
        let allowed = range.map { "\($0.lowerBound) to \($0.upperBound)" }
        guard let value = T(text) else {
            if let unsigned = type as? any FixedWidthInteger.Type, !unsigned.isSigned {
                throw ValidationError("\(what) is a whole number from 0 to \(unsigned.max)")
            }
            throw ValidationError(
                "\(what) is \(T.self == Double.self ? "a number" : "a whole number")\(allowed.map { " from \($0)" } ?? "")"
            )
        }
        if let range, !range.contains(value) { throw ValidationError("\(text) is outside \(allowed ?? "")") }
        return value
    }

    /// A time in seconds, written `s`, `m:ss` or `h:mm:ss`, seconds with a fraction if wanted
    /// (`150`, `2:30`, `1:02:03.5`), as ffmpeg's `-ss` takes it; minutes and seconds under a
    /// larger unit are under 60.
    static func clockTime(_ text: String, what: String) throws -> Double {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        let rule = "\(what) is seconds, m:ss or h:mm:ss (150, 2:30, 1:02:03.5)"
        guard (1...3).contains(parts.count), let seconds = Double(parts[parts.count - 1]), seconds.isFinite else {
            throw ValidationError(rule)
        }
        guard parts.count > 1 else { return seconds }
        let units = try parts.dropLast().map { part in
            guard let value = Int(part), value >= 0 else { throw ValidationError(rule) }
            return value
        }
        guard seconds >= 0, seconds < 60, units.count == 1 || units[1] < 60 else { throw ValidationError(rule) }
        return units.reduce(0) { $0 * 60 + Double($1) } * 60 + seconds
    }

    /// A sample rate in hertz, within the accepted range.
    static func sampleRate(_ text: String) throws -> SampleRate {
        let range = SampleRate.supported
        guard let hertz = Int(text), let rate = SampleRate(hertz) else {
            throw ValidationError(
                "a sample rate is a whole number of hertz from \(range.lowerBound) to \(range.upperBound)"
            )
        }
        return rate
    }
}

extension SampleFormat: ExpressibleByArgument {}
extension ProviderKind: ExpressibleByArgument {}
extension CacheKeyScheme: ExpressibleByArgument {}
extension LoudnessAnchor: ExpressibleByArgument {}
