import Foundation
import SessionTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `render-session serve` run as users run it, on 127.0.0.1, answered by real clients: curl for
/// every status, ffmpeg reading and seeking in a served file (issue 44).
@Suite("render-session serve, with curl and ffmpeg on 127.0.0.1", .serialized)
struct ServeTests {
    /// A port nothing listens on now: one the kernel gives a socket bound to port 0, released.
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(socket >= 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        try #require(bound)
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// An answer as curl saw it.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    /// Asks `url` with curl (`arguments` before it), and reads the status line, headers and body.
    static func curl(_ url: String, _ arguments: [String] = []) async throws -> Answer {
        let result = try await ChildProcess.run("/usr/bin/curl", ["-s", "-i", "--max-time", "120"] + arguments + [url])
        #expect(result.termination == .exited(0), "curl \(url): \(result.standardErrorText)")
        let bytes = result.standardOutput
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        let split = try #require(bytes.firstRange(of: separator), "curl printed no header block")
        let head = String(decoding: bytes[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let status = Int(head[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces
            )
        }
        return Answer(status: status, headers: headers, body: Array(bytes[split.upperBound...]))
    }

    /// Runs `serve` with `arguments` on a free port, calls `body` with its base URL once `/livez`
    /// answers, then stops it with SIGTERM; returns how it ended and what it printed.
    static func serving(
        _ arguments: [String],
        _ body: (String) async throws -> Void
    ) async throws -> CommandResult {
        let port = try freePort()
        let base = "http://127.0.0.1:\(port)"
        let (result, _) = try await renderSession(["serve", "--port", String(port)] + arguments) { running in
            var live = false
            for _ in 0..<200 where !live {
                let probe = try await ChildProcess.run("/usr/bin/curl", ["-s", "-o", "/dev/null", "\(base)/livez"])
                live = probe.termination == .exited(0)
                if !live { try await Task.sleep(for: .milliseconds(100)) }
            }
            try #require(live, "the server did not answer /livez within 20 s")
            try await body(base)
            try running.send(SIGTERM)
        }
        return result
    }

    static let script = Repository.root.appendingPathComponent("Fixtures/scripts/ten-minute-session.json")

    /// A render request's body for the fixture script with `options`.
    static func request(_ options: String) throws -> String {
        let script = try String(contentsOf: Self.script, encoding: .utf8)
        return "{\"script\": \(script), \"options\": \(options)}"
    }

    @Test(
        "POST renders once (201, then 200 with the same URLs); GET serves the bytes with ranges, a strong ETag and immutable caching; ffmpeg reads the URL exact"
    )
    func renderAndServe() async throws {
        let folder = try TemporaryFolder()
        let out = folder.path("renders")
        let body = folder.path("request.json")
        try Self.request(#"{"format": "mp3", "seed": 7}"#).write(toFile: body, atomically: true, encoding: .utf8)
        let result = try await Self.serving(["--cache", "Fixtures/cache", "--offline", "--out", out]) { base in
            let ready = try await Self.curl("\(base)/readyz")
            #expect(ready.status == 200)
            #expect(ready.text == #"{"checks":{"cache":"ok","output":"ok"},"status":"ready"}"# + "\n")

            let made = try await Self.curl("\(base)/v1/renders", ["-X", "POST", "--data-binary", "@\(body)"])
            #expect(made.status == 201, "\(made.text)")
            let urls = try JSONDecoder().decode([String: String].self, from: Data(made.body))
            let id = try #require(urls["id"])
            #expect(id.count == 32)
            #expect(urls["audio"] == "/v1/renders/\(id).mp3")
            #expect(made.header("Location") == "/v1/renders/\(id).mp3")
            let again = try await Self.curl("\(base)/v1/renders", ["-X", "POST", "--data-binary", "@\(body)"])
            #expect(again.status == 200)
            #expect(again.body == made.body, "the same request is the same URL")

            let timeline = try JSONDecoder().decode(
                Timeline.self,
                from: Data(try await Self.curl(base + urls["timeline"]!).body)
            )
            let onDisk = try [UInt8](Data(contentsOf: URL(fileURLWithPath: "\(out)/\(id).mp3")))
            let whole = try await Self.curl(base + urls["audio"]!)
            #expect(whole.status == 200)
            #expect(whole.body == onDisk)
            #expect(whole.header("Content-Type") == "audio/mpeg")
            #expect(whole.header("Accept-Ranges") == "bytes")
            #expect(whole.header("ETag") == "\"\(id).mp3\"")
            #expect(whole.header("Cache-Control") == "public, max-age=31536000, immutable")
            #expect(timeline.audioFile?.bytes == Int64(onDisk.count))

            let size = onDisk.count
            let first = try await Self.curl(base + urls["audio"]!, ["-H", "Range: bytes=0-99"])
            #expect(first.status == 206)
            #expect(first.header("Content-Range") == "bytes 0-99/\(size)")
            #expect(first.body == Array(onDisk[0..<100]))
            let last = try await Self.curl(base + urls["audio"]!, ["-H", "Range: bytes=-500"])
            #expect(last.status == 206)
            #expect(last.header("Content-Range") == "bytes \(size - 500)-\(size - 1)/\(size)")
            #expect(last.body == Array(onDisk[(size - 500)...]))
            let past = try await Self.curl(base + urls["audio"]!, ["-H", "Range: bytes=\(size)-"])
            #expect(past.status == 416)
            #expect(past.header("Content-Range") == "bytes */\(size)")
            let unchanged = try await Self.curl(base + urls["audio"]!, ["-H", "If-None-Match: \"\(id).mp3\""])
            #expect(unchanged.status == 304)
            #expect(unchanged.body.isEmpty)
            let captions = try await Self.curl(base + urls["captions"]!)
            #expect(captions.status == 200 && captions.text.hasPrefix("WEBVTT"))

            // ffmpeg reads the URL, exact to the timeline's frame, and seeks in it with ranges.
            #expect(try await FFmpeg.decodedFrameCount(base + urls["audio"]!) == timeline.totalFrames.count)
            let seeking = try await ChildProcess.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-v", "error", "-ss", "300", "-i", base + urls["audio"]!, "-t", "1", "-f", "null", "-"]
            )
            #expect(seeking.termination == .exited(0), "\(seeking.standardErrorText)")

            for name in ["..%2F..%2Fetc%2Fpasswd", "\(id).mp3.bak", "\(id.uppercased()).mp3", "\(id)"] {
                #expect(try await Self.curl("\(base)/v1/renders/\(name)").status == 404, "\(name)")
            }
            let metrics = try await Self.curl("\(base)/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            for line in [
                #"render_session_renders_total{outcome="rendered"} 1"#,
                #"render_session_renders_total{outcome="existing"} 1"#,
                "render_session_render_duration_seconds_count 1",
                "render_session_renders_in_flight 0.0",
            ] {
                #expect(metrics.text.split(separator: "\n").contains { $0 == line }, "\(line) in \(metrics.text)")
            }

            // Seed 000's TTS contract: the cached clip of a text the fixture script speaks, as base64.
            let script = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.script)) as? [String: Any]
            let segments = script?["segments"] as? [[String: Any]]
            let text = try #require(segments?.first?["text"] as? String)
            let speechBody = folder.path("speech.json")
            try JSONEncoder().encode(["text": text]).write(to: URL(fileURLWithPath: speechBody))
            let speech = try await Self.curl(
                "\(base)/tts/synthesize",
                ["-X", "POST", "--data-binary", "@\(speechBody)"]
            )
            #expect(speech.status == 200, "\(speech.text)")
            let answer = try JSONDecoder().decode(SeedSpeechAnswer.self, from: Data(speech.body))
            #expect(answer.success)
            let clip = try #require(Data(base64Encoded: answer.data?.audio ?? ""))
            #expect(clip.starts(with: [0x49, 0x44, 0x33]) || clip.first == 0xFF, "an MP3")
            #expect(try await FFmpeg.decodedFrameCount(Self.write(clip, in: folder)) > 0)
            for (body, message) in [
                (#"{"text": ""}"#, "text: 1 to 5000 characters"),
                (#"{"words": "x"}"#, "text: a string is required"),
                ("{\"text\": \"\(String(repeating: "a", count: 5_001))\"}", "text: 1 to 5000 characters"),
            ] {
                let refused = try await Self.curl("\(base)/tts/synthesize", ["-X", "POST", "--data-binary", body])
                #expect(refused.status == 400)
                let error = try JSONDecoder().decode(SeedSpeechAnswer.self, from: Data(refused.body))
                #expect(!error.success && error.error?.code == "VALIDATION_ERROR" && error.error?.message == message)
            }

            // The OpenAPI document is docs/openapi.json, and each of its paths is a route.
            let openAPI = try await Self.curl("\(base)/openapi.json")
            let committed = try Data(contentsOf: Repository.root.appendingPathComponent("docs/openapi.json"))
            #expect(openAPI.status == 200 && openAPI.body == [UInt8](committed))
            let document = try #require(try JSONSerialization.jsonObject(with: committed) as? [String: Any])
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            #expect(
                Set(paths.keys)
                    == [
                        "/v1/renders", "/v1/renders/{name}", "/tts/synthesize", "/livez", "/readyz", "/metrics",
                        "/openapi.json",
                    ]
            )
            for (path, methods) in paths {
                for method in methods.keys {
                    let url = base + path.replacingOccurrences(of: "{name}", with: "\(id).mp3")
                    let asked = try await Self.curl(
                        url,
                        ["-X", method.uppercased()] + (method == "post" ? ["-d", "{}"] : [])
                            + (method == "head" ? ["-I"] : [])
                    )
                    #expect(![404, 405].contains(asked.status), "\(method) \(path) is a route: \(asked.status)")
                }
            }

            let broken = try await Self.curl(
                "\(base)/v1/renders",
                ["-X", "POST", "--data-binary", #"{"script": {"id": "x"}, "options": {"format": "aiff"}}"#]
            )
            #expect(broken.status == 422)
            #expect(broken.text.contains(#""options.format: not a format (wav, flac, mp3, opus, ogg, m4a, m4b)""#))
            #expect(broken.text.contains(#""script.segments: is required but missing""#))
        }
        #expect(result.status == 0, "SIGTERM stops the server with exit status 0: \(result.standardError)")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.first?.hasPrefix("listening on http://127.0.0.1:") == true)
        let logged = lines.dropFirst().compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(logged.count == lines.count - 1, "every other line is a JSON log line")
        #expect(logged.contains { $0["status"] as? Int == 206 }, "ffmpeg's seek asked for a range")
        #expect(logged.allSatisfy { ($0["requestId"] as? String)?.isEmpty == false })
    }

    /// Writes `data` to a new file in `folder`, for a decoder to read.
    static func write(_ data: Data, in folder: TemporaryFolder) throws -> String {
        let path = folder.path("\(UUID().uuidString).mp3")
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Seed 000's `{"success", "data": {"audio"}, "error": {"code", "message"}}`.
    struct SeedSpeechAnswer: Decodable {
        struct Audio: Decodable { var audio: String }
        struct Problem: Decodable {
            var code: String
            var message: String
        }
        var success: Bool
        var data: Audio?
        var error: Problem?
    }

    @Test(
        "With --token-file every /v1 request needs the bearer token (401 otherwise, the token never logged); a body over 1 MiB is 413; probes need none"
    )
    func tokenAndLimits() async throws {
        let folder = try TemporaryFolder()
        let tokenFile = folder.path("token")
        let token = "s3cret-\(UUID().uuidString)"
        try "\(token)\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let large = folder.path("large.json")
        try Data(repeating: 0x20, count: 2 << 20).write(to: URL(fileURLWithPath: large))
        let result = try await Self.serving(
            ["--cache", "Fixtures/cache", "--offline", "--out", folder.path("out"), "--token-file", tokenFile]
        ) { base in
            #expect(try await Self.curl("\(base)/livez").status == 200)
            let none = try await Self.curl("\(base)/v1/renders", ["-X", "POST", "-d", "{}"])
            #expect(none.status == 401)
            #expect(none.header("WWW-Authenticate") == "Bearer")
            let wrong = try await Self.curl(
                "\(base)/v1/renders",
                ["-X", "POST", "-d", "{}", "-H", "Authorization: Bearer \(token)x"]
            )
            #expect(wrong.status == 401)
            let right = try await Self.curl(
                "\(base)/v1/renders",
                ["-X", "POST", "-d", "{}", "-H", "Authorization: Bearer \(token)"]
            )
            #expect(right.status == 422, "\(right.text)")
            #expect(right.text.contains("script: missing, or not a JSON object"))
            let tooLarge = try await Self.curl(
                "\(base)/v1/renders",
                ["-X", "POST", "--data-binary", "@\(large)", "-H", "Authorization: Bearer \(token)"]
            )
            #expect(tooLarge.status == 413)
            #expect(tooLarge.text.contains("larger than 1048576 bytes"))
            let secretFile = try await Self.curl(
                "\(base)/v1/renders/0123456789abcdef0123456789abcdef.wav",
                ["-H", "Authorization: Bearer \(token)"]
            )
            #expect(secretFile.status == 404)
            let unspoken = try await Self.curl("\(base)/tts/synthesize", ["-X", "POST", "-d", #"{"text": "hi"}"#])
            #expect(unspoken.status == 401, "the seed's TTS endpoint needs the token too")
            let metrics = try await Self.curl("\(base)/metrics").text.split(separator: "\n")
            #expect(metrics.contains(#"render_session_requests_rejected_total{reason="unauthorized"} 3"#))
            #expect(metrics.contains(#"render_session_requests_rejected_total{reason="too_large"} 1"#))
        }
        #expect(result.status == 0, "\(result.standardError)")
        #expect(!result.standardError.contains(token), "the token is never logged")
    }

    /// A render request for three hours as M4A (the fixture's shape 18 times, as scripts/bench
    /// makes it): many seconds of encoding, long enough to give up on.
    static func longRequest() throws -> Data {
        var script = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: Self.script)) as? [String: Any]
        )
        let segments = try #require(script["segments"] as? [[String: Any]])
        let windows = try #require(script["interjections"] as? [[String: Any]])
        script["id"] = "three-hours"
        script["durationSeconds"] = 600 * 18
        /// `value` moved `block` blocks of ten minutes later.
        func later(_ value: Any?, _ block: Int) -> Double { (value as? Double ?? 0) + Double(block * 600) }
        var longSegments: [[String: Any]] = []
        var longWindows: [[String: Any]] = []
        for block in 0..<18 {
            for segment in segments {
                var moved = segment
                moved["id"] = "\(segment["id"] ?? "")-\(block)"
                moved["startSeconds"] = later(segment["startSeconds"], block)
                longSegments.append(moved)
            }
            for window in windows {
                var moved = window
                moved["windowStartSeconds"] = later(window["windowStartSeconds"], block)
                moved["windowEndSeconds"] = later(window["windowEndSeconds"], block)
                longWindows.append(moved)
            }
        }
        script["segments"] = longSegments
        script["interjections"] = longWindows
        return try JSONSerialization.data(withJSONObject: ["script": script, "options": ["format": "m4a"]])
    }

    @Test(
        "A render past --render-timeout is 503, and cancelled when no other request waits for it: it leaves no file"
    )
    func timedOutAndAbandoned() async throws {
        let folder = try TemporaryFolder()
        let out = folder.path("out")
        let body = folder.path("long.json")
        try Self.longRequest().write(to: URL(fileURLWithPath: body))
        let post = ["-X", "POST", "--data-binary", "@\(body)"]
        let result = try await Self.serving(
            ["--cache", "Fixtures/cache", "--offline", "--out", out, "--render-timeout", "2"]
        ) { base in
            let late = try await Self.curl("\(base)/v1/renders", post)
            #expect(late.status == 503)
            #expect(
                late.text.contains("the render took longer than 2 s, the most this server waits (--render-timeout)")
            )
            var metrics: [Substring] = []
            var empty = false
            for _ in 0..<100 where !empty {
                try await Task.sleep(for: .milliseconds(100))
                metrics = try await Self.curl("\(base)/metrics").text.split(separator: "\n")
                empty = try FileManager.default.contentsOfDirectory(atPath: out).isEmpty
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: out)
            #expect(empty, "a cancelled render leaves no file: \(left)")
            #expect(metrics.contains(#"render_session_renders_total{outcome="timed_out"} 1"#))
            #expect(metrics.contains("render_session_renders_in_flight 0.0"))
        }
        #expect(result.status == 0, "\(result.standardError)")
    }
}
