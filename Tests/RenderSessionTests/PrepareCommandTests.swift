import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("Filling the cache from the command line", .serialized, .tags(.concurrent))
struct PrepareCommandTests {
    static let script = "Fixtures/scripts/ten-minute-session.json"

    @Test("render into an empty cache speaks every clip with the embedded voice, no network needed")
    func renderFillsCache() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "render", Self.script, "-o", folder.path("s.wav"), "--cache", folder.path("cache"), "--seed", "5",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == folder.path("s.wav") + "\n" + folder.path("s.wav.timeline.json") + "\n")
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 3, "the summary says how the clips were had")
        #expect(lines.first?.hasPrefix("Rendered ten-minute-session: 10:12.0 at 22050 Hz mono, speech ") == true)
        #expect(
            lines.dropFirst().first
                == "  13494600 frames, seed 5, voice espeak:en-us (default), 8 clips (0 cached, 8 synthesized)",
            "\(lines)"
        )
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))
        #expect(stored.filter { $0.hasSuffix(".mp3") }.count == 8)
        #expect(stored.filter { $0.hasSuffix(".loudness.json") }.count == 8, "each clip's loudness is kept beside it")
        let printed = try await renderSession([
            "timeline", Self.script, "--cache", folder.path("cache"), "--seed", "5", "--offline",
        ])
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(printed.standardOutput.utf8))
        #expect(try AudioFileDecoder.measure(path: folder.path("s.wav")).frameCount == timeline.totalFrames)
        #expect(timeline.items.compactMap(\.clip).allSatisfy { $0.lateByFrames == .zero })

        // Everything is cached now: the second render says nothing about the cache.
        let again = try await renderSession([
            "render", Self.script, "-o", folder.path("s2.wav"), "--cache", folder.path("cache"), "--seed", "5",
        ])
        #expect(again.standardError.hasPrefix("Rendered ten-minute-session: "))
        #expect(
            try Data(contentsOf: folder.url.appendingPathComponent("s.wav"))
                == Data(contentsOf: folder.url.appendingPathComponent("s2.wav"))
        )
    }

    @Test("prepare asks the proxy once per missing clip, with the headers given, and nothing the second time")
    func prepareTwice() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        let arguments = [
            "prepare", "Fixtures/scripts", "--provider", "proxy", "--tts-url", server.baseURL.absoluteString,
            "--header", "X-Firebase-AppCheck: abc", "--header", "Authorization: Bearer t", "--cache", folder.path("c"),
        ]
        let first = try await renderSession(arguments)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.isEmpty)
        #expect(
            first.standardError.hasPrefix(
                "Prepared 2 scripts, 15 clips needed: 0 already cached, 15 synthesized, 0 failed, in "
            )
        )
        let stats = try await server.stats()
        #expect(stats.count == 15)
        #expect(
            stats.requests.allSatisfy {
                $0.headers["x-firebase-appcheck"] == "abc" && $0.headers["authorization"] == "Bearer t"
            }
        )
        #expect(stats.maxInFlight <= 4)

        let second = try await renderSession(arguments)
        #expect(second.status == 0)
        #expect(
            second.standardError.hasPrefix(
                "Prepared 2 scripts, 15 clips needed: 15 already cached, 0 synthesized, 0 failed, in "
            )
        )
        #expect(try await server.stats().count == 15, "no request at all")
    }

    @Test("A broken script in a folder fails alone; the others are prepared")
    func brokenScriptInFolder() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.script, toPath: folder.path("scripts/a.json"))
        try Data("{\"id\": 1}".utf8).write(to: URL(fileURLWithPath: folder.path("scripts/b.json")))
        let result = try await renderSession(["prepare", folder.path("scripts"), "--cache", folder.path("c")])
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: \(folder.path("scripts/b.json")): id: expected a string, found a number")
        #expect(
            lines.last?.hasPrefix("Prepared 1 script, 8 clips needed: 0 already cached, 8 synthesized, 0 failed")
                == true
        )
    }

    @Test(
        "A provider that cannot be reached fails the render in one line for one cause; --allow-missing renders silence instead"
    )
    func unreachableProvider() async throws {
        let folder = try TemporaryFolder()
        let common = [
            Self.script, "--cache", folder.path("c"), "--provider", "proxy", "--tts-url", "http://127.0.0.1:9",
            "--seed", "1",
        ]
        let failed = try await renderSession(["render"] + common + ["-o", folder.path("x.wav")])
        #expect(failed.status == 1)
        let errors = failed.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errors.count == 1, "one cause, one line: \(errors)")
        #expect(errors.first?.hasPrefix("error: Cannot synthesize 8 clips (\"") == true)
        #expect(
            errors.first?.hasSuffix(
                "\" and 7 more): cannot reach http://127.0.0.1:9/tts/synthesize: Connection refused"
            ) == true,
            "\(errors)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.wav")))

        let allowed = try await renderSession(
            ["render"] + common + [
                "-o", folder.path("y.wav"), "--allow-missing", "--sample-rate", "16000",
                "--timeline", folder.path("y.json"),
            ]
        )
        #expect(allowed.status == 0, "\(allowed.standardError)")
        let warnings = allowed.standardError.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.hasSuffix(": Connection refused; its slot stays silent") == true, "\(warnings)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("y.json")))
        )
        #expect(timeline.items.map(\.kind) == [.silence, .bell])
        #expect(timeline.totalFrames == Frames(612 * 16_000))
    }

    @Test("--provider proxy needs --tts-url; bad headers are usage errors")
    func providerOptions() async throws {
        let missingURL = try await renderSession(["prepare", Self.script, "--provider", "proxy"])
        #expect(missingURL.status == 64)
        #expect(
            missingURL.standardError.hasPrefix(
                "error: --provider proxy needs --tts-url, the backend's base URL (the part before /tts/synthesize)\n"
            )
        )
        let badHeader = try await renderSession(["prepare", Self.script, "--header", "no colon here"])
        #expect(badHeader.status == 64)
        #expect(badHeader.standardError.contains("--header: a header is 'Name: value', and this one has no colon"))
        #expect(!badHeader.standardError.contains("no colon here"), "a header's text may be a secret")
    }
}
