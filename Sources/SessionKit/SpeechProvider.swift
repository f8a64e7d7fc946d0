public import Foundation
internal import AsyncHTTPClient
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import SessionAudio

/// Why a text could not be turned into speech.
public struct SpeechError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The cause, as a phrase: `HTTP 503: upstream overloaded`.
    public let reason: String
    /// Whether trying again may succeed (timeouts, HTTP 429 and 5xx).
    public let isRetryable: Bool

    public init(_ reason: String, isRetryable: Bool = false) {
        self.reason = reason
        self.isRetryable = isRetryable
    }

    public var description: String { reason }
}

/// Something that speaks text: the embedded eSpeak NG voice, the app backend's TTS proxy, or an
/// OpenAI-compatible speech server. Whatever it returns is checked and stored in the clip cache
/// as MP3 under the clip's key, so a render never cares where a clip came from.
public protocol SpeechProvider: Sendable {
    /// The provider's name, as `--provider` takes it.
    var name: String { get }
    /// How many clips to synthesize at once unless `--jobs` says otherwise.
    var defaultJobs: Int { get }
    /// Speaks `text` in `voice` at `speed` and returns the audio as MP3 bytes.
    func synthesize(text: String, voice: String, speed: Double) async throws(SpeechError) -> Data
}

/// The providers `--provider` chooses between.
public enum ProviderKind: String, Sendable, CaseIterable {
    /// eSpeak NG, embedded: no network, no setup.
    case espeak
    /// The app backend's TTS proxy: `POST {base}/tts/synthesize`.
    case proxy
    /// An OpenAI-compatible speech server: `POST {base}/v1/audio/speech`.
    case openai

    /// The voice used when `--voice` is not given.
    public var defaultVoice: String {
        switch self {
        case .espeak: "espeak:en-us"
        case .proxy: "en-US-Chirp3-HD-Algenib"
        case .openai: "alloy"
        }
    }
}

/// How to reach and talk to a provider.
public struct ProviderSettings: Sendable {
    /// Which provider.
    public var kind: ProviderKind
    /// The server's base URL (proxy: required; OpenAI: default `https://api.openai.com`).
    public var baseURL: URL?
    /// Extra request headers, such as App Check or authorization tokens.
    public var headers: [(name: String, value: String)]
    /// The environment variable that holds the OpenAI API key.
    public var apiKeyVariable: String
    /// The OpenAI model.
    public var model: String
    /// How long one request may take, in seconds.
    public var timeoutSeconds: Double
    /// When and how often a failed request is tried again.
    public var retry: RetryPolicy

    public init(
        kind: ProviderKind = .espeak,
        baseURL: URL? = nil,
        headers: [(name: String, value: String)] = [],
        apiKeyVariable: String = "OPENAI_API_KEY",
        model: String = "tts-1",
        timeoutSeconds: Double = 60,
        retry: RetryPolicy = RetryPolicy()
    ) {
        self.kind = kind
        self.baseURL = baseURL
        self.headers = headers
        self.apiKeyVariable = apiKeyVariable
        self.model = model
        self.timeoutSeconds = timeoutSeconds
        self.retry = retry
    }

    /// Parses a `--header` value, `Name: value`.
    public static func header(_ text: String) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let name = text[..<colon].trimmingCharacters(in: .whitespaces)
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        let token = CharacterSet(charactersIn: "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(token.contains) else { return nil }
        return (name, value)
    }

    /// The provider these settings describe.
    /// - Throws: ``SessionError`` when a needed setting is missing, such as the proxy's URL.
    public func makeProvider(environment: [String: String] = ProcessInfo.processInfo.environment) throws(SessionError) -> any SpeechProvider {
        switch kind {
        case .espeak:
            return EmbeddedSpeechProvider()
        case .proxy:
            guard let baseURL else {
                throw SessionError(.invalidOption, "--provider proxy needs --tts-url, the backend's base URL (the part before /tts/synthesize)")
            }
            return ProxySpeechProvider(baseURL: baseURL, transport: transport)
        case .openai:
            return OpenAISpeechProvider(baseURL: baseURL ?? URL(string: "https://api.openai.com")!, model: model,
                                        apiKey: environment[apiKeyVariable], apiKeyVariable: apiKeyVariable, transport: transport)
        }
    }

    private var transport: HTTPTransport {
        HTTPTransport(headers: headers, timeoutSeconds: timeoutSeconds, retry: retry)
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

    public func synthesize(text: String, voice: String, speed: Double) async throws(SpeechError) -> Data {
        guard voice.hasPrefix("espeak:"), voice.count > "espeak:".count else {
            throw SpeechError("the embedded voice takes voice ids like espeak:en-us, not \"\(voice)\"")
        }
        do {
            return Data(try EmbeddedVoice.mp3(text: text, voice: String(voice.dropFirst("espeak:".count)), speed: speed))
        } catch {
            throw SpeechError(error.reason)
        }
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

    public func synthesize(text: String, voice: String, speed: Double) async throws(SpeechError) -> Data {
        let body = (try? JSONEncoder().encode(["text": text])) ?? Data()
        let answer = try await transport.post(baseURL.appendingPathComponent("tts/synthesize"), json: body)
        struct Reply: Decodable {
            struct Payload: Decodable { let audio: String? }
            let success: Bool?
            let data: Payload?
        }
        guard let reply = try? JSONDecoder().decode(Reply.self, from: answer) else {
            throw SpeechError("the answer is not the proxy's JSON: \(HTTPTransport.excerpt(answer))")
        }
        guard reply.success == true else {
            throw SpeechError("the proxy reports failure: \(HTTPTransport.errorText(answer))")
        }
        guard let encoded = reply.data?.audio else {
            throw SpeechError("the answer has no data.audio")
        }
        guard let audio = Data(base64Encoded: encoded, options: .ignoreUnknownCharacters), !audio.isEmpty else {
            throw SpeechError("the answer's data.audio is not valid base64")
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

    public func synthesize(text: String, voice: String, speed: Double) async throws(SpeechError) -> Data {
        guard let apiKey, !apiKey.isEmpty else {
            throw SpeechError("the environment variable \(apiKeyVariable) holds no API key (choose another with --api-key-env)")
        }
        struct Request: Encodable {
            let model: String
            let input: String
            let voice: String
            let response_format = "mp3"
            let speed: Double
        }
        let body = (try? JSONEncoder().encode(Request(model: model, input: text, voice: voice, speed: speed))) ?? Data()
        return try await transport.post(baseURL.appendingPathComponent("v1/audio/speech"), json: body,
                                        headers: [("Authorization", "Bearer \(apiKey)")])
    }
}

/// When a failed request is tried again: up to `maximumAttempts` tries in all, waiting
/// `initialDelay × 2^(n−1)` seconds before try n + 1, or what the server's `Retry-After` asks
/// (at most `maximumDelay`).
public struct RetryPolicy: Sendable {
    public var maximumAttempts: Int
    public var initialDelay: Double
    public var maximumDelay: Double

    public init(maximumAttempts: Int = 3, initialDelay: Double = 0.5, maximumDelay: Double = 30) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }
}

/// JSON over HTTP with a per-request timeout and retries for timeouts, 429 and 5xx.
///
/// Requests go through AsyncHTTPClient (SwiftNIO, TLS by BoringSSL built in), which links no
/// system HTTP library: a render that never synthesizes loads nothing it does not use.
struct HTTPTransport: Sendable {
    let headers: [(name: String, value: String)]
    let timeoutSeconds: Double
    let retry: RetryPolicy

    /// The process's one client. A connection that cannot be made (refused, unknown host) fails
    /// the request at once instead of being retried until its deadline.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest answer accepted: a clip of a 5,000-character text is a few megabytes.
    static let maximumBodyBytes = 64 << 20

    /// Posts `json` to `url` and returns the body of a 2xx answer.
    func post(_ url: URL, json: Data, headers extra: [(String, String)] = []) async throws(SpeechError) -> Data {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "render-session/\(SessionKitVersion.current)")
        for (name, value) in headers + extra.map({ (name: $0.0, value: $0.1) }) {
            request.headers.replaceOrAdd(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: json))
        var attempt = 1
        while true {
            let failure: TransportFailure
            do {
                return try await send(request, url: url)
            } catch {
                failure = error
            }
            guard failure.error.isRetryable, attempt < retry.maximumAttempts else {
                let tries = attempt > 1 ? " (gave up after \(attempt) tries)" : ""
                throw SpeechError(failure.error.reason + tries, isRetryable: failure.error.isRetryable)
            }
            let backoff = retry.initialDelay * pow(2, Double(attempt - 1))
            let delay = min(retry.maximumDelay, failure.retryAfter ?? backoff)
            try? await Task.sleep(for: .milliseconds(Int(delay * 1_000)))
            attempt += 1
        }
    }

    private struct TransportFailure: Error {
        let error: SpeechError
        let retryAfter: Double?
    }

    /// One try: the whole exchange, answer body included, must finish within the timeout.
    private func send(_ request: HTTPClientRequest, url: URL) async throws(TransportFailure) -> Data {
        let deadline = NIODeadline.now() + .milliseconds(Int64(timeoutSeconds * 1_000))
        let status: Int
        let retryAfter: String?
        let body: ByteBuffer
        do {
            let response = try await Self.client.execute(request, deadline: deadline)
            status = Int(response.status.code)
            retryAfter = response.headers.first(name: "Retry-After")
            body = try await response.body.collect(upTo: Self.maximumBodyBytes)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            throw TransportFailure(error: SpeechError("no answer within \(formatSeconds(timeoutSeconds)) s from \(url.absoluteString)", isRetryable: true), retryAfter: nil)
        } catch let error as HTTPClientError where error == .remoteConnectionClosed {
            throw TransportFailure(error: SpeechError("\(url.absoluteString) closed the connection without an answer", isRetryable: true), retryAfter: nil)
        } catch {
            throw TransportFailure(error: SpeechError("cannot reach \(url.absoluteString): \(Self.describe(error))"), retryAfter: nil)
        }
        let data = Data(body.readableBytesView)
        guard (200..<300).contains(status) else {
            let retryable = status == 429 || (500..<600).contains(status)
            throw TransportFailure(error: SpeechError("HTTP \(status): \(Self.errorText(data))", isRetryable: retryable),
                                   retryAfter: retryAfter.flatMap(Double.init))
        }
        return data
    }

    /// A network error in words: the system's message for a failed connection, else the error's
    /// own description. (Never `String(describing:)` of NIO's nested error values: reflecting
    /// over them costs seconds of conformance lookups in a statically linked binary.)
    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let failure = error.connectionErrors.first, let io = failure.error as? IOError {
                return String(cString: strerror(io.errnoCode))
            }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name cannot be resolved" }
            return "no connection to \(error.host):\(error.port)"
        }
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        if let error = error as? HTTPClientError { return error.description }
        return error.localizedDescription
    }

    /// The server's own words for an error: `error.message` (or `error` as text) from a JSON
    /// body, else the start of the body.
    static func errorText(_ body: Data) -> String {
        if let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let error = object["error"] as? [String: Any] {
                if let message = error["message"] as? String { return message }
                if let data = try? JSONSerialization.data(withJSONObject: error, options: [.sortedKeys]) {
                    return String(decoding: data, as: UTF8.self)
                }
            }
            if let error = object["error"] as? String { return error }
            if let message = object["message"] as? String { return message }
        }
        return excerpt(body)
    }

    /// The first 200 characters of a body, on one line.
    static func excerpt(_ body: Data) -> String {
        let text = String(decoding: body.prefix(400), as: UTF8.self)
            .replacingOccurrences(of: "\\s+", with: " ", options: .regularExpression)
            .trimmingCharacters(in: .whitespaces)
        if text.isEmpty { return "(empty body)" }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}

func formatSeconds(_ seconds: Double) -> String {
    seconds.rounded() == seconds ? String(Int(seconds)) : String(seconds)
}
