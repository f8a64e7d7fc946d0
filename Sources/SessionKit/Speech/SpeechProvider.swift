public import Foundation
internal import SessionAudio
public import SessionTimeline

/// Something that speaks text: the embedded eSpeak NG voice, Piper, the app backend's TTS proxy,
/// or an OpenAI-compatible speech server. Whatever it returns is checked and stored in the clip
/// cache as MP3 under the clip's key, so a render never cares where a clip came from.
public protocol SpeechProvider: Sendable {
    /// The provider's name, as `--provider` takes it.
    var name: String { get }
    /// How many clips to synthesize at once unless `--jobs` says otherwise.
    var defaultJobs: Int { get }
    /// Speaks `request`: its audio (MP3 or AAC, gapless; the cache checks and keeps it) and,
    /// when the engine gives them, where its words and sentences are.
    func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult
    /// Refuses, before any work, a voice this provider cannot speak in (a typo, a model that is
    /// not installed), naming the nearest voices it has. The default refuses what names nothing
    /// whatever speaks it (``Voice``'s own rules, eSpeak NG's languages) and lets every other
    /// name through, for a server to judge.
    func checkVoice(_ voice: Voice) throws(SessionError)
    /// Gets `voice` ready before `concurrency` clips are synthesized at once (loads a model), so
    /// that a voice that cannot be had at all is found out once, not once per clip.
    /// - Throws: ``SessionError`` (`voiceUnavailable`) when the voice cannot be had; the default does nothing.
    func prepareVoice(_ voice: Voice, concurrency: Int) async throws(SessionError)
    /// Lets go of what ``prepareVoice(_:concurrency:)`` started (worker processes and their
    /// memory), once no more clips are wanted for now; the next clip starts them again. The
    /// default does nothing.
    func releaseVoices() async
}

extension SpeechProvider {
    public func checkVoice(_ voice: Voice) throws(SessionError) {
        try voice.check()
    }

    public func prepareVoice(_ voice: Voice, concurrency: Int) async throws(SessionError) {}

    public func releaseVoices() async {}
}

/// What a provider is asked to speak.
public struct SpeechRequest: Sendable, Equatable {
    /// The text, as the script gives it.
    public var text: String
    /// The voice.
    public var voice: Voice
    /// The speaking speed, 1.0 being the voice's normal speed.
    public var speed: Double
    /// The pauses inside the clip, for voices that apply them (Piper's); others pace speech themselves.
    public var pacing: SpeechPacing

    public init(text: String, voice: Voice, speed: Double = 1.0, pacing: SpeechPacing = .standard) {
        self.text = text
        self.voice = voice
        self.speed = speed
        self.pacing = pacing
    }
}

/// What a provider answers: the clip's audio, and where its words and sentences are when the
/// engine says so. A type that can grow (as swift-subprocess's `CollectedResult` does): a voice's
/// sample rate or a recognizer's verdict can be added without breaking a provider.
public struct SpeechResult: Sendable, Equatable {
    /// The encoded audio: MP3 (gapless, with LAME's tag) or AAC (MP4, CAF, ADTS), which the cache
    /// checks, decodes in full and stores as MP3.
    public var audio: Data
    /// Each word and sentence of the text at its frames in the decoded audio; `nil` when the
    /// engine gives none (a server), never invented.
    public var marks: SpeechMarks?
    /// Why an engine that can time words gave none for this clip (Piper without the `onnx`
    /// package, a sentence whose words could not be matched): said once, never guessed around.
    package var marksUnavailable: String?

    public init(audio: Data, marks: SpeechMarks? = nil) {
        self.audio = audio
        self.marks = marks
    }
}

/// The providers `--provider` chooses between.
package enum ProviderKind: String, Sendable, CaseIterable {
    /// The voices on this machine: eSpeak NG, embedded (no network, no setup), and Piper's
    /// neural voices for `piper:` voice ids.
    case espeak
    /// The same local voices, with a Piper voice as the default.
    case piper
    /// The app backend's TTS proxy: `POST {base}/tts/synthesize`.
    case proxy
    /// An OpenAI-compatible speech server: `POST {base}/v1/audio/speech`.
    case openai

    /// The voice used when `--voice` is not given.
    package var defaultVoice: Voice {
        switch self {
        case .espeak: .defaultVoice
        case .piper: .piperDefault
        case .proxy: .server(name: "en-US-Chirp3-HD-Algenib")
        case .openai: .server(name: "alloy")
        }
    }
}

/// How a speech server is talked to: the extra headers every request carries (App Check,
/// authorization), how long one exchange may take, and when a failed one is tried again.
package struct HTTPSettings: Sendable {
    /// Extra request headers, in the order they apply.
    package var headers: [(name: String, value: String)]
    /// How long one request may take, in seconds.
    package var timeoutSeconds: Double
    /// When and how often a failed request is tried again.
    package var retry: RetryPolicy
    /// Told of each try that failed and is tried again, as it happens (``HTTPTransport``).
    package var retryNotice: (@Sendable (RetryNotice) -> Void)?

    package init(
        headers: [(name: String, value: String)] = [],
        timeoutSeconds: Double = 60,
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.headers = headers
        self.timeoutSeconds = timeoutSeconds
        self.retry = retry
    }

    /// The transport these settings describe, once every header is known to be sendable.
    func transport() throws(SessionError) -> HTTPTransport {
        for header in headers {
            if let problem = ProviderSettings.headerProblem(name: header.name, value: header.value) {
                throw SessionError(.invalidSetting, problem)
            }
        }
        return HTTPTransport(headers: headers, timeoutSeconds: timeoutSeconds, retry: retry, retryNotice: retryNotice)
    }
}

/// Where missing clips are spoken, each provider with what it needs and nothing else.
package enum ProviderSettings: Sendable {
    /// The voices on this machine: eSpeak NG, and Piper's models found in `piperModelFolders`
    /// first (`--piper-models`; `nil` for the environment's and the installed voice packages,
    /// ``PiperInstallation``).
    case local(piperModelFolders: [String]? = nil)
    /// The app backend's TTS proxy at `baseURL` (the part before `/tts/synthesize`).
    case proxy(baseURL: URL, http: HTTPSettings = HTTPSettings())
    /// An OpenAI-compatible speech server at `baseURL`, speaking with `model`, its key read from
    /// the environment variable `apiKeyVariable` (never a flag: `ps` shows those).
    case openAI(
        baseURL: URL = OpenAISpeechProvider.defaultBaseURL,
        model: String = OpenAISpeechProvider.defaultModel,
        apiKeyVariable: String = OpenAISpeechProvider.defaultAPIKeyVariable,
        http: HTTPSettings = HTTPSettings()
    )

    /// The environment variable that may hold extra request headers, one `Name: value` a line,
    /// so that tokens need not appear in a command line (`ps` shows those).
    package static let headersVariable = "RENDER_SESSION_HEADERS"

    /// Parses a header given as `Name: value`; `nil` when it is not one (``headerProblem(_:)`` says why).
    package static func header(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard headerProblem(name: name, value: value) == nil else { return nil }
        return (name, value)
    }

    /// Why `text` is not a `Name: value` header, or `nil` when it is one. The message names the
    /// header's name at most, never its value (a token).
    package static func headerProblem(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else {
            return "a header is 'Name: value', and this one has no colon (its text is not shown)"
        }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        return headerProblem(name: name, value: value)
    }

    /// Why a header's name or value cannot be sent (RFC 9110: a name is a token; a value has no
    /// control character but tab), or `nil`. Names the header, never shows its value.
    package static func headerProblem(name: String, value: String) -> String? {
        let token = CharacterSet(
            charactersIn: "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        )
        guard !name.isEmpty else { return "a header has no name before its colon" }
        guard name.unicodeScalars.allSatisfy(token.contains) else {
            return "the header name \(quoted(name)) has characters a header name cannot have"
        }
        if value.unicodeScalars.contains(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            return "the value of header \(name) holds a control character (a line break, carriage return or NUL?)"
        }
        return nil
    }

    /// Parses headers given one a line, `Name: value`, as in a `--header-file` or
    /// ``headersVariable``; blank lines and lines starting with `#` are skipped.
    /// - Throws: ``SessionError`` (`invalidSetting`) naming `source` and the line number of the
    ///   first bad line, never its value.
    package static func headers(
        lines text: String,
        source: String
    ) throws(SessionError) -> [(name: String, value: String)] {
        var headers: [(name: String, value: String)] = []
        // "\r\n" is one Character in Swift: both it and "\n" end a line.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
        for (index, line) in lines.enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            if let problem = headerProblem(String(line)) {
                throw SessionError(.invalidSetting, "\(source) line \(index + 1): \(problem)")
            }
            if let header = header(String(line)) { headers.append(header) }
        }
        return headers
    }

    /// Reads headers from a file, one `Name: value` a line (as ``headers(lines:source:)``).
    /// - Throws: ``SessionError`` (`invalidSetting`) when the file cannot be read, is not a
    ///   regular file of UTF-8 text up to 1 MiB, or has a bad line (named by number, never shown).
    package static func headers(file path: String) throws(SessionError) -> [(name: String, value: String)] {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes else {
            throw SessionError(
                .invalidSetting,
                "Cannot read the header file \(path): \(FileProblem.describeUnreadable(path))"
            )
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw SessionError(.invalidSetting, "Cannot read the header file \(path): it is not a regular file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SessionError(
                .invalidSetting,
                "Cannot read the header file \(path): \(FileProblem.describe(error, path: path))",
                underlyingError: error
            )
        }
        guard data.count <= 1 << 20, let text = String(data: data, encoding: .utf8) else {
            throw SessionError(.invalidSetting, "The header file \(path) is not UTF-8 text of at most 1 MiB")
        }
        return try headers(lines: text, source: "The header file \(path)")
    }

    /// The provider these settings describe.
    /// - Throws: ``SessionError`` (`invalidSetting`) for a header that cannot be sent.
    /// - Parameter retryNotice: told of each request tried again, as it happens.
    package func makeProvider(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        retryNotice: (@Sendable (RetryNotice) -> Void)? = nil
    ) throws(SessionError) -> any SpeechProvider {
        switch self {
        case .local(let folders):
            return LocalSpeechProvider(
                piper: PiperSpeechProvider(installation: .located(modelFolders: folders, environment: environment))
            )
        case .proxy(let baseURL, var http):
            http.retryNotice = retryNotice
            return ProxySpeechProvider(baseURL: baseURL, transport: try http.transport())
        case .openAI(let baseURL, let model, let apiKeyVariable, var http):
            http.retryNotice = retryNotice
            return OpenAISpeechProvider(
                baseURL: baseURL,
                model: model,
                apiKey: .environment(apiKeyVariable, environment[apiKeyVariable]),
                transport: try http.transport()
            )
        }
    }
}

/// The embedded voice: eSpeak NG in-process, encoded to 64 kb/s MP3 with LAME.
///
/// Voices are ``Voice/espeak(language:)``, the language being any eSpeak voice (`en-us`,
/// `en-gb`, `de`, …); speed 1.0 is eSpeak's normal 175 words per minute.
public struct EmbeddedSpeechProvider: SpeechProvider {
    public let name = "espeak"
    /// Synthesis is serialized (eSpeak has global state), but encoding runs alongside.
    public var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    public init() {}

    public func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        guard case .espeak(let language) = request.voice, !language.isEmpty else {
            throw SessionError(
                .providerFailed,
                "the embedded voice takes voice ids like espeak:en-us, not \"\(request.voice.id)\""
            )
        }
        // eSpeak NG and LAME block for as long as the text takes: on a pool's thread (the
        // pipeline's, when it asks), never one of Swift's shared ones.
        return try await BlockingPool.currentOrShared.run { () throws(SessionError) in
            do throws(AudioError) {
                let speech = try EmbeddedVoice.speech(text: request.text, voice: language, speed: request.speed)
                var result = SpeechResult(audio: Data(speech.mp3), marks: speech.marks)
                if speech.marks == nil {
                    result.marksUnavailable =
                        "eSpeak NG voice \(request.voice) gives no word timing for some texts: its word events do not fit the text"
                }
                return result
            } catch {
                throw SessionError(.providerFailed, error.reason, underlyingError: error)
            }
        }
    }
}

/// The voices that run on this machine: Piper voices go to Piper, every other to the embedded
/// eSpeak NG voice (which names the voices it takes when given another).
package struct LocalSpeechProvider: SpeechProvider {
    package let name = "local"
    package let embedded = EmbeddedSpeechProvider()
    package let piper: PiperSpeechProvider

    package init(piper: PiperSpeechProvider = PiperSpeechProvider()) {
        self.piper = piper
    }

    /// One clip per core at once, for either engine.
    package var defaultJobs: Int { embedded.defaultJobs }

    /// ``Voice``'s own rules and eSpeak NG's languages, and for a Piper voice its model on the
    /// search path (Piper's default voice passes, installed or not: missing, it is unavailable,
    /// which a fallback voice may stand in for).
    package func checkVoice(_ voice: Voice) throws(SessionError) {
        try voice.check()
        if case .piper = voice { try piper.installation.checkModel(of: voice) }
    }

    package func prepareVoice(_ voice: Voice, concurrency: Int) async throws(SessionError) {
        if case .piper = voice { try await piper.prepareVoice(voice, concurrency: concurrency) }
    }

    package func releaseVoices() async {
        await piper.releaseVoices()
    }

    package func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        guard case .piper = request.voice else { return try await embedded.speak(request) }
        return try await piper.speak(request)
    }
}

/// The app backend's TTS proxy (the seed apps' contract):
/// `POST {base}/tts/synthesize` with `{"text": "…"}`, answered by
/// `{"success": true, "data": {"audio": "<base64 MP3>"}}`. The proxy chooses the voice and speed
/// itself; they still count in the cache key.
public struct ProxySpeechProvider: SpeechProvider {
    public let name = "proxy"
    public let defaultJobs = 4
    let baseURL: URL
    let transport: HTTPTransport

    init(baseURL: URL, transport: HTTPTransport) {
        self.baseURL = baseURL
        self.transport = transport
    }

    /// The proxy at `baseURL` (the part before `/tts/synthesize`), sending `headers` with every
    /// request (an App Check token, say), each exchange allowed `timeoutSeconds`; timeouts,
    /// HTTP 429 and 5xx are tried again, up to 3 tries.
    /// - Throws: ``SessionError`` (`invalidSetting`) for a header that cannot be sent (its name
    ///   is said, never its value).
    public init(
        baseURL: URL,
        headers: [(name: String, value: String)] = [],
        timeoutSeconds: Double = 60
    ) throws(SessionError) {
        self.init(
            baseURL: baseURL,
            transport: try HTTPSettings(headers: headers, timeoutSeconds: timeoutSeconds).transport()
        )
    }

    public func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        let body = (try? JSONEncoder().encode(["text": request.text])) ?? Data()
        let answer = try await transport.post(baseURL.appendingPathComponent("tts/synthesize"), json: body)
        return SpeechResult(audio: try Self.audio(inAnswer: answer))
    }

    /// The MP3 bytes in the proxy's answer `{"success": true, "data": {"audio": "<base64>"}}`.
    /// - Throws: ``SessionError`` (`providerFailed`) saying what the answer is instead.
    static func audio(inAnswer answer: Data) throws(SessionError) -> Data {
        struct Reply: Decodable {
            struct Payload: Decodable { let audio: String? }
            let success: Bool?
            let data: Payload?
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: answer) else {
            throw SessionError(.providerFailed, "the answer is not the proxy's JSON: \(HTTPTransport.excerpt(answer))")
        }
        guard reply.success == true else {
            throw SessionError(.providerFailed, "the proxy reports failure: \(HTTPTransport.errorText(answer))")
        }
        guard let encoded = reply.data?.audio else {
            throw SessionError(.providerFailed, "the answer has no data.audio")
        }
        guard let audio = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters), !audio.isEmpty else {
            throw SessionError(.providerFailed, "the answer's data.audio is not valid base64")
        }
        return audio
    }
}

/// An OpenAI-compatible speech server: `POST {base}/v1/audio/speech` with
/// `{"model", "input", "voice", "response_format": "mp3", "speed"}` and `Authorization: Bearer KEY`,
/// answered by the MP3 bytes.
public struct OpenAISpeechProvider: SpeechProvider {
    public let name = "openai"
    public let defaultJobs = 4
    /// OpenAI's own server.
    public static let defaultBaseURL = URL(string: "https://api.openai.com")!
    /// The model spoken with unless another is named.
    public static let defaultModel = "tts-1"
    /// The environment variable the command reads the key from unless told another.
    package static let defaultAPIKeyVariable = "OPENAI_API_KEY"

    /// Where the key came from, so that a missing or broken one is named as the user gave it.
    enum APIKey: Sendable {
        /// Read from this environment variable (`nil`: it holds nothing).
        case environment(String, String?)
        /// Given by the caller.
        case given(String?)

        var value: String? {
            switch self {
            case .environment(_, let value), .given(let value): value
            }
        }

        /// `the environment variable OPENAI_API_KEY` or `the API key given`.
        var source: String {
            switch self {
            case .environment(let name, _): "the environment variable \(name)"
            case .given: "the API key given"
            }
        }
    }

    let baseURL: URL
    let model: String
    let apiKey: APIKey
    let transport: HTTPTransport

    init(baseURL: URL, model: String, apiKey: APIKey, transport: HTTPTransport) {
        self.baseURL = baseURL
        self.model = model
        self.apiKey = apiKey
        self.transport = transport
    }

    /// The server at `baseURL` speaking with `model`, authorized by `apiKey`; `headers` go with
    /// every request, each exchange is allowed `timeoutSeconds`, and timeouts, HTTP 429 and 5xx
    /// are tried again, up to 3 tries.
    /// - Throws: ``SessionError`` (`invalidSetting`) for a header that cannot be sent.
    public init(
        baseURL: URL = Self.defaultBaseURL,
        model: String = Self.defaultModel,
        apiKey: String?,
        headers: [(name: String, value: String)] = [],
        timeoutSeconds: Double = 60
    ) throws(SessionError) {
        self.init(
            baseURL: baseURL,
            model: model,
            apiKey: .given(apiKey),
            transport: try HTTPSettings(headers: headers, timeoutSeconds: timeoutSeconds).transport()
        )
    }

    public func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
        guard let key = apiKey.value, !key.isEmpty else {
            let advice = if case .environment = apiKey { " (name another variable to read it from)" } else { "" }
            throw SessionError(.providerFailed, "\(apiKey.source) holds no API key\(advice)")
        }
        guard !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SessionError(
                .providerFailed,
                "the API key in \(apiKey.source) holds a control character (a line break or carriage return?)"
            )
        }
        struct Body: Encodable {
            let model: String
            let input: String
            let voice: String
            let response_format = "mp3"
            let speed: Double
        }
        let body = Body(model: model, input: request.text, voice: request.voice.id, speed: request.speed)
        let data = (try? JSONEncoder().encode(body)) ?? Data()
        let audio = try await transport.post(
            baseURL.appendingPathComponent("v1/audio/speech"),
            json: data,
            headers: [("Authorization", "Bearer \(key)")]
        )
        return SpeechResult(audio: audio)
    }
}
