import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Collects warnings from a prepare run.
final class Warnings: Sendable {
    private let lines = Locked<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func add(_ line: String) { lines.withLock { $0.append(line) } }
}

@Suite("Filling the cache", .serialized, .tags(.concurrent))
struct PrepareTests {
    static let fastRetry = RetryPolicy(maximumAttempts: 3, initialDelay: 0.05, maximumDelay: 2)

    static func preparer(
        _ server: TTSServer,
        kind: ProviderKind,
        cache: String,
        jobs: Int = 2,
        headers: [(name: String, value: String)] = [],
        // Long enough that no request times out while the whole suite starts at once under a
        // sanitizer (at 10 s a CI run saw two retries, and four requests where two were asserted);
        // the test of timeouts sets its own.
        timeout: Double = 120,
        environment: [String: String] = ["OPENAI_API_KEY": "sk-test"]
    ) throws -> ClipPreparer {
        let http = HTTPSettings(headers: headers, timeoutSeconds: timeout, retry: fastRetry)
        let settings: ProviderSettings =
            switch kind {
            case .proxy: .proxy(baseURL: server.baseURL, http: http)
            case .openai: .openAI(baseURL: server.baseURL, http: http)
            case .espeak, .piper: .local()
            }
        return ClipPreparer(
            identity: ClipIdentity(cacheFolder: cache, voice: kind.defaultVoice),
            provider: try settings.makeProvider(environment: environment),
            jobs: jobs
        )
    }

    @Test("The proxy provider posts {text} with the given headers and stores the decoded MP3 under the key")
    func proxy() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let preparer = try Self.preparer(
            server,
            kind: .proxy,
            cache: folder.path("cache"),
            headers: [("X-Firebase-AppCheck", "token-1")]
        )
        let result = try await preparer.prepare(texts: ["Breathe in.", "Breathe out.", "Breathe in."])
        #expect(result.needed == 2 && result.synthesized == 2 && result.failures.isEmpty)
        let stats = try await server.stats()
        #expect(stats.count == 2)
        #expect(
            stats.requests.allSatisfy { $0.path == "/tts/synthesize" && $0.headers["x-firebase-appcheck"] == "token-1" }
        )
        #expect(Set(stats.requests.map { $0.body["text"] }) == [.string("Breathe in."), .string("Breathe out.")])
        let key = ClipCache.key(text: "Breathe in.", voice: "en-US-Chirp3-HD-Algenib", speed: 1.0)
        let stored = try Data(contentsOf: URL(fileURLWithPath: folder.path("cache/\(key).mp3")))
        #expect(stored == (try Data(contentsOf: URL(fileURLWithPath: FixtureClip.shortPath))))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")).count == 2,
            "no temporaries left"
        )

        // A second run asks the server nothing.
        let again = try await preparer.prepare(texts: ["Breathe in.", "Breathe out."])
        #expect(again.alreadyCached == 2 && again.synthesized == 0)
        #expect(try await server.stats().count == 2)
    }

    @Test("The OpenAI provider posts model, input, voice, mp3 and speed with the bearer key from the environment")
    func openAI() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let settings = ProviderSettings.openAI(
            baseURL: server.baseURL,
            model: "kokoro",
            apiKeyVariable: "MY_TTS_KEY",
            http: HTTPSettings(retry: Self.fastRetry)
        )
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.path("c"), voice: "nova", speed: 1.25),
            provider: try settings.makeProvider(environment: ["MY_TTS_KEY": "sk-local"])
        )
        let result = try await preparer.prepare(texts: ["Soften the jaw."])
        #expect(result.synthesized == 1)
        let request = try #require(try await server.stats().requests.first)
        #expect(request.path == "/v1/audio/speech")
        #expect(request.headers["authorization"] == "Bearer sk-local")
        #expect(
            request.body == [
                "model": .string("kokoro"), "input": .string("Soften the jaw."), "voice": .string("nova"),
                "response_format": .string("mp3"), "speed": .number(1.25),
            ]
        )
        let key = ClipCache.key(text: "Soften the jaw.", voice: "nova", speed: 1.25)
        #expect(FileManager.default.fileExists(atPath: folder.path("c/\(key).mp3")))
    }

    @Test("Without the API key in the environment the OpenAI provider fails without a request")
    func openAIWithoutKey() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let preparer = try Self.preparer(server, kind: .openai, cache: folder.path("c"), environment: [:])
        let result = try await preparer.prepare(texts: ["Hello."])
        #expect(
            result.failures.map(\.reason) == [
                "the environment variable OPENAI_API_KEY holds no API key (name another variable to read it from)"
            ]
        )
        #expect(try await server.stats().count == 0)
    }

    @Test(
        "Timeouts, 429 and 5xx are retried, at most 3 tries in all",
        arguments: [
            ("[status=503x2] Recovers.", 3, true),
            ("[status=429x1][retry-after=0.1] Rate limited once.", 2, true),
            ("[status=500] Always broken.", 3, false),
            ("[status=400] Bad request.", 1, false),
        ]
    )
    func retries(text: String, requests: Int, succeeds: Bool) async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let result = try await Self.preparer(server, kind: .proxy, cache: folder.path("c")).prepare(texts: [text])
        #expect(try await server.stats().count == requests)
        #expect(result.synthesized == (succeeds ? 1 : 0))
        if !succeeds {
            let status = text.contains("500") ? "500" : "400"
            let expected =
                "HTTP \(status): upstream said \(status)" + (status == "500" ? " (gave up after 3 tries)" : "")
            #expect(result.failures.map(\.reason) == [expected])
        }
    }

    @Test("A request that takes longer than the timeout is retried, then reported")
    func timeout() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let preparer = try Self.preparer(server, kind: .proxy, cache: folder.path("c"), timeout: 0.5)
        // 30 s, far past the 0.5 s timeout even when a sanitizer and a parallel suite slow the
        // client's timer: with 6 s, a starved TSan run once saw the answer arrive in time.
        let result = try await preparer.prepare(texts: ["[delay=30] Slow."])
        #expect(result.failures.count == 1)
        #expect(
            result.failures.first?.reason.hasPrefix(
                "no answer within 0.5 s from \(server.baseURL.absoluteString)/tts/synthesize"
            ) == true
        )
        #expect(result.failures.first?.reason.hasSuffix("(gave up after 3 tries)") == true)
    }

    @Test(
        "Answers that are not MP3 are rejected and nothing is stored",
        arguments: [
            (
                "[body=html] Page.",
                "the answer is not the proxy's JSON: <!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"
            ),
            ("[body=badbase64] Garbled.", "the answer's data.audio is not valid base64"),
            ("[body=fail] Refused.", "the proxy reports failure: TTS quota exceeded"),
        ]
    )
    func badAnswers(text: String, reason: String) async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let result = try await Self.preparer(server, kind: .proxy, cache: folder.path("c")).prepare(texts: [text])
        #expect(result.failures.count == 1)
        #expect(result.failures.first?.reason.hasPrefix(reason) == true, "\(result.failures)")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("c")).isEmpty,
            "nothing stored, no temporaries"
        )
    }

    @Test("An empty or HTML body from an OpenAI-compatible server never reaches the cache")
    func emptyBody() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let result = try await Self.preparer(server, kind: .openai, cache: folder.path("c")).prepare(texts: [
            "[body=empty] x", "[body=html] y",
        ])
        #expect(result.failures.count == 2)
        #expect(
            result.failures.allSatisfy {
                $0.reason.hasPrefix("the audio received (") && $0.reason.contains("is not a usable MP3")
            }
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("c")).isEmpty)
    }

    @Test("No more than --jobs requests are in flight at once")
    func boundedConcurrency() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let texts = (1...8).map { "[delay=0.3] Clip \($0)." }
        let result = try await Self.preparer(server, kind: .proxy, cache: folder.path("c"), jobs: 3).prepare(
            texts: texts
        )
        #expect(result.synthesized == 8)
        let stats = try await server.stats()
        #expect(stats.maxInFlight == 3)
    }

    @Test("A corrupt cache entry is synthesized again, with a warning; stale temporaries are removed")
    func corruptEntry() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let preparer = try Self.preparer(server, kind: .proxy, cache: folder.url.path)
        let entry = preparer.identity.entry(for: "Hello.")
        try Data("<html>not audio</html>".utf8).write(to: URL(fileURLWithPath: entry.path))
        try Data("half".utf8).write(to: URL(fileURLWithPath: folder.path(".\(entry.key).mp3.999999-1.partial")))
        let warnings = Warnings()
        let result = try await preparer.prepare(texts: ["Hello."], warn: warnings.add)
        #expect(result.replaced == 1 && result.synthesized == 1)
        #expect(warnings.all.count == 1)
        #expect(warnings.all.first?.hasPrefix("Cache entry \(entry.key).mp3 for \"Hello.\" is corrupt (") == true)
        #expect(try folder.contents() == ["\(entry.key).mp3"])
        #expect(try preparer.identity.cache.measure(entry)?.frameCount ?? .zero > .zero)
    }
}

@Suite("The embedded voice", .tags(.concurrent))
struct EmbeddedVoiceTests {
    @Test("eSpeak NG speaks into the cache with no network, gapless at 22.05 kHz")
    func embedded() async throws {
        let folder = try TemporaryFolder()
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.url.path),
            provider: EmbeddedSpeechProvider()
        )
        let result = try await preparer.prepare(texts: ["Let the shoulders drop.", "Notice the breath."])
        #expect(result.synthesized == 2 && result.failures.isEmpty)
        let entry = preparer.identity.entry(for: "Let the shoulders drop.")
        let measurement = try AudioFileDecoder.measure(path: entry.path)
        #expect(measurement.sampleRate.hertz == 22_050 && measurement.channelCount == .mono && measurement.gapless)
        #expect(measurement.frameCount > Frames(22_050 / 2))
    }

    @Test("Unknown voices and ids without the espeak: prefix fail with a clear reason")
    func badVoices() async throws {
        let provider = EmbeddedSpeechProvider()
        await #expect(
            throws: SessionError(
                .providerFailed,
                "eSpeak NG has no voice named \"xx-nonexistent\" (`render-session voices` lists them)"
            )
        ) {
            _ = try await provider.speak(SpeechRequest(text: "Hi", voice: "espeak:xx-nonexistent"))
        }
        await #expect(
            throws: SessionError(.providerFailed, "the embedded voice takes voice ids like espeak:en-us, not \"alloy\"")
        ) {
            _ = try await provider.speak(SpeechRequest(text: "Hi", voice: "alloy"))
        }
    }
}
