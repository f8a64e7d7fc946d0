public import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Something that speaks text: the embedded eSpeak NG voice, Piper, the app backend's TTS proxy,
/// or an OpenAI-compatible speech server. Whatever it returns is checked and stored in the clip
/// cache as MP3 under the clip's key, so a render never cares where a clip came from.
public protocol SpeechProvider: Sendable {
    /// The provider's name, as `--provider` takes it.
    var name: String { get }
    /// How many clips to synthesize at once unless `--jobs` says otherwise.
    var defaultJobs: Int { get }
    /// Speaks `text` in `voice` at `speed` and returns the audio as MP3 bytes.
    func synthesize(text: String, voice: String, speed: Double) async throws(SessionError) -> Data
    /// Speaks `text` with `pacing`'s pauses inside it, for voices that apply them; the default
    /// ignores `pacing`.
    func synthesize(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing
    ) async throws(SessionError) -> Data
    /// Gets `voice` ready before `concurrency` clips are synthesized at once (loads a model), so
    /// that a voice that cannot be had at all is found out once, not once per clip.
    /// - Throws: ``SessionError`` (`voiceUnavailable`) when the voice cannot be had; the default does nothing.
    func prepareVoice(_ voice: String, concurrency: Int) async throws(SessionError)
    /// Lets go of what ``prepareVoice(_:concurrency:)`` started (worker processes and their
    /// memory), once no more clips are wanted for now; the next clip starts them again. The
    /// default does nothing.
    func releaseVoices() async
}

extension SpeechProvider {
    public func synthesize(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing
    ) async throws(SessionError) -> Data {
        try await synthesize(text: text, voice: voice, speed: speed)
    }

    public func prepareVoice(_ voice: String, concurrency: Int) async throws(SessionError) {}

    public func releaseVoices() async {}
}

/// A provider that applies ``SpeechPacing`` itself: it implements the paced `synthesize`, and the
/// plain one speaks with the default pauses.
public protocol PacedSpeechProvider: SpeechProvider {}

extension PacedSpeechProvider {
    public func synthesize(text: String, voice: String, speed: Double) async throws(SessionError) -> Data {
        try await synthesize(text: text, voice: voice, speed: speed, pacing: .standard)
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
    package var defaultVoice: String {
        switch self {
        case .espeak: "espeak:en-us"
        case .piper: PiperModel.defaultVoice
        case .proxy: "en-US-Chirp3-HD-Algenib"
        case .openai: "alloy"
        }
    }
}

/// How to reach and talk to a provider.
package struct ProviderSettings: Sendable {
    /// Which provider.
    package var kind: ProviderKind
    /// The server's base URL (proxy: required; OpenAI: default `https://api.openai.com`).
    package var baseURL: URL?
    /// Extra request headers, such as App Check or authorization tokens.
    package var headers: [(name: String, value: String)]
    /// The environment variable that holds the OpenAI API key.
    package var apiKeyVariable: String
    /// The OpenAI model.
    package var model: String
    /// The folders Piper models are looked for in first (`--piper-models`); `nil` for the
    /// environment's and the installed voice packages (``PiperInstallation``).
    package var piperModelFolders: [String]?
    /// How long one request may take, in seconds.
    package var timeoutSeconds: Double
    /// When and how often a failed request is tried again.
    package var retry: RetryPolicy

    package init(
        kind: ProviderKind = .espeak,
        baseURL: URL? = nil,
        headers: [(name: String, value: String)] = [],
        apiKeyVariable: String = "OPENAI_API_KEY",
        model: String = "tts-1",
        piperModelFolders: [String]? = nil,
        timeoutSeconds: Double = 60,
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.kind = kind
        self.baseURL = baseURL
        self.headers = headers
        self.apiKeyVariable = apiKeyVariable
        self.model = model
        self.piperModelFolders = piperModelFolders
        self.timeoutSeconds = timeoutSeconds
        self.retry = retry
    }

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
                "Cannot read the header file \(path): \(FileProblem.describe(error, path: path))"
            )
        }
        guard data.count <= 1 << 20, let text = String(data: data, encoding: .utf8) else {
            throw SessionError(.invalidSetting, "The header file \(path) is not UTF-8 text of at most 1 MiB")
        }
        return try headers(lines: text, source: "The header file \(path)")
    }

    /// The provider these settings describe.
    /// - Throws: ``SessionError`` when a needed setting is missing, such as the proxy's URL.
    package func makeProvider(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SessionError) -> any SpeechProvider {
        switch kind {
        case .espeak, .piper:
            return LocalSpeechProvider(
                piper: PiperSpeechProvider(
                    installation: .located(modelFolders: piperModelFolders, environment: environment)
                )
            )
        case .proxy:
            guard let baseURL else {
                throw SessionError(
                    .invalidSetting,
                    "The proxy provider needs the backend's base URL (the part before /tts/synthesize)"
                )
            }
            return ProxySpeechProvider(baseURL: baseURL, transport: try transport())
        case .openai:
            return OpenAISpeechProvider(
                baseURL: baseURL ?? URL(string: "https://api.openai.com")!,
                model: model,
                apiKey: environment[apiKeyVariable],
                apiKeyVariable: apiKeyVariable,
                transport: try transport()
            )
        }
    }

    /// The transport for the HTTP providers, once every header is known to be sendable.
    private func transport() throws(SessionError) -> HTTPTransport {
        for header in headers {
            if let problem = Self.headerProblem(name: header.name, value: header.value) {
                throw SessionError(.invalidSetting, problem)
            }
        }
        return HTTPTransport(headers: headers, timeoutSeconds: timeoutSeconds, retry: retry)
    }
}

/// The embedded voice: eSpeak NG in-process, encoded to 64 kb/s MP3 with LAME.
///
/// Voice ids are `espeak:NAME`, NAME being any eSpeak voice (`en-us`, `en-gb`, `de`, …);
/// speed 1.0 is eSpeak's normal 175 words per minute.
public struct EmbeddedSpeechProvider: SpeechProvider {
    public let name = "espeak"
    /// Synthesis is serialized (eSpeak has global state), but encoding runs alongside.
    public var defaultJobs: Int { max(1, ProcessInfo.processInfo.activeProcessorCount) }

    public init() {}

    public func synthesize(text: String, voice: String, speed: Double) async throws(SessionError) -> Data {
        guard voice.hasPrefix("espeak:"), voice.count > "espeak:".count else {
            throw SessionError(
                .providerFailed,
                "the embedded voice takes voice ids like espeak:en-us, not \"\(voice)\""
            )
        }
        do {
            return Data(
                try EmbeddedVoice.mp3(text: text, voice: String(voice.dropFirst("espeak:".count)), speed: speed)
            )
        } catch {
            throw SessionError(.providerFailed, error.reason, underlyingError: error)
        }
    }
}

/// The voices that run on this machine: `piper:` voice ids go to Piper, every other to the
/// embedded eSpeak NG voice (which names the voice ids it takes when given another).
package struct LocalSpeechProvider: PacedSpeechProvider {
    package let name = "local"
    package let embedded = EmbeddedSpeechProvider()
    package let piper: PiperSpeechProvider

    package init(piper: PiperSpeechProvider = PiperSpeechProvider()) {
        self.piper = piper
    }

    /// One clip per core at once, for either engine.
    package var defaultJobs: Int { embedded.defaultJobs }

    package func prepareVoice(_ voice: String, concurrency: Int) async throws(SessionError) {
        if PiperModel.isPiperVoice(voice) { try await piper.prepareVoice(voice, concurrency: concurrency) }
    }

    package func releaseVoices() async {
        await piper.releaseVoices()
    }

    package func synthesize(
        text: String,
        voice: String,
        speed: Double,
        pacing: SpeechPacing
    ) async throws(SessionError) -> Data {
        guard PiperModel.isPiperVoice(voice) else {
            return try await embedded.synthesize(text: text, voice: voice, speed: speed)
        }
        return try await piper.synthesize(text: text, voice: voice, speed: speed, pacing: pacing)
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

    public func synthesize(text: String, voice: String, speed: Double) async throws(SessionError) -> Data {
        let body = (try? JSONEncoder().encode(["text": text])) ?? Data()
        let answer = try await transport.post(baseURL.appendingPathComponent("tts/synthesize"), json: body)
        return try Self.audio(inAnswer: answer)
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
/// answered by the MP3 bytes. The key comes from an environment variable, never a flag.
public struct OpenAISpeechProvider: SpeechProvider {
    public let name = "openai"
    public let defaultJobs = 4
    let baseURL: URL
    let model: String
    let apiKey: String?
    let apiKeyVariable: String
    let transport: HTTPTransport

    public func synthesize(text: String, voice: String, speed: Double) async throws(SessionError) -> Data {
        guard let apiKey, !apiKey.isEmpty else {
            throw SessionError(
                .providerFailed,
                "the environment variable \(apiKeyVariable) holds no API key (name another variable to read it from)"
            )
        }
        guard !apiKey.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw SessionError(
                .providerFailed,
                "the API key in the environment variable \(apiKeyVariable) holds a control character (a line break or carriage return?)"
            )
        }
        struct Request: Encodable {
            let model: String
            let input: String
            let voice: String
            let response_format = "mp3"
            let speed: Double
        }
        let body = (try? JSONEncoder().encode(Request(model: model, input: text, voice: voice, speed: speed))) ?? Data()
        return try await transport.post(
            baseURL.appendingPathComponent("v1/audio/speech"),
            json: body,
            headers: [("Authorization", "Bearer \(apiKey)")]
        )
    }
}
