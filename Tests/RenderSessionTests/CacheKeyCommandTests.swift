import Foundation
import SessionTimeline
import TestSupport
import Testing

/// `--cache-key text`: a cache in the stretching app's layout, `{sha256(text)}.mp3`, used as it is.
@Suite("The --cache-key option", .serialized, .tags(.concurrent))
struct CacheKeyCommandTests {
    static let script = "Fixtures/scripts/ten-minute-session.json"

    /// The timeline with every clip's source path left out, to compare two caches' renders.
    static func withoutSourcePaths(_ timeline: Timeline) -> Timeline {
        var timeline = timeline
        for index in timeline.items.indices {
            timeline.items[index].editSource { $0.path = nil }
        }
        return timeline
    }

    @Test("render --cache-key text --offline uses the app's clips and writes what the default cache gives")
    func renderFromStretchingCache() async throws {
        let folder = try TemporaryFolder()
        let cache = try TemporaryFolder()
        let names = try await StretchingCache.fill(cache)
        let result = try await renderSession([
            "render", Self.script, "-o", folder.path("text.wav"), "--timeline", folder.path("text.json"),
            "--cache", cache.url.path, "--cache-key", "text", "--offline", "--seed", "7",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try cache.contents().filter { $0.hasSuffix(".mp3") } == names, "no clip synthesized or renamed")

        let reference = try await renderSession([
            "render", Self.script, "-o", folder.path("voice.wav"), "--timeline", folder.path("voice.json"),
            "--cache", "Fixtures/cache", "--offline", "--seed", "7",
        ])
        #expect(reference.status == 0, "\(reference.standardError)")
        #expect(
            try Data(contentsOf: folder.url.appendingPathComponent("text.wav"))
                == Data(contentsOf: folder.url.appendingPathComponent("voice.wav")),
            "the same clips under other names render the same bytes"
        )

        let decoder = JSONDecoder()
        let text = try decoder.decode(
            Timeline.self,
            from: Data(contentsOf: folder.url.appendingPathComponent("text.json"))
        )
        var voice = try decoder.decode(
            Timeline.self,
            from: Data(contentsOf: folder.url.appendingPathComponent("voice.json"))
        )
        for index in voice.items.indices {
            guard let clip = voice.items[index].clip else { continue }
            let key = try await StretchingCache.sha256sum(clip.text)
            voice.items[index].editClip { $0.key = key }
            #expect(text.items[index].source?.path == "\(key).mp3", "the clip's name in the cache: \(clip.text)")
        }
        #expect(!text.items.compactMap(\.clip).isEmpty)
        #expect(Self.withoutSourcePaths(text) == Self.withoutSourcePaths(voice), "only the keys differ")
    }

    @Test("Under --cache-key text another voice and speed take the clips already there")
    func voiceNotInKey() async throws {
        let cache = try TemporaryFolder()
        try await StretchingCache.fill(cache)
        let result = try await renderSession([
            "timeline", Self.script, "--cache", cache.url.path, "--cache-key", "text", "--voice", "nova",
            "--speed", "1.25", "--offline", "--seed", "7",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        // A server's voice times no words, and the timeline says so rather than leave it unexplained.
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(result.standardOutput.utf8))
        let clips = timeline.items.compactMap(\.clip)
        #expect(clips.count == 5)
        for clip in clips {
            #expect(clip.words == nil && clip.sentences == nil)
            #expect(clip.wordsUnavailable == "the voice nova gives no word timing")
        }
    }

    @Test("prepare --cache-key text finds every clip in the app's cache and synthesizes none")
    func prepareFindsStretchingCache() async throws {
        let cache = try TemporaryFolder()
        let names = try await StretchingCache.fill(cache)
        let result = try await renderSession([
            "prepare", "Fixtures/scripts", "--cache", cache.url.path, "--cache-key", "text",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.hasPrefix(
                "Prepared 2 scripts, 15 clips needed: 15 already cached, 0 synthesized, 0 failed, in "
            ),
            "\(result.standardError)"
        )
        #expect(try cache.contents().filter { $0.hasSuffix(".mp3") } == names)
    }

    @Test("The default key still looks for text + voice + speed names, and the hint names the scheme")
    func defaultKeyUnchanged() async throws {
        let folder = try TemporaryFolder()
        let cache = try TemporaryFolder()
        try await StretchingCache.fill(cache)
        let result = try await renderSession([
            "render", Self.script, "-o", folder.path("out.wav"), "--cache", cache.url.path, "--offline",
        ])
        #expect(result.status == 1)
        let clips = try FixtureClip.all()
        let lines = result.standardError.split(separator: "\n").dropLast()
        #expect(lines.count == 8, "3 segments and 5 interjection options")
        for line in lines {
            #expect(clips.contains { line.contains("(key \($0.key)): nothing at \(cache.path("\($0.key).mp3"))") })
        }
        #expect(
            result.standardError.hasSuffix(
                "fill it with `render-session prepare \(Self.script) --cache \(cache.url.path)`, or run without --offline\n"
            )
        )

        let empty = try await renderSession([
            "render", Self.script, "-o", folder.path("out.wav"), "--cache", folder.path("empty"), "--cache-key",
            "text", "--offline",
        ])
        #expect(empty.status == 1)
        #expect(
            empty.standardError.hasSuffix(
                "fill it with `render-session prepare \(Self.script) --cache \(folder.path("empty")) --cache-key text`, or run without --offline\n"
            )
        )
        #expect(try folder.contents().isEmpty)
    }

    @Test("A stretching session prepared with --cache-key text is stored as the app names it, and found offline")
    func stretchingSession() async throws {
        let folder = try TemporaryFolder()
        let environment = LayeredCommandTests.environment(folder)
        let session = "Fixtures/sessions/stretch.json"
        let common = ["--cache", folder.path("cache"), "--cache-key", "text"]
        let prepared = try await renderSession(["prepare", session] + common, environment: environment)
        #expect(prepared.status == 0, "\(prepared.standardError)")
        let printed = try await renderSession(
            ["timeline", session, "--offline", "--seed", "7"] + common,
            environment: environment
        )
        #expect(printed.status == 0, "\(printed.standardError)")
        let timeline = try JSONDecoder().decode(Timeline.self, from: Data(printed.standardOutput.utf8))
        let clips = timeline.items.compactMap(\.clip)
        #expect(clips.contains { $0.text == "Now switch to the other side." })
        for clip in clips {
            #expect(clip.key == (try await StretchingCache.sha256sum(clip.text)), "\(clip.text)")
        }
        let stored = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))
        #expect(Set(clips.map { "\($0.key).mp3" }).isSubset(of: stored), "every clip the timeline names is a file")
    }

    @Test("An unknown scheme is a usage error naming the two")
    func unknownScheme() async throws {
        let result = try await renderSession([
            "timeline", Self.script, "--cache", "Fixtures/cache", "--cache-key", "sha1",
        ])
        #expect(result.status == 64)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("'--cache-key <voice|text>'"), "\(result.standardError)")
        #expect(result.standardError.contains("voice") && result.standardError.contains("text"))
    }
}
