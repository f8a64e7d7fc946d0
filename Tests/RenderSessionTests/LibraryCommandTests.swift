import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("import, list and batch", .serialized, .tags(.concurrent))
struct LibraryCommandTests {
    @Test("import writes one script per meditation and prints their paths")
    func importMarkdown() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "import", "Fixtures/meditations/reactivity.md", "-o", folder.path("scripts"),
        ])
        #expect(result.status == 0)
        #expect(
            result.standardOutput
                == (1...14).map { folder.path(String(format: "scripts/reactivity-%02d.json", $0)) + "\n" }.joined()
        )
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: folder.path("scripts/reactivity-07.json")))
                == Data(contentsOf: Repository.fixtures.appendingPathComponent("meditations/reactivity-07.json"))
        )
    }

    @Test("import takes a meditation's length from Duration:, else from its last speech, and warns of a silent end")
    func importDuration() async throws {
        let folder = try TemporaryFolder()
        let markdown = """
            # Calm

            ## 1. Five Minutes
            *Ends early*
            Duration: 10:00

            [0:00]
            Welcome.

            [4:30]
            Goodbye, and thank you for sitting today.

            ## 2. As Long As It Speaks
            *No silence appended*

            [0:00]
            Welcome.

            [2:00]
            Goodbye.

            """
        try Data(markdown.utf8).write(to: URL(fileURLWithPath: folder.path("calm.md")))
        let result = try await renderSession(["import", folder.path("calm.md"), "-o", folder.path("scripts")])
        #expect(result.status == 0)
        #expect(
            result.standardError.hasPrefix(
                "warning: \(folder.path("calm.md")):5: meditation 1 (\"Five Minutes\") lasts 10:00, but its last speech ([4:30]) ends at about 4:33 at 150 words per minute: 5:27 of silence at the end; give it its own Duration: line, or none to end with its speech\n"
            )
        )
        let lengths = try (1...2).map { number in
            try Script(json: Data(contentsOf: URL(fileURLWithPath: folder.path("scripts/calm-0\(number).json"))))
                .durationSeconds
        }
        // The second has no Duration: and ends 10 s after its last marker, or with the speech there.
        #expect(lengths == [600, 130])

        // An empty Duration: is an error at its line, and nothing is written.
        try Data(markdown.replacingOccurrences(of: "Duration: 10:00", with: "Duration:").utf8).write(
            to: URL(fileURLWithPath: folder.path("calm.md"))
        )
        let refused = try await renderSession(["import", folder.path("calm.md"), "-o", folder.path("again")])
        #expect(refused.status == 65)
        #expect(
            refused.standardError
                == "error: \(folder.path("calm.md")):5: Duration: \"\" is not a length; write m:ss or h:mm:ss, such as 'Duration: 10:00'\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("again")))
    }

    @Test("import of a malformed file names the line and writes nothing")
    func importError() async throws {
        let folder = try TemporaryFolder()
        try Data("# Calm\n\n## 1. One\nno subtitle\n".utf8).write(to: URL(fileURLWithPath: folder.path("bad.md")))
        let result = try await renderSession(["import", folder.path("bad.md"), "-o", folder.path("scripts")])
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: \(folder.path("bad.md")):4: expected the subtitle in single asterisks, '*Subtitle*', after the title\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("scripts")))
    }

    @Test("list --json has the backend's categories shape")
    func listJSON() async throws {
        let result = try await renderSession(["list", "Fixtures/meditations", "--json"])
        #expect(result.status == 0)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [[String: Any]]
        )
        #expect(json.count == 1)
        #expect(json[0]["id"] as? String == "reactivity")
        #expect(json[0]["name"] as? String == "Reactivity")
        #expect(json[0]["scriptCount"] as? Int == 14)
        let scripts = try #require(json[0]["scripts"] as? [[String: Any]])
        #expect(scripts.map { $0["orderIndex"] as? Int } == (1...14).map { $0 })
        #expect(Set(scripts[0].keys) == ["id", "title", "subtitle", "orderIndex", "durationSeconds", "kind"])
        #expect(scripts[0]["kind"] as? String == "guided")
        #expect(scripts[0]["title"] as? String == "The Space Between")
    }

    @Test("list prints each category, then its scripts in order")
    func listTable() async throws {
        let result = try await renderSession(["list", "Fixtures/scripts"])
        #expect(result.status == 0)
        #expect(
            result.standardOutput == """
                Reactivity (reactivity): 1 script
                    1  ten-minute-session  The Space Between — Finding the pause between what happens and what you do  10:00.0  guided
                Tests (tests): 1 script
                    0  edge-cases  Edge cases — Late clips, ties, other sample rates and channel counts, content past the end  0:20.0  guided

                """
        )
    }

    @Test("list shows each session's kind")
    func listKinds() async throws {
        let result = try await renderSession(["list", "Fixtures/sessions"])
        #expect(result.status == 0)
        #expect(
            result.standardOutput == """
                Breathing (breathing): 1 script
                    0  atem-4-7-8-box  4-7-8, then box breathing — Atem: four 4-7-8 breaths, then three box breaths  2:07.0  breathing
                Open (open): 1 script
                    0  offen  Offen — Meditationstimer's open meditation: ten minutes, then two of closing  12:00.0  open
                Stretch (stretch): 1 script
                    0  back-and-hips  Back and hips — Three stretches, thirty seconds each  1:30.0  stretch
                Timer (timer): 1 script
                    0  still-moment-timer  Ten-minute timer — Still Moment: a countdown, gongs every five minutes, rain  10:15.0  timer
                Workout (workout): 1 script
                    0  intervals-4x40  Four rounds, 40 on, 20 off — Workouts: warm-up, countdowns and a spoken round count  3:50.0  workout

                """
        )
    }

    @Test("batch renders a folder, names failures in its summary, and exits 1 if any failed")
    func batch() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Repository.script("edge-cases").path,
            toPath: folder.path("scripts/edge-cases.json")
        )
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder.path("scripts/broken.json")))
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
        ]
        let result = try await renderSession(arguments)
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.first == "error: \(folder.path("scripts/broken.json")): id: is required but missing")
        #expect(
            lines.last?.hasPrefix(
                "Batch of 1 session and 1 invalid script into \(folder.path("out")): 1 rendered, 0 up to date, 1 failed (\(folder.path("scripts/broken.json"))), 1 with late speech (worst "
            ) == true
        )
        #expect(FileManager.default.fileExists(atPath: folder.path("out/edge-cases.wav")))

        // Offline with an empty cache: each missing clip once, what to do, and counts that add up;
        // --json names the invalid script's problems and no file the failed session did not write.
        let empty = try await renderSession(
            ["batch", folder.path("scripts"), "-o", folder.path("empty-out"), "--cache", folder.path("c")]
                + ["--offline", "--json"]
        )
        #expect(empty.status == 1)
        let errors = empty.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errors.count { $0.contains("No clip for ") } == 7, "each of the 7 clips once: \(errors)")
        #expect(
            errors.last
                == "error: The cache lacks these clips and --offline makes none: fill it with `render-session prepare \(folder.path("scripts")) --cache \(folder.path("c"))`, or run without --offline"
        )
        #expect(
            empty.standardError.split(separator: "\n").last?.hasPrefix(
                "Batch of 1 session and 1 invalid script into \(folder.path("empty-out")): 0 rendered, 0 up to date, 2 failed (\(folder.path("scripts/broken.json")), edge-cases), in "
            ) == true,
            "\(empty.standardError)"
        )
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(empty.standardOutput.utf8)) as? [String: Any]
        )
        let invalid = try #require(summary["invalidScripts"] as? [[String: Any]])
        #expect(invalid.first?["path"] as? String == folder.path("scripts/broken.json"))
        // Each problem as standard error says it, without the path the entry names.
        let problems = try #require(invalid.first?["problems"] as? [String])
        let printed = empty.standardError.split(separator: "\n").compactMap { line in
            let prefix = "error: \(folder.path("scripts/broken.json")): "
            return line.hasPrefix(prefix) ? String(line.dropFirst(prefix.count)) : nil
        }
        #expect(problems.first == "id: is required but missing" && problems == printed)
        let session = try #require((summary["sessions"] as? [[String: Any]])?.first)
        #expect(session["result"] as? String == "lacksClips" && session["audio"] == nil && session["timeline"] == nil)
        #expect(session["problems"] as? [String] == ["7 clips could not be had (listed once for the batch)"])
        #expect(
            summary["rendered"] as? Int == 0 && summary["upToDate"] as? Int == 0 && summary["failed"] as? Int == 2
        )

        try FileManager.default.removeItem(atPath: folder.path("scripts/broken.json"))
        let again = try await renderSession(arguments)
        #expect(again.status == 0)
        #expect(
            again.standardError.hasPrefix(
                "edge-cases: up to date (1/1)\nBatch of 1 session into \(folder.path("out")): 0 rendered, 1 up to date, 0 failed, 1 with late speech (worst "
            ),
            "\(again.standardError)"
        )
    }
}
