import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("The reactivity meditations")
struct ReactivityContentTests {
    static let folder = Repository.fixtures.appendingPathComponent("meditations")

    @Test("The committed JSON is exactly what the Markdown imports to (set RECORD_FIXTURES=1 to rewrite it)")
    func noDrift() throws {
        let markdown = try String(contentsOf: Self.folder.appendingPathComponent("reactivity.md"), encoding: .utf8)
        let category = try MeditationMarkdown.parse(markdown)
        #expect(category.scripts.count == 14)
        if ProcessInfo.processInfo.environment["RECORD_FIXTURES"] == "1" {
            _ = try MeditationImport.run(
                markdownPath: Self.folder.appendingPathComponent("reactivity.md").path,
                into: Self.folder.path
            )
            Issue.record("Fixtures/meditations/*.json were re-recorded; unset RECORD_FIXTURES and run again")
            return
        }
        for script in category.scripts {
            let committed = try Data(contentsOf: Self.folder.appendingPathComponent("\(script.id).json"))
            #expect(committed == MeditationMarkdown.json(script), "\(script.id).json drifted from reactivity.md")
        }
        let jsonFiles = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter {
            $0.hasSuffix(".json")
        }
        #expect(jsonFiles.count == 14, "no stray scripts")
    }

    @Test("Every meditation has the seed's shape")
    func shape() throws {
        let library = try ScriptLibrary(paths: [Self.folder.path])
        #expect(library.problems.isEmpty)
        for (index, entry) in library.entries.enumerated() {
            let script = entry.script
            #expect(script.id == String(format: "reactivity-%02d", index + 1) && script.orderIndex == index + 1)
            #expect(script.durationSeconds == 600 && script.category == "reactivity")
            guard case .guided(let session) = script.kind else {
                Issue.record("\(script.id) is a \(script.kind.name) session, not a guided script")
                continue
            }
            #expect(session.segments.map(\.startSeconds) == [0, 120, 510])
            #expect(session.segments.map(\.phase) == ["opening", "teachings", "closing"])
            #expect(
                session.interjections.map { [$0.windowStartSeconds, $0.windowEndSeconds] } == [
                    [350, 370], [440, 460],
                ]
            )
            #expect(session.interjections.allSatisfy { (2...4).contains($0.textOptions.count) })
        }
    }

    @Test(
        "At the embedded voice's default speed no clip of any meditation runs late, and every closing ends before 10:00"
    )
    func nothingRunsLate() async throws {
        let cache = try TemporaryFolder()
        let library = try ScriptLibrary(paths: [Self.folder.path])
        let pipeline = SessionPipeline(
            clips: ClipIdentity(cacheFolder: cache.url.path),
            source: .provider(EmbeddedSpeechProvider())
        )
        let result = try await pipeline.prepare(texts: library.entries.flatMap(\.script.allTexts))
        #expect(result.problems.isEmpty && result.needed == 126 && result.synthesized == 126)
        for entry in library.entries {
            // Every option of every window: the longest ones must fit too, whatever the seed draws.
            for seed: UInt64 in 0..<12 {
                var seeded = pipeline
                seeded.plan.seed = seed
                let timeline = try seeded.plan(entry.script, clips: result)
                #expect(
                    timeline.items.compactMap(\.clip).allSatisfy { $0.lateByFrames == .zero },
                    "\(entry.script.id) seed \(seed)"
                )
                #expect(
                    timeline.totalFrames == Frames(612 * Int64(timeline.sampleRate.hertz)),
                    "\(entry.script.id): nothing runs past 10:00"
                )
            }
        }
    }
}

@Suite("Listing and batch rendering", .serialized, .tags(.concurrent))
struct BatchTests {
    /// A folder with three short scripts made from the edge-case fixture, and a cache that has their clips.
    static func smallLibrary() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        let template = try String(contentsOf: Repository.script("edge-cases"), encoding: .utf8)
        for (index, id) in ["a-one", "a-two", "b-three"].enumerated() {
            let text = template.replacingOccurrences(of: "\"edge-cases\"", with: "\"\(id)\"")
                .replacingOccurrences(of: "\"tests\"", with: id.hasPrefix("a") ? "\"alpha\"" : "\"beta\"")
                .replacingOccurrences(of: "\"orderIndex\": 0", with: "\"orderIndex\": \(3 - index)")
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder.path("scripts/\(id).json")))
        }
        return folder
    }

    static func options(_ folder: TemporaryFolder, variants: Int = 0, seed: UInt64 = 0) -> BatchOptions {
        BatchOptions(
            outputFolder: folder.path("out"),
            pipeline: SessionPipeline(clips: ClipIdentity(cacheFolder: Repository.cache.path)),
            baseSeed: seed,
            variants: variants,
            jobs: 2
        )
    }

    /// What became of each session, by name: `rendered`, `upToDate`, `failed` or `lacksClips`.
    static func run(_ folder: TemporaryFolder, _ options: BatchOptions) async throws -> [String: String] {
        let library = try ScriptLibrary(paths: [folder.path("scripts")])
        let report = try await BatchRenderer.run(library, options: options)
        return Dictionary(uniqueKeysWithValues: zip(report.sessions.map(\.name), report.results.map(\.name)))
    }

    @Test("Categories are listed by id, their scripts by orderIndex")
    func categories() throws {
        let folder = try Self.smallLibrary()
        let categories = try ScriptLibrary(paths: [folder.path("scripts")]).categories
        #expect(categories.map(\.id) == ["alpha", "beta"])
        #expect(categories.map(\.name) == ["Alpha", "Beta"])
        #expect(categories[0].scriptCount == 2)
        #expect(categories[0].scripts.map(\.id) == ["a-two", "a-one"], "orderIndex 2 before 3")
    }

    @Test("A batch renders every script; a second run renders nothing; touching one script re-renders only it")
    func upToDate() async throws {
        let folder = try Self.smallLibrary()
        let first = try await Self.run(folder, Self.options(folder))
        #expect(first == ["a-one": "rendered", "a-two": "rendered", "b-three": "rendered"])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).sorted() == [
                ".render-session.lock", "a-one.wav", "a-one.wav.timeline.json", "a-two.wav", "a-two.wav.timeline.json",
                "b-three.wav", "b-three.wav.timeline.json", "manifest.json",
            ]
        )
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("out/a-one.wav.timeline.json")))
        )
        #expect(timeline.seed == SeededGenerator.derive(base: 0, label: "a-one"))
        #expect(try AudioFileDecoder.measure(path: folder.path("out/a-one.wav")).frameCount == timeline.totalFrames)

        #expect(
            try await Self.run(folder, Self.options(folder)) == [
                "a-one": "upToDate", "a-two": "upToDate", "b-three": "upToDate",
            ]
        )

        let path = folder.path("scripts/a-two.json")
        let edited = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(
            of: "\"Edge cases\"",
            with: "\"Edited\""
        )
        try Data(edited.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: folder.path("out/b-three.wav"))
        #expect(
            try await Self.run(folder, Self.options(folder)) == [
                "a-one": "upToDate", "a-two": "rendered", "b-three": "rendered",
            ],
            "the edited script and the one whose output vanished"
        )
        var forced = Self.options(folder)
        forced.force = true
        #expect(try await Self.run(folder, forced).values.allSatisfy { $0 == "rendered" })
    }

    @Test("A broken script fails alone, with its reason")
    func brokenScript() async throws {
        let folder = try Self.smallLibrary()
        // Valid JSON, but a clip the cache does not have.
        let path = folder.path("scripts/b-three.json")
        let broken = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(
            of: "\"Tied.\"",
            with: "\"Not in the cache.\""
        )
        try Data(broken.utf8).write(to: URL(fileURLWithPath: path))
        let library = try ScriptLibrary(paths: [folder.path("scripts")])
        let report = try await BatchRenderer.run(library, options: Self.options(folder))
        let results = Dictionary(uniqueKeysWithValues: zip(report.sessions.map(\.name), report.results))
        #expect(results["a-one"]?.name == "rendered" && results["a-two"]?.name == "rendered")
        // The clip it lacks is reported once for the batch; the session only counts it.
        guard case .lacksClips(let count) = results["b-three"] else {
            Issue.record("b-three should lack its clip: \(String(describing: results["b-three"]))")
            return
        }
        let lines = report.clips.problemLines()
        #expect(count == 1 && lines.count == 1 && lines[0].hasPrefix("No clip for \"Not in the cache.\" (key "))
        #expect(!FileManager.default.fileExists(atPath: folder.path("out/b-three.wav")))
    }

    @Test("Variants draw differently, record their seeds, and a base seed reproduces them")
    func variants() async throws {
        let folder = try Self.smallLibrary()
        let results = try await Self.run(folder, Self.options(folder, variants: 3, seed: 42))
        #expect(results.count == 9 && results.values.allSatisfy { $0 == "rendered" })
        let seeds = try (1...3).map { variant in
            try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: folder.path("out/a-one-v\(variant).wav.timeline.json")))
            ).seed
        }
        #expect(seeds == (1...3).map { SeededGenerator.derive(base: 42, label: "a-one#v\($0)") })
        #expect(Set(seeds).count == 3)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.path("out/a-one-v2.wav")))
        var forced = Self.options(folder, variants: 3, seed: 42)
        forced.force = true
        _ = try await Self.run(folder, forced)
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder.path("out/a-one-v2.wav"))) == before,
            "the same base seed renders the same bytes"
        )
    }

    @Test("A derived seed is fixed: the documented value for base 0 and label reactivity-01")
    func derivedSeed() {
        #expect(SeededGenerator.derive(base: 0, label: "reactivity-01") == 6_131_135_582_420_677)
    }
}
