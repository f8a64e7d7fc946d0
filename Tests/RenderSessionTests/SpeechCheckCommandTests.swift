import Foundation
import SessionTimeline
import TestSupport
import Testing

@Suite("The speech check from the command", .serialized)
struct SpeechCheckCommandTests {
    static let script = Repository.root.appendingPathComponent("Fixtures/scripts/ten-minute-session.json").path

    /// The `speech` problems of `verify --speech --json` of `file`: each item's clip key, and its message.
    static func speechProblems(
        _ file: String
    ) async throws -> (status: Int32, problems: [String: String], report: [String: Any]) {
        let verify = try await renderSession(["verify", file, "--speech", "--json"])
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(verify.standardOutput.utf8)) as? [String: Any],
            "\(verify.standardError)"
        )
        var problems: [String: String] = [:]
        for problem in report["problems"] as? [[String: Any]] ?? [] where problem["code"] as? String == "speech" {
            problems[problem["key"] as? String ?? "?"] = problem["message"] as? String
        }
        return (verify.status, problems, report)
    }

    @Test(
        "verify --speech hears the ten-minute session say its script, and catches a clip of another text, one cut after 60 % of it and one of noise",
        .requiresRecognizer
    )
    func plantedFaults() async throws {
        let folder = try TemporaryFolder()
        let cache = folder.path("cache")
        try FileManager.default.copyItem(
            atPath: Repository.root.appendingPathComponent("Fixtures/cache").path,
            toPath: cache
        )
        let clean = folder.path("clean.wav")
        let render = try await renderSession([
            "render", Self.script, "--cache", cache, "--seed", "7", "-o", clean, "--timeline", clean + ".timeline.json",
        ])
        #expect(render.status == 0, "\(render.standardError)")
        let heard = try await Self.speechProblems(clean)
        #expect(heard.status == 0 && heard.problems.isEmpty, "\(heard.problems)")
        let summary = try #require(heard.report["speech"] as? [String: Any])
        #expect(summary["clips"] as? Int == 5 && summary["failedClips"] as? Int == 0, "\(summary)")
        #expect((summary["wordErrorRate"] as? Double ?? 1) < 0.15, "\(summary)")

        // Three segments' clips doctored in the cache: the second is another text's clip (an
        // interjection's), the first cut after 60 % of its frames, the last noise.
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: clean + ".timeline.json"))
        )
        let keys = timeline.items.compactMap { $0.clip?.key }
        try #require(keys.count == 5)
        let clip = { (key: String) in "\(cache)/\(key).mp3" }
        try FileManager.default.removeItem(atPath: clip(keys[1]))
        try FileManager.default.copyItem(atPath: clip(keys[3]), toPath: clip(keys[1]))
        let frames = try await FFmpeg.decodedFrameCount(clip(keys[0]))
        for (key, filter) in [
            (keys[0], ["-i", clip(keys[0]), "-af", "atrim=end_sample=\(frames * 6 / 10)"]),
            (keys[4], ["-f", "lavfi", "-i", "anoisesrc=color=pink:amplitude=0.3:sample_rate=22050:duration=8"]),
        ] {
            let doctored = folder.path("doctored.mp3")
            let ffmpeg = try await ChildProcess.run(
                "/usr/bin/ffmpeg",
                ["-nostdin", "-loglevel", "error", "-y"] + filter + ["-ac", "1", doctored],
                timeLimit: .seconds(60)
            )
            #expect(ffmpeg?.status == 0)
            try FileManager.default.removeItem(atPath: clip(key))
            try FileManager.default.moveItem(atPath: doctored, toPath: clip(key))
        }
        let faulty = folder.path("faulty.wav")
        let again = try await renderSession([
            "render", Self.script, "--cache", cache, "--seed", "7", "-o", faulty, "--timeline",
            faulty + ".timeline.json",
        ])
        #expect(again.status == 0, "\(again.standardError)")
        let caught = try await Self.speechProblems(faulty)
        #expect(caught.status == 1)
        #expect(Set(caught.problems.keys) == [keys[0], keys[1], keys[4]], "\(caught.problems)")
        #expect(
            caught.problems[keys[4]]?.contains("no speech heard where the script says") == true,
            "\(caught.problems)"
        )
        #expect(caught.problems[keys[0]]?.contains("words not heard") == true, "\(caught.problems)")
        #expect(caught.problems[keys[1]]?.contains("words not heard") == true, "\(caught.problems)")
    }

    @Test(
        "prepare --check-speech replaces a cache entry swapped for another text's clip; offline, render --check-speech refuses it",
        .requiresRecognizer
    )
    func prepareReplacesASwappedClip() async throws {
        let folder = try TemporaryFolder()
        let cache = folder.path("cache")
        try FileManager.default.copyItem(
            atPath: Repository.root.appendingPathComponent("Fixtures/cache").path,
            toPath: cache
        )
        // The opening's clip holds the closing's speech.
        let timeline = try await renderSession(["timeline", Self.script, "--cache", cache, "--seed", "7"])
        let items = try #require(
            (try JSONSerialization.jsonObject(with: Data(timeline.standardOutput.utf8)) as? [String: Any])?["items"]
                as? [[String: Any]]
        )
        let keys = items.compactMap { $0["key"] as? String }
        try #require(keys.count == 5)
        let (opening, closing) = ("\(cache)/\(keys[0]).mp3", "\(cache)/\(keys[4]).mp3")
        try FileManager.default.removeItem(atPath: opening)
        try FileManager.default.copyItem(atPath: closing, toPath: opening)

        let offline = try await renderSession([
            "render", Self.script, "--cache", cache, "--seed", "7", "--offline", "--check-speech", "-o",
            folder.path("s.wav"),
        ])
        #expect(offline.status == 1)
        #expect(
            offline.standardError.contains("(key \(keys[0])): fails the speech check: heard \""),
            "\(offline.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))

        let prepare = try await renderSession(["prepare", Self.script, "--cache", cache, "--check-speech"])
        #expect(prepare.status == 0, "\(prepare.standardError)")
        let warnings = prepare.standardError.split(separator: "\n").filter { $0.hasPrefix("warning: ") }
        #expect(warnings.count == 1, "\(warnings)")
        #expect(
            warnings.first?.contains("(key \(keys[0])) fails the speech check: heard \"") == true
                && warnings.first?.contains(" of its 57 words not heard") == true
                && warnings.first?.hasSuffix("; synthesizing it again (try 2 of 3)") == true,
            "\(warnings)"
        )
        #expect(prepare.standardError.contains("1 synthesized"), "\(prepare.standardError)")
        #expect(prepare.standardError.contains("; speech: 8 clips"), "\(prepare.standardError)")
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: opening)) != Data(contentsOf: URL(fileURLWithPath: closing)),
            "the entry holds its own speech again"
        )

        // Every clip passed and is recorded; the next check hears none of them again.
        let heard = { () throws -> [String: Date] in
            var stamps: [String: Date] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: cache) where name.hasSuffix(".heard.json") {
                stamps[name] =
                    try FileManager.default.attributesOfItem(atPath: "\(cache)/\(name)")[.modificationDate] as? Date
            }
            return stamps
        }
        let recorded = try heard()
        #expect(recorded.count == 8)
        let again = try await renderSession(["prepare", Self.script, "--cache", cache, "--check-speech"])
        #expect(again.status == 0 && !again.standardError.contains("warning:"), "\(again.standardError)")
        #expect(again.standardError.contains("; speech: 8 clips"), "\(again.standardError)")
        #expect(try heard() == recorded, "no clip was heard again")
    }

    @Test(
        "A server that answers with another text's audio: each try fails the check, the clip fails after 3 with what was heard, and is not kept",
        .requiresRecognizer
    )
    func serverOfAnotherText() async throws {
        // Every answer is the fixture's closing ("Begin to let the practice go. Notice the weight…").
        let closing = try #require(
            try FileManager.default.contentsOfDirectory(atPath: Repository.cache.path).first {
                $0.hasPrefix("b496cba4") && $0.hasSuffix(".mp3")
            }
        )
        let server = try await TTSServer(mp3: Repository.cache.appendingPathComponent(closing).path)
        let folder = try TemporaryFolder()
        let text = "Breathe in slowly, and let your shoulders soften."
        let script = folder.path("s.json")
        try Data(
            (#"{"id": "s", "category": "t", "title": "S", "orderIndex": 1, "durationSeconds": 30, "segments": "#
                + #"[{"id": "a", "phase": "p", "startSeconds": 0, "text": "\#(text)"}]}"#).utf8
        ).write(to: URL(fileURLWithPath: script))
        let prepare = try await renderSession([
            "prepare", script, "--cache", folder.path("cache"), "--provider", "proxy", "--tts-url",
            server.baseURL.absoluteString, "--check-speech",
        ])
        #expect(prepare.status == 1)
        #expect(try await server.stats().count == 3, "the first try and two more")
        let lines = prepare.standardError.split(separator: "\n")
        #expect(lines.filter { $0.contains("synthesizing it again (try") }.count == 2, "\(lines)")
        let errors = lines.filter { $0.hasPrefix("error: ") }
        #expect(errors.count == 1, "\(errors)")
        #expect(
            errors.first?.hasPrefix("error: Cannot synthesize \"\(text)\" (key ") == true
                && errors.first?.contains("): the voice did not say its text in 3 tries: heard \"") == true,
            "\(errors)"
        )
        let kept = (try? FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))) ?? []
        #expect(!kept.contains { $0.hasSuffix(".mp3") }, "the wrong clip is not kept: \(kept)")
    }

    @Test(
        "verify --speech without a timeline is an error, with --no-timeline a usage error; without the recognizer, an error naming the setup script"
    )
    func missingParts() async throws {
        let folder = try TemporaryFolder()
        let file = folder.path("s.wav")
        let render = try await renderSession([
            "render", Self.script, "--cache", Repository.root.appendingPathComponent("Fixtures/cache").path, "-o", file,
            "--timeline", folder.path("elsewhere.json"),
        ])
        #expect(render.status == 0, "\(render.standardError)")
        let noTimeline = try await renderSession(["verify", file, "--speech"])
        #expect(noTimeline.status == 65)
        #expect(
            noTimeline.standardError.hasPrefix(
                "error: Cannot verify \(file): it has no timeline (\(file).timeline.json does not exist)"
            )
        )
        let leftOut = try await renderSession(["verify", file, "--speech", "--no-timeline"])
        #expect(leftOut.status == 64)
        #expect(
            leftOut.standardError.hasPrefix("error: --speech needs the file's timeline, which --no-timeline leaves out")
        )

        var environment = ProcessInfo.processInfo.environment
        environment["RENDER_SESSION_SPEECH_PYTHON"] = folder.path("no-python")
        let noRecognizer = try await renderSession(
            ["verify", file, "--speech", "--timeline", folder.path("elsewhere.json")],
            environment: environment
        )
        #expect(noRecognizer.status == 69, "\(noRecognizer.standardError)")
        #expect(
            noRecognizer.standardError.split(separator: "\n").contains(
                "error: The speech check's recognizer is not installed (no interpreter at \(folder.path("no-python"))); scripts/setup-speech-check installs it"
            ),
            "\(noRecognizer.standardError)"
        )
        #expect(noRecognizer.standardOutput.isEmpty)
    }
}
