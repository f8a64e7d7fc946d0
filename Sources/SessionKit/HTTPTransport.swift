internal import AsyncHTTPClient
public import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

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
    func post(_ url: URL, json: Data, headers extra: [(String, String)] = []) async throws(SessionError) -> Data {
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
                throw SessionError(failure.error.code, failure.error.description + tries)
            }
            let backoff = retry.initialDelay * pow(2, Double(attempt - 1))
            let delay = min(retry.maximumDelay, failure.retryAfter ?? backoff)
            try? await Task.sleep(for: .milliseconds(Int(delay * 1_000)))
            attempt += 1
        }
    }

    private struct TransportFailure: Error {
        let error: SessionError
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
        } catch let error as HTTPClientError
            where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            throw TransportFailure(
                error: SessionError(
                    .providerUnavailable,
                    "no answer within \(formatSeconds(timeoutSeconds)) s from \(url.absoluteString)"
                ),
                retryAfter: nil
            )
        } catch let error as HTTPClientError where error == .remoteConnectionClosed {
            throw TransportFailure(
                error: SessionError(
                    .providerUnavailable,
                    "\(url.absoluteString) closed the connection without an answer"
                ),
                retryAfter: nil
            )
        } catch {
            throw TransportFailure(
                error: SessionError(.providerFailed, "cannot reach \(url.absoluteString): \(Self.describe(error))"),
                retryAfter: nil
            )
        }
        let data = Data(body.readableBytesView)
        guard (200..<300).contains(status) else {
            let retryable = status == 429 || (500..<600).contains(status)
            throw TransportFailure(
                error: SessionError(
                    retryable ? .providerUnavailable : .providerFailed,
                    "HTTP \(status): \(Self.errorText(data))"
                ),
                retryAfter: retryAfter.flatMap(Double.init)
            )
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
