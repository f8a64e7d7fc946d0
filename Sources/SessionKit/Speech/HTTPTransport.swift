internal import AsyncHTTPClient
package import Foundation
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix
internal import SessionAudio
internal import SessionTimeline

/// When a failed request is tried again: up to `maximumAttempts` tries in all, waiting
/// `initialDelay × 2^(n−1)` seconds before try n + 1, or what the server's `Retry-After` asks
/// (at most `maximumDelay`).
package struct RetryPolicy: Sendable {
    package var maximumAttempts: Int
    package var initialDelay: Double
    package var maximumDelay: Double

    package init(maximumAttempts: Int = 3, initialDelay: Double = 0.5, maximumDelay: Double = 30) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// The wait before try `attempt + 1`, in seconds: the server's `Retry-After` if it gave a usable
    /// one, else the backoff; never below 0 or above `maximumDelay` (itself at most an hour).
    func delay(after attempt: Int, retryAfter: Double?) -> Double {
        let ceiling = maximumDelay.isFinite ? min(max(maximumDelay, 0), 3_600) : 3_600
        let backoff = initialDelay * pow(2, Double(min(max(attempt - 1, 0), 62)))
        let wanted = retryAfter ?? backoff
        guard wanted.isFinite else { return wanted.isNaN ? 0 : (wanted > 0 ? ceiling : 0) }
        return min(max(wanted, 0), ceiling)
    }
}

/// JSON over HTTP with a deadline for each whole exchange and retries for timeouts, 429 and 5xx.
///
/// Requests go through AsyncHTTPClient (SwiftNIO, TLS by BoringSSL built in), which links no
/// system HTTP library: a render that never synthesizes loads nothing it does not use.
/// Redirects are followed here, not by the client, so that the caller's headers (tokens, keys)
/// never go to another origin.
struct HTTPTransport: Sendable {
    let headers: [(name: String, value: String)]
    let timeoutSeconds: Double
    let retry: RetryPolicy
    /// Told of each failed try that is tried again, as it happens (a command's warnings), so
    /// that in a log a retry is never silent and a wait between tries never reads as a hang.
    var retryNotice: (@Sendable (RetryNotice) -> Void)? = nil

    /// The process's one client. A connection that cannot be made (refused, unknown host) fails
    /// the request at once instead of being retried until its deadline. It follows no redirect
    /// itself (``exchange(_:json:headers:deadline:)`` does).
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.redirectConfiguration = .disallow
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest answer accepted: a clip of a 5,000-character text is a few megabytes.
    static let maximumBodyBytes = 64 << 20

    /// How many redirects one try follows (as browsers and curl's usual limits go, fewer).
    static let maximumRedirects = 5

    /// Posts `json` to `url` and returns the body of a 2xx answer.
    func post(_ url: URL, json: Data, headers extra: [(String, String)] = []) async throws(SessionError) -> Data {
        let given = headers + extra.map { (name: $0.0, value: $0.1) }
        for header in given {
            if let problem = ProviderSettings.headerProblem(name: header.name, value: header.value) {
                throw SessionError(.invalidSetting, problem)
            }
        }
        var attempt = 1
        while true {
            let failure: TransportFailure
            do {
                return try await send(url, json: json, headers: given)
            } catch {
                failure = error
            }
            guard failure.error.isRetryable, attempt < retry.maximumAttempts, !Task.isCancelled else {
                let tries = attempt > 1 ? " (gave up after \(attempt) tries)" : ""
                throw SessionError(failure.error.code, failure.error.description + tries, underlyingError: failure)
            }
            let delay = retry.delay(after: attempt, retryAfter: failure.retryAfter)
            retryNotice?(
                RetryNotice(
                    reason: failure.error.lines[0],
                    delaySeconds: delay,
                    nextAttempt: attempt + 1,
                    maximumAttempts: retry.maximumAttempts
                )
            )
            try? await Task.sleep(for: .milliseconds(Int64((delay * 1_000).rounded())))
            attempt += 1
        }
    }

    /// How one try failed: the error it ends with (its underlying error the client's, when the
    /// client threw), and the wait the server asked for.
    struct TransportFailure: Error, CustomStringConvertible {
        let error: SessionError
        let retryAfter: Double?

        init(_ code: SessionError.Code, _ line: String, retryAfter: Double? = nil, cause: (any Error)? = nil) {
            error = SessionError(code, line, underlyingError: cause)
            self.retryAfter = retryAfter
        }

        var description: String { error.description }
    }

    /// What one exchange ended with: the last answer's status, its `Retry-After` and its body.
    private struct Answer: Sendable {
        let status: Int
        let retryAfter: String?
        let body: Data
    }

    /// One try: the whole exchange (redirects, answer head and body) must finish within the
    /// timeout. The client's own deadline covers the heads only, so the exchange races a timer
    /// and is cancelled when the timer wins.
    private func send(
        _ url: URL,
        json: Data,
        headers given: [(name: String, value: String)]
    ) async throws(TransportFailure) -> Data {
        let seconds = timeoutSeconds.isFinite ? min(max(timeoutSeconds, 0.001), 86_400) : 86_400
        let deadline = NIODeadline.now() + .milliseconds(Int64((seconds * 1_000).rounded()))
        let outcome: Result<Answer, TransportFailure>? = await withTaskGroup(
            of: Result<Answer, TransportFailure>?.self
        ) { group in
            group.addTask {
                do throws(TransportFailure) {
                    return .success(try await exchange(url, json: json, headers: given, deadline: deadline))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .milliseconds(Int64((seconds * 1_000).rounded())))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let outcome else {
            if Task.isCancelled { throw TransportFailure(.cancelled, SessionError.cancelled.description) }
            throw TransportFailure(
                .providerUnavailable,
                "no answer within \(formatSeconds(timeoutSeconds)) s from \(redacted(url))"
            )
        }
        let answer = try outcome.get()
        guard (200..<300).contains(answer.status) else {
            let retryable = answer.status == 429 || (500..<600).contains(answer.status)
            throw TransportFailure(
                retryable ? .providerUnavailable : .providerFailed,
                "HTTP \(answer.status): \(Self.errorText(answer.body))",
                retryAfter: answer.retryAfter.flatMap { Self.retryAfterSeconds($0) }
            )
        }
        return answer.body
    }

    /// The request and its redirects, up to the last answer's body. A redirect to another origin
    /// (scheme, host or port) drops every header the caller gave, for that hop and all after it.
    /// 301 and 302 turn a POST into a GET and 303 any method, as curl and browsers do; 307 and 308
    /// keep the method and body.
    private func exchange(
        _ url: URL,
        json: Data,
        headers given: [(name: String, value: String)],
        deadline: NIODeadline
    ) async throws(TransportFailure) -> Answer {
        var target = url
        var method = HTTPMethod.POST
        var body: Data? = json
        var sendsGivenHeaders = true
        var redirects = 0
        while true {
            var request = HTTPClientRequest(url: target.absoluteString)
            request.method = method
            request.headers.add(name: "User-Agent", value: "render-session/\(SessionKitVersion.current)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            if sendsGivenHeaders {
                for (name, value) in given { request.headers.replaceOrAdd(name: name, value: value) }
            }
            let response: HTTPClientResponse
            do {
                response = try await Self.client.execute(request, deadline: deadline)
            } catch {
                throw Self.failure(error, url: target, answered: false, timeout: timeoutSeconds)
            }
            let status = Int(response.status.code)
            if [301, 302, 303, 307, 308].contains(status), let location = response.headers.first(name: "Location") {
                guard let next = URL(string: location, relativeTo: target)?.absoluteURL,
                    ["http", "https"].contains(next.scheme?.lowercased() ?? ""), next.host != nil
                else {
                    throw TransportFailure(
                        .providerFailed,
                        "\(redacted(target)) redirects to \(quoted(location)), which is not an http or https URL"
                    )
                }
                guard redirects < Self.maximumRedirects else {
                    throw TransportFailure(
                        .providerFailed,
                        "\(redacted(url)) redirects more than \(Self.maximumRedirects) times (last to \(redacted(next)))"
                    )
                }
                redirects += 1
                if !Self.sameOrigin(target, next) { sendsGivenHeaders = false }
                if status == 303 || ((status == 301 || status == 302) && method == .POST) {
                    method = .GET
                    body = nil
                }
                target = next
                continue
            }
            let collected: ByteBuffer
            do {
                collected = try await response.body.collect(upTo: Self.maximumBodyBytes)
            } catch {
                throw Self.failure(error, url: target, answered: true, timeout: timeoutSeconds)
            }
            return Answer(
                status: status,
                retryAfter: response.headers.first(name: "Retry-After"),
                body: Data(collected.readableBytesView)
            )
        }
    }

    /// Whether two URLs have one origin: scheme, host and port (a missing port being the scheme's).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            return (scheme, url.host?.lowercased() ?? "", url.port ?? (scheme == "https" ? 443 : 80))
        }
        return origin(a) == origin(b)
    }

    /// A failed exchange in words that name its cause: no connection (`cannot reach`), TLS, an
    /// answer that is not HTTP, a connection closed or reset mid-answer, a timeout.
    private static func failure(
        _ error: any Error,
        url: URL,
        answered: Bool,
        timeout: Double
    ) -> TransportFailure {
        let place = redacted(url)
        if error is CancellationError || (error as? HTTPClientError) == .cancelled {
            return TransportFailure(.cancelled, SessionError.cancelled.description, cause: error)
        }
        if let error = error as? HTTPClientError {
            if error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
                return TransportFailure(
                    .providerUnavailable,
                    "no answer within \(formatSeconds(timeout)) s from \(place)",
                    cause: error
                )
            }
            if error == .remoteConnectionClosed {
                return TransportFailure(
                    .providerUnavailable,
                    answered
                        ? "\(place) closed the connection in the middle of its answer"
                        : "\(place) closed the connection without an answer",
                    cause: error
                )
            }
        }
        if error is NIOTooManyBytesError {
            return TransportFailure(
                .providerFailed,
                "\(place) answers with more than \(maximumBodyBytes >> 20) MiB, more than any clip",
                cause: error
            )
        }
        if let error = error as? HTTPParserError, answered, error == .invalidEOFState || error == .closedConnection {
            return TransportFailure(
                .providerUnavailable,
                "\(place) closed the connection in the middle of its answer",
                cause: error
            )
        }
        if let error = error as? HTTPParserError {
            return TransportFailure(
                .providerFailed,
                answered
                    ? "\(place) sent a broken HTTP answer body (\(parserProblem(error)))"
                    : "\(place) does not answer in HTTP (\(parserProblem(error)))",
                cause: error
            )
        }
        if let error = error as? IOError, case let system = SystemError(code: error.errnoCode),
            answered || system == .connectionReset || system == .brokenPipe
        {
            let cause = system.description
            return TransportFailure(
                .providerUnavailable,
                answered
                    ? "\(place) broke off its answer: \(cause)"
                    : "\(place) broke off the connection before answering: \(cause)",
                cause: error
            )
        }
        if String(reflecting: type(of: error)).hasPrefix("NIOSSL.") {
            let detail = printable(String(describing: error), limit: 200)
            return TransportFailure(
                .providerFailed,
                "the TLS connection to \(place) failed (no TLS there, or its certificate is not trusted): \(detail)",
                cause: error
            )
        }
        return TransportFailure(.providerFailed, "cannot reach \(place): \(describe(error))", cause: error)
    }

    /// An HTTP parser error in words.
    private static func parserProblem(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidVersion, .invalidConstant, .invalidStatus: "no HTTP status line"
        case .invalidEOFState, .closedConnection: "it ends before its length"
        case .headerOverflow: "its header is too large"
        case .invalidContentLength, .unexpectedContentLength: "a bad Content-Length"
        case .invalidChunkSize: "a bad chunk size"
        case .invalidHeaderToken, .invalidCharactersUsed, .lfExpected: "malformed header lines"
        default: "a malformed message"
        }
    }

    /// A network error in words: the system's message for a failed connection, else the error's
    /// own description. (Never `String(describing:)` of NIO's nested error values: reflecting
    /// over them costs seconds of conformance lookups in a statically linked binary.)
    static func describe(_ error: any Error) -> String {
        if let error = error as? NIOConnectionError {
            if let failure = error.connectionErrors.first, let io = failure.error as? IOError {
                return SystemError(code: io.errnoCode).description
            }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the host name cannot be resolved" }
            return "no connection to \(error.host):\(error.port)"
        }
        if let error = error as? IOError { return SystemError(code: error.errnoCode).description }
        // The short form: the long one can carry header values (`invalidHeaderFieldValues([…])`).
        if let error = error as? HTTPClientError { return error.shortDescription }
        return printable(error.localizedDescription, limit: 200)
    }

    /// The number of seconds a `Retry-After` value asks for, or `nil` when it is not one RFC 9110
    /// allows: delta-seconds (digits only; any count, so a huge one means "as long as allowed")
    /// or an HTTP-date (a past one meaning now). Signs, fractions, `inf`, `nan` and words are
    /// ignored, and the backoff applies.
    static func retryAfterSeconds(_ value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            return text.utf8.count > 9 ? 999_999_999 : Double(text)
        }
        for format in ["EEE, dd MMM yyyy HH:mm:ss 'GMT'", "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", "EEE MMM d HH:mm:ss yyyy"] {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return max(0, date.timeIntervalSince(now)) }
        }
        return nil
    }

    /// The server's own words for an error: `error.message` (or `error` as text) from a JSON
    /// body, else the start of the body; made printable and cut to a few hundred characters.
    static func errorText(_ body: Data) -> String {
        if body.count <= 1 << 20, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] {
            if let error = object["error"] as? [String: Any] {
                if let message = error["message"] as? String { return oneLine(message) }
                if let data = try? JSONSerialization.data(withJSONObject: error, options: [.sortedKeys]) {
                    return oneLine(String(decoding: data, as: UTF8.self))
                }
            }
            if let error = object["error"] as? String { return oneLine(error) }
            if let message = object["message"] as? String { return oneLine(message) }
        }
        return excerpt(body)
    }

    /// The first 200 characters of a body, on one line, printable.
    static func excerpt(_ body: Data) -> String {
        let text = oneLine(String(decoding: body.prefix(800), as: UTF8.self), limit: 200)
        return text.isEmpty ? "(empty body)" : text
    }

    /// Server text on one line: runs of white space as one space, control characters escaped,
    /// cut to `limit` characters.
    static func oneLine(_ text: some StringProtocol, limit: Int = 300) -> String {
        let start = text.prefix(limit * 4)
        let collapsed = start.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).joined(separator: " ")
        let shown = printable(collapsed, limit: limit)
        let cut = collapsed.count <= limit && !text.dropFirst(start.count).isEmpty
        return cut ? shown + "…" : shown
    }
}

/// A URL as messages show it: scheme, host, port and path; never a user name, password, query or
/// fragment, which may hold keys.
package func redacted(_ url: URL) -> String {
    guard let scheme = url.scheme, let host = url.host else { return "(a URL that is not http or https)" }
    var shown = "\(scheme.lowercased())://\(host.contains(":") ? "[\(host)]" : host)"
    if let port = url.port { shown += ":\(port)" }
    shown += url.path
    return printable(shown, limit: 200)
}

func formatSeconds(_ seconds: Double) -> String {
    seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int(seconds)) : String(seconds)
}

/// A request that failed and is tried again: why, how long until the next try, and which try
/// that is of how many.
package struct RetryNotice: Sendable, Equatable, CustomStringConvertible {
    /// The failure, in one line: `http://127.0.0.1:8080/speak: HTTP 503: upstream said 503`.
    package var reason: String
    package var delaySeconds: Double
    /// The try about to be made, counting from 1 (so at least 2).
    package var nextAttempt: Int
    package var maximumAttempts: Int

    /// `…: HTTP 503: upstream said 503; trying again in 0.5 s (try 2 of 3)`.
    package var description: String {
        let delay = delaySeconds.formatted(.number.precision(.fractionLength(0...1)))
        return "\(reason); trying again in \(delay) s (try \(nextAttempt) of \(maximumAttempts))"
    }
}
