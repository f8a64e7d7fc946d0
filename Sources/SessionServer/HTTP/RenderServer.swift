internal import Crypto
internal import Foundation
internal import Hummingbird
internal import Logging
internal import NIOCore
internal import SessionKit
internal import SessionTimeline

/// `render-session serve`: sessions rendered to order over HTTP (docs/serve.md).
///
/// - `POST /v1/renders` renders a script with options, answering with the URLs of its files;
/// - `GET /v1/renders/ID.EXT`, `ID.timeline.json`, `ID.vtt` serve them, with byte ranges, a strong
///   `ETag` and `Cache-Control: immutable` (the bytes behind a URL never change);
/// - `GET /livez` says the process answers; `GET /readyz` checks the folders it writes.
///
/// Runs until SIGTERM or SIGINT, then stops accepting, lets what runs finish, and returns.
public enum RenderServer {
    /// Serves with `settings` until told to stop. `log` is given one JSON line per request;
    /// `listening` the address and port once the server accepts connections.
    public static func run(
        _ settings: ServerSettings,
        log: @escaping @Sendable (String) -> Void,
        listening: @escaping @Sendable (String, Int) -> Void
    ) async throws {
        let metrics = ServerMetrics()
        let service = RenderService(settings: settings, metrics: metrics)
        let router = Router(context: BasicRequestContext.self)
        router.add(middleware: RequestLog(log: log))
        router.get("livez") { _, _ in Self.json(.ok, ["status": "live"]) }
        router.get("readyz") { _, _ in Self.readiness(settings) }
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.text))
            )
        }
        router.get("openapi.json") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: OpenAPIDocument.json + "\n"))
            )
        }
        let token = BearerToken<BasicRequestContext>(token: settings.token, metrics: metrics)
        let renders = router.group("v1").add(middleware: token)
        renders.post("renders") { request, _ in
            try await Self.render(request, service: service, settings: settings, metrics: metrics)
        }
        let serveFile: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, context in
            try await ServedFile.response(
                to: request,
                name: context.parameters.get("name") ?? "",
                folder: settings.outputFolder,
                context: context
            )
        }
        renders.get("renders/:name", use: serveFile)
        renders.head("renders/:name", use: serveFile)
        router.group("tts").add(middleware: token).post("synthesize") { request, _ in
            try await SeedSpeech.synthesize(request, service: service, metrics: metrics)
        }
        var logger = Logger(label: "render-session.serve") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(settings.host, port: settings.port),
                serverName: "render-session/\(SessionKitVersion.current)"
            ),
            onServerRunning: { channel in
                listening(settings.host, channel.localAddress?.port ?? settings.port)
            },
            logger: logger
        )
        try await app.runService()
    }

    /// A request's body as read: its bytes, or the answer refusing it.
    enum Body {
        case read(Data)
        case refused(Response)
    }

    /// The body of `request`, at most `limit` bytes (said by `Content-Length` or found reading),
    /// else the 413 to answer with.
    static func body(
        of request: Request,
        limit: Int,
        metrics: ServerMetrics,
        tooLarge: (String) -> Response
    ) async throws -> Body {
        let refusal = "the body is larger than \(limit) bytes, the most this request may be"
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            metrics.countRejected("too_large")
            return .refused(tooLarge(refusal))
        }
        do {
            return .read(Data(try await request.body.collect(upTo: limit).readableBytesView))
        } catch is NIOTooManyBytesError {
            metrics.countRejected("too_large")
            return .refused(tooLarge(refusal))
        }
    }

    /// `POST /v1/renders`.
    private static func render(
        _ request: Request,
        service: RenderService,
        settings: ServerSettings,
        metrics: ServerMetrics
    ) async throws -> Response {
        let start = ContinuousClock.now
        let body: Data
        switch try await Self.body(
            of: request,
            limit: settings.maximumBodyBytes,
            metrics: metrics,
            tooLarge: {
                error(.contentTooLarge, [$0])
            }
        ) {
        case .read(let data): body = data
        case .refused(let response): return response
        }
        let parsed: RenderRequest
        do {
            parsed = try RenderRequest(body: body)
        } catch {
            metrics.countRender("failed")
            return Self.error(.unprocessableContent, error.lines)
        }
        let id = parsed.id(pipeline: settings.pipeline)
        let outcome: RenderService.Outcome
        do {
            outcome = try await service.render(parsed, id: id, deadline: settings.renderDeadline)
        } catch let refusal as RenderService.Refusal {
            switch refusal {
            case .busy:
                metrics.countRender("refused")
                var response = error(
                    .serviceUnavailable,
                    ["every render slot and place in the queue is taken; try again"]
                )
                response.headers[.retryAfter] = "5"
                return response
            case .failed(let lines, let status):
                metrics.countRender("failed")
                return error(HTTPResponse.Status(code: status), lines)
            case .timedOut(let deadline):
                metrics.countRender("timed_out")
                return error(
                    .serviceUnavailable,
                    [
                        "the render took longer than \(Self.seconds(deadline)) s, the most this server waits (--render-timeout)"
                    ]
                )
            }
        }
        metrics.countRender(outcome == .rendered ? "rendered" : "existing")
        if outcome == .rendered { metrics.recordRenderDuration(ContinuousClock.now - start) }
        let base = "/v1/renders/\(id)"
        var response = json(
            outcome == .rendered ? .created : .ok,
            [
                "id": id,
                "audio": "\(base).\(parsed.format.fileExtension)",
                "timeline": "\(base).timeline.json",
                "captions": "\(base).vtt",
            ]
        )
        response.headers[.location] = "\(base).\(parsed.format.fileExtension)"
        return response
    }

    /// `duration` in seconds as a person writes them: `300`, `0.5`.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration / .milliseconds(1)
        let whole = (milliseconds / 1_000).rounded(.down)
        return milliseconds == whole * 1_000 ? String(Int(whole)) : String(milliseconds.rounded() / 1_000)
    }

    /// `GET /readyz`: each folder the server writes takes a file; 503 naming each that does not.
    private static func readiness(_ settings: ServerSettings) -> Response {
        let folders = [("cache", settings.pipeline.clips.cacheFolder), ("output", settings.outputFolder)]
        var checks: [String: String] = [:]
        for (name, folder) in folders { checks[name] = writable(folder) ?? "ok" }
        let ready = checks.values.allSatisfy { $0 == "ok" }
        return json(ready ? .ok : .serviceUnavailable, Readiness(status: ready ? "ready" : "not ready", checks: checks))
    }

    /// What `/readyz` answers: `ready` or `not ready`, and each check's `ok` or why not.
    private struct Readiness: Encodable {
        var status: String
        var checks: [String: String]
    }

    /// `nil` if a file can be made in `folder` (made and removed), else why not.
    private static func writable(_ folder: String) -> String? {
        let probe = "\(folder)/.readyz-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: probe, contents: Data()) else {
            return "cannot create a file in \(folder)"
        }
        try? FileManager.default.removeItem(atPath: probe)
        return nil
    }

    /// A JSON answer.
    static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        var bytes = (try? SortedJSON.encode(value)) ?? Data("{}".utf8)
        bytes.append(0x0A)
        return Response(
            status: status,
            headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    /// An error as JSON: `{"error": {"status": 422, "message": "first line", "lines": [...]}}`.
    static func error(_ status: HTTPResponse.Status, _ lines: [String]) -> Response {
        json(
            status,
            ["error": ErrorBody(status: status.code, message: lines.first ?? status.reasonPhrase, lines: lines)]
        )
    }

    private struct ErrorBody: Encodable {
        var status: Int
        var message: String
        var lines: [String]
    }
}

/// Refuses a request without `Authorization: Bearer TOKEN` (401), comparing in constant time.
struct BearerToken<Context: RequestContext>: RouterMiddleware {
    /// The SHA-256 of the token, `nil` when none is asked for: digests are compared, so that the
    /// time taken says nothing of the token's length or its first differing byte.
    let digest: [UInt8]?
    let metrics: ServerMetrics

    init(token: String?, metrics: ServerMetrics) {
        digest = token.map { Array(SHA256.hash(data: Data($0.utf8))) }
        self.metrics = metrics
    }

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let digest else { return try await next(request, context) }
        let given = request.headers[.authorization] ?? ""
        let prefix = "Bearer "
        let token = given.hasPrefix(prefix) ? String(given.dropFirst(prefix.count)) : ""
        let offered = Array(SHA256.hash(data: Data(token.utf8)))
        let difference = zip(offered, digest).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) }
        guard difference == 0, given.hasPrefix(prefix) else {
            metrics.countRejected("unauthorized")
            var response = RenderServer.error(.unauthorized, ["this server needs Authorization: Bearer with its token"])
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return try await next(request, context)
    }
}

/// One JSON line per request: its id, method, path, status and time; never a header's value.
struct RequestLog<Context: RequestContext>: RouterMiddleware {
    let log: @Sendable (String) -> Void

    func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let id = request.headers[.init("X-Request-Id")!].map { String($0.prefix(64)) } ?? context.id
        var status = 500
        defer {
            let elapsed = ContinuousClock.now - start
            let milliseconds =
                Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
            let record = LogLine(
                time: Date().ISO8601Format(),
                requestId: id,
                method: request.method.rawValue,
                path: String(request.uri.path.prefix(256)),
                status: status,
                milliseconds: (milliseconds * 10).rounded() / 10
            )
            if let line = try? SortedJSON.encode(record) { log(String(decoding: line, as: UTF8.self)) }
        }
        do {
            var response = try await next(request, context)
            status = response.status.code
            response.headers[.init("X-Request-Id")!] = id
            return response
        } catch let error as any HTTPResponseError {
            status = error.status.code
            throw error
        }
    }

    private struct LogLine: Encodable {
        var time: String
        var requestId: String
        var method: String
        var path: String
        var status: Int
        var milliseconds: Double
    }
}
