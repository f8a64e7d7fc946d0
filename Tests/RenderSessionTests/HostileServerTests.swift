import Foundation
import SessionKit
import TestSupport
import Testing

/// TTS servers that misbehave on purpose (issue 22, items 5, 6, 7, 12 and 15): each run of
/// `prepare` ends in one clear line, in bounded time, without a crash and without printing a secret.
@Suite("Hostile TTS servers", .serialized)
struct HostileServerTests {
    /// A script of one segment whose text is `text` (directives steer the test server).
    static func script(_ text: String, in folder: TemporaryFolder) throws -> String {
        let script: [String: Any] = [
            "id": "hostile", "category": "tests", "title": "Hostile", "subtitle": "", "orderIndex": 0,
            "durationSeconds": 20,
            "segments": [["id": "only", "startSeconds": 0, "phase": "opening", "text": text]],
        ]
        let path = folder.path("hostile.json")
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Runs `prepare` for one text against `url` and measures its wall time (from its start, not
    /// from the wait for its turn).
    static func prepare(
        _ text: String,
        provider: String = "proxy",
        url: URL,
        extra: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> (result: CommandResult, seconds: Double) {
        let folder = try TemporaryFolder()
        let arguments = [
            "prepare", try script(text, in: folder), "--cache", folder.path("c"), "--provider", provider,
            "--tts-url", url.absoluteString,
        ]
        var environment = environment
        environment["PATH"] = ProcessInfo.processInfo.environment["PATH"]
        if provider == "openai", environment["OPENAI_API_KEY"] == nil { environment["OPENAI_API_KEY"] = "sk-test" }
        let result = try await renderSession(arguments + extra, environment: environment)
        let elapsed = result.duration
        return (result, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
    }

    /// The `error:` lines of a run.
    static func errors(_ result: CommandResult) -> [String] {
        result.standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("error: ") }
    }

    // MARK: Item 5: the timeout covers the whole exchange

    @Test(
        "--timeout bounds the answer's body too: a stalled or trickled body fails in seconds, for both providers",
        arguments: ["proxy", "openai"],
        ["[stall-body=30]", "[trickle=0.5]"]
    )
    func bodyTimeout(provider: String, directive: String) async throws {
        let server = try await TTSServer()
        let (result, seconds) = try await Self.prepare(
            "\(directive) Breathe.",
            provider: provider,
            url: server.baseURL,
            extra: ["--timeout", "1"]
        )
        // Three tries of 1 s each and waits of 0.5 s and 1 s between them: about 4.5 s (a stalled
        // body held it for the whole 30 s stall before); the margin is for a loaded CI machine.
        #expect(seconds < 20, "took \(seconds) s")
        #expect(result.status == 1, "\(result.standardError)")
        let errors = Self.errors(result)
        #expect(errors.count == 1, "\(result.standardError)")
        let path = provider == "proxy" ? "tts/synthesize" : "v1/audio/speech"
        #expect(
            errors.first?.hasSuffix(
                "no answer within 1 s from \(server.baseURL.absoluteString)/\(path) (gave up after 3 tries)"
            ) == true,
            "\(errors)"
        )
    }

    // MARK: Item 6: numbers in headers are parsed with bounds

    @Test(
        "A hostile Retry-After is ignored (the backoff applies), never a crash",
        arguments: ["-inf", "-1e300", "nan", "1e300", "inf", "-1", "0.1", "1e3", "soon", "0x10"]
    )
    func hostileRetryAfter(value: String) async throws {
        let server = try await TTSServer()
        let (result, seconds) = try await Self.prepare(
            "[status=503][retry-after=\(value)] Breathe.",
            url: server.baseURL
        )
        #expect(result.status == 1, "exit \(result.status): \(result.standardError)")
        #expect(
            Self.errors(result).first?.hasSuffix("HTTP 503: upstream said 503 (gave up after 3 tries)") == true,
            "\(result.standardError)"
        )
        #expect(seconds < 10, "the backoff (0.5 s, 1 s) applies, took \(seconds) s")
    }

    @Test(
        "Off a terminal a slow prepare is never silent: a plain progress line every interval (no bar, no escapes), and each retry as it happens (issue 42, item 2)"
    )
    func progressOffTerminal() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let texts = ["[delay=1] One.", "[delay=1] Two.", "[status=503x1] Three."]
        let script: [String: Any] = [
            "id": "slow", "category": "tests", "title": "Slow", "subtitle": "", "orderIndex": 0,
            "durationSeconds": 60,
            "segments": texts.enumerated().map { index, text in
                ["id": "s\(index)", "startSeconds": index * 15, "phase": "opening", "text": text]
            },
        ]
        let path = folder.path("slow.json")
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: path))
        let result = try await renderSession(
            [
                "prepare", path, "--cache", folder.path("c"), "--provider", "proxy", "--tts-url",
                server.baseURL.absoluteString, "--jobs", "1",
            ],
            environment: [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
                "RENDER_SESSION_PROGRESS_SECONDS": "0.4",
            ]
        )
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n").map(String.init)
        let progress = lines.filter { $0.hasPrefix("progress: ") }
        #expect(progress.count >= 2, "2 s of waiting at 0.4 s a line: \(lines)")
        #expect(
            progress.allSatisfy {
                $0.wholeMatch(of: #/progress: [0-3]/3 clips to make, [0-9]+\.[0-9] clips/s, ETA ([0-9:.]+|\?)/#) != nil
            },
            "\(progress)"
        )
        #expect(
            !result.standardError.contains("\r") && !result.standardError.contains("\u{1B}"),
            "no bar off a terminal"
        )
        let retry = lines.filter { $0.contains("trying again") }
        #expect(retry.count == 1, "\(lines)")
        #expect(
            retry.first?.wholeMatch(
                of: #/warning: .*HTTP 503: upstream said 503; trying again in [0-9.]+ s \(try 2 of 3\)/#
            ) != nil,
            "\(retry)"
        )
        // Once the work is done, no more lines: the summary is the last.
        #expect(lines.last?.hasPrefix("Prepared") == true || lines.last?.contains("clip") == true, "\(lines)")
    }

    @Test(
        "A batch's log says each session as it ends; --log-format json makes every line of standard error one record: start, each clip made or failed, the retry, -v's stages per session, each session done, the summary (issue 42, item 2)"
    )
    func batchLog() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let texts = ["a": ["[status=503x1] One.", "Two."], "b": ["Three.", "[status=400] Broken."]]
        let scripts = folder.url.appendingPathComponent("scripts")
        try FileManager.default.createDirectory(at: scripts, withIntermediateDirectories: true)
        for (name, lines) in texts {
            let script: [String: Any] = [
                "id": name, "category": "tests", "title": name, "subtitle": "", "orderIndex": 0,
                "durationSeconds": 30,
                "segments": lines.enumerated().map { index, text in
                    ["id": "s\(index)", "startSeconds": index * 10, "phase": "opening", "text": text]
                },
            ]
            try JSONSerialization.data(withJSONObject: script).write(to: scripts.appendingPathComponent("\(name).json"))
        }
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", folder.path("c"), "--provider",
            "proxy", "--tts-url", server.baseURL.absoluteString, "--jobs", "1",
        ]
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let logged = try await renderSession(arguments + ["--log-format", "json", "-v"], environment: environment)
        #expect(logged.status == 1, "b lacks a clip: \(logged.standardError)")
        #expect(logged.standardOutput.isEmpty)
        let records = try logged.standardError.split(separator: "\n").map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                "every line is one JSON object: \(line)"
            )
        }
        for record in records {
            #expect(record["message"] is String && record["event"] is String, "\(record)")
            #expect(["info", "warning", "error"].contains(record["level"] as? String), "\(record)")
            let time = record["time"] as? String ?? ""
            #expect(time.wholeMatch(of: #/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/#) != nil, "\(time)")
        }
        func events(_ name: String) -> [[String: Any]] { records.filter { $0["event"] as? String == name } }
        #expect(records.first?["event"] as? String == "start")
        #expect(records.first?["command"] as? String == "batch")
        #expect(records.last?["event"] as? String == "summary")
        #expect(
            records.last?["rendered"] as? Int == 1 && records.last?["failed"] as? Int == 1,
            "\(records.last ?? [:])"
        )
        let made = events("clipMade")
        #expect(Set(made.compactMap { $0["text"] as? String }) == ["[status=503x1] One.", "Two.", "Three."])
        #expect(made.allSatisfy { ($0["key"] as? String)?.isEmpty == false && $0["seconds"] is Double })
        let failed = events("clipFailed")
        #expect(failed.count == 1 && failed.first?["level"] as? String == "warning", "\(failed)")
        #expect((failed.first?["message"] as? String)?.contains("HTTP 400") == true, "\(failed)")
        let retries = events("retry")
        #expect(retries.count == 1, "\(retries)")
        #expect(retries.first?["attempt"] as? Int == 2 && retries.first?["attempts"] as? Int == 3, "\(retries)")
        #expect((retries.first?["message"] as? String)?.contains("HTTP 503") == true, "\(retries)")
        let stages = events("stage").map { "\($0["stage"] ?? "") \($0["session"] ?? "-")" }
        #expect(stages == ["check -", "prepare -", "plan a", "render a", "sessions -"], "\(stages)")
        let done = events("sessionDone")
        #expect(done.map { $0["session"] as? String } == ["a", "b"])
        #expect(done.map { $0["result"] as? String } == ["rendered", "lacksClips"])
        #expect(done.first?["audio"] as? String == folder.path("out/a.wav"))
        #expect(done.map { $0["done"] as? Int } == [1, 2] && done.allSatisfy { $0["total"] as? Int == 2 })
        #expect(!events("error").isEmpty)

        // Again as text: a line per session as it ends, the finished one up to date.
        let text = try await renderSession(arguments, environment: environment)
        let lines = text.standardError.split(separator: "\n").map(String.init)
        #expect(lines.contains("a: up to date (1/2)"), "\(lines)")
        #expect(lines.contains("b: not rendered: 1 clip could not be had (listed at the end) (2/2)"), "\(lines)")
        #expect(!text.standardError.contains("{\""), "no JSON in a person's log")
    }

    // MARK: Item 7: secrets neither travel nor print

    @Test("A redirect to another port drops every user header; the first server saw them")
    func redirectDropsHeaders() async throws {
        let first = try await TTSServer()
        let second = try await TTSServer()
        let folder = try TemporaryFolder()
        let headerFile = folder.path("headers")
        try Data("# tokens\n\nX-From-File: file-secret\n".utf8).write(to: URL(fileURLWithPath: headerFile))
        for provider in ["proxy", "openai"] {
            let (result, _) = try await Self.prepare(
                "[redirect=\(second.baseURL.absoluteString)] Breathe \(provider).",
                provider: provider,
                url: first.baseURL,
                extra: ["--header", "X-Firebase-AppCheck: app-check-secret", "--header-file", headerFile],
                environment: ["RENDER_SESSION_HEADERS": "X-From-Env: env-secret", "OPENAI_API_KEY": "sk-secret"]
            )
            #expect(result.status == 0, "\(result.standardError)")
        }
        let seen = try await first.stats().requests
        #expect(seen.count == 2)
        #expect(
            seen.allSatisfy {
                $0.headers["x-firebase-appcheck"] == "app-check-secret" && $0.headers["x-from-file"] == "file-secret"
                    && $0.headers["x-from-env"] == "env-secret"
            },
            "\(seen.map(\.headers))"
        )
        #expect(seen.last?.headers["authorization"] == "Bearer sk-secret")
        let redirected = try await second.stats().requests
        #expect(redirected.count == 2, "both were redirected and answered")
        for request in redirected {
            for name in ["x-firebase-appcheck", "x-from-file", "x-from-env", "authorization"] {
                #expect(request.headers[name] == nil, "\(name) went to another port")
            }
            #expect(request.body["text"] != nil || request.body["input"] != nil, "307 keeps the body")
        }
    }

    @Test("A header or key with a control character is refused, naming the header and never its value")
    func controlCharactersInSecrets() async throws {
        let server = try await TTSServer()
        let flag = try await Self.prepare(
            "Breathe.",
            url: server.baseURL,
            extra: ["--header", "Authorization: Bearer sk-flag-secret\r"]
        )
        #expect(flag.result.status == 64, "\(flag.result.standardError)")
        #expect(flag.result.standardError.contains("--header: the value of header Authorization holds a control"))
        #expect(!flag.result.standardError.contains("sk-flag-secret"))

        let key = try await Self.prepare(
            "Breathe.",
            provider: "openai",
            url: server.baseURL,
            environment: ["OPENAI_API_KEY": "sk-key-secret\r"]
        )
        #expect(key.result.status == 1, "\(key.result.standardError)")
        #expect(key.result.standardError.contains("OPENAI_API_KEY holds a control character"))
        #expect(!key.result.standardError.contains("sk-key-secret"))

        let environment = try await Self.prepare(
            "Breathe.",
            url: server.baseURL,
            environment: ["RENDER_SESSION_HEADERS": "X-Ok: fine\nX-Token env-secret-no-colon"]
        )
        #expect(environment.result.status == 65)
        #expect(environment.result.standardError.contains("$RENDER_SESSION_HEADERS line 2: "))
        #expect(!environment.result.standardError.contains("env-secret"))

        let folder = try TemporaryFolder()
        try Data("X-Ok: fine\n# comment\nX-Bad: file-secret\u{0}\n".utf8)
            .write(to: URL(fileURLWithPath: folder.path("h")))
        let file = try await Self.prepare("Breathe.", url: server.baseURL, extra: ["--header-file", folder.path("h")])
        #expect(file.result.status == 65)
        #expect(
            Self.errors(file.result) == [
                "error: The header file \(folder.path("h")) line 3: the value of header X-Bad holds a control character (a line break, carriage return or NUL?)"
            ],
            "\(file.result.standardError)"
        )
        #expect(!file.result.standardError.contains("file-secret"))
        #expect(try await server.stats().count == 0, "nothing was sent")
    }

    @Test("Messages show a URL without its user name, password or query")
    func urlsRedacted() async throws {
        let (result, _) = try await Self.prepare(
            "Breathe.",
            url: URL(string: "http://url-user:url-password@127.0.0.1:9/base?key=query-secret")!
        )
        #expect(result.status == 1)
        #expect(
            Self.errors(result).first?.hasSuffix(
                "cannot reach http://127.0.0.1:9/base/tts/synthesize: Connection refused"
            )
                == true,
            "\(result.standardError)"
        )
        for secret in ["url-user", "url-password", "query-secret"] {
            #expect(!result.standardError.contains(secret), "\(secret) printed")
        }
        let bad = try await renderSession(["prepare", "Fixtures/scripts", "--tts-url", "ftp://u:url-password@host"])
        #expect(bad.status == 64)
        #expect(!bad.standardError.contains("url-password"))
    }

    // MARK: Item 12: server text is printed safely

    @Test("A server's error text is one printable line of bounded length", arguments: ["escape", "huge"])
    func serverText(body: String) async throws {
        let server = try await TTSServer()
        let (result, _) = try await Self.prepare("[error-body=\(body)] Breathe.", url: server.baseURL)
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 2, "the error and the summary: \(lines.count) lines")
        #expect(result.standardError.utf8.count < 1_500, "\(result.standardError.utf8.count) bytes")
        #expect(!result.standardError.unicodeScalars.contains { $0.value == 0x1B || (0x80...0x9F).contains($0.value) })
        if body == "escape" {
            #expect(
                Self.errors(result).first?.hasSuffix(
                    #"HTTP 400: quota \u{1b}[2J\u{1b}]0;owned\u{7} exceeded second line \u{9b}31m red"#
                ) == true,
                "\(result.standardError)"
            )
        } else {
            #expect(Self.errors(result).first?.contains("HTTP 400: xxxxxxxx") == true)
            #expect(Self.errors(result).first?.hasSuffix("…") == true)
        }
    }

    // MARK: Item 15: network errors name their cause

    @Test(
        "A server reached but misbehaving is not 'cannot reach': each message names the cause",
        arguments: [
            ("[reset=mid-body]", "broke off its answer: Connection reset by peer"),
            ("[close=mid-body]", "closed the connection in the middle of its answer"),
            ("[garbage=1]", "does not answer in HTTP (no HTTP status line)"),
        ]
    )
    func networkCauses(directive: String, cause: String) async throws {
        let server = try await TTSServer()
        let (result, _) = try await Self.prepare("\(directive) Breathe.", url: server.baseURL)
        #expect(result.status == 1)
        let errors = Self.errors(result)
        #expect(errors.count == 1, "\(result.standardError)")
        #expect(errors.first?.contains(cause) == true, "\(errors)")
        #expect(errors.first?.contains("cannot reach") == false)
    }

    @Test("An https URL on a server without TLS is a TLS failure, not 'cannot reach'")
    func tlsFailure() async throws {
        let server = try await TTSServer()
        let https = URL(string: server.baseURL.absoluteString.replacingOccurrences(of: "http:", with: "https:"))!
        let (result, _) = try await Self.prepare("Breathe.", url: https)
        #expect(result.status == 1)
        let errors = Self.errors(result)
        #expect(
            errors.first?.contains("the TLS connection to \(https.absoluteString)/tts/synthesize failed") == true,
            "\(errors)"
        )
        #expect(errors.first?.contains("cannot reach") == false)
    }
}
