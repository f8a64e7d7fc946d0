import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite("Voices: listing them, and falling back from Piper", .tags(.concurrent))
struct VoicesCommandTests {
    /// A two-segment script.
    static func script(in folder: TemporaryFolder) throws -> String {
        let json = """
            {"id": "voiced", "category": "test", "title": "Voiced", "subtitle": "s", "orderIndex": 1,
             "durationSeconds": 20, "segments": [
               {"id": "opening", "phase": "opening", "startSeconds": 0, "text": "Welcome."},
               {"id": "closing", "phase": "closing", "startSeconds": 10, "text": "Return slowly."}]}
            """
        try Data(json.utf8).write(to: URL(fileURLWithPath: folder.path("voiced.json")))
        return folder.path("voiced.json")
    }

    /// Why the Piper voice is unavailable when models are looked for in the empty `folder` only.
    static func reason(emptyModels folder: String) -> String {
        let installation = PiperInstallation.located()
        return installation.engineInstalled
            ? "no en_US-joe-medium.onnx with its .onnx.json in \(folder)"
            : "no Piper engine at \(installation.python); scripts/setup-piper installs it"
    }

    @Test(
        "voices --json: every voice's id, provider, language, availability and detail; Piper's default listed even when missing"
    )
    func json() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        var environment = ProcessInfo.processInfo.environment
        environment["OPENAI_API_KEY"] = nil
        let result = try await renderSession(
            ["voices", "--json", "--piper-models", folder.path("models")],
            environment: environment
        )
        #expect(result.status == 0 && result.standardError.isEmpty)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutputBytes)) as? [String: Any]
        )
        #expect(Set(object.keys) == ["piper", "voices"])
        let piper = try #require(object["piper"] as? [String: Any])
        #expect(piper["modelFolders"] as? [String] == [folder.path("models")])
        #expect(piper["python"] as? String == PiperInstallation.located().python)
        let voices = try #require(object["voices"] as? [[String: Any]])
        for voice in voices {
            #expect(Set(voice.keys).isSubset(of: ["id", "provider", "language", "available", "detail"]))
            #expect(Set(voice.keys).isSuperset(of: ["id", "provider", "available", "detail"]))
        }
        let byID = Dictionary(voices.map { ($0["id"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byID["piper:en_US-joe-medium"]?["available"] as? Bool == false)
        #expect(byID["piper:en_US-joe-medium"]?["provider"] as? String == "piper")
        #expect(byID["espeak:en-us"]?["available"] as? Bool == true)
        #expect(byID["espeak:en-us"]?["detail"] as? String == "English (America)")
        #expect(byID["alloy"]?["available"] as? Bool == false)
        #expect(byID["alloy"]?["detail"] as? String == "needs an API key in $OPENAI_API_KEY")
        #expect(voices.filter { $0["provider"] as? String == "espeak" }.count > 100)
    }

    @Test(
        "Piper without its word timing (no folder for the model's aligned copy) still speaks, and says so in one line",
        .requiresPiper
    )
    func piperWithoutWords() async throws {
        let folder = try TemporaryFolder()
        try Data().write(to: URL(fileURLWithPath: folder.path("not-a-folder")))
        var environment = ProcessInfo.processInfo.environment
        // The engine as installed, its data folder a file: no aligned copy can be kept.
        environment["RENDER_SESSION_PIPER_PYTHON"] = PiperSupport.installation!.python
        environment["XDG_DATA_HOME"] = folder.path("not-a-folder")
        let result = try await renderSession(
            [
                "prepare", "Fixtures/scripts/edge-cases.json", "--voice", PiperSupport.voice.id, "--cache",
                folder.path("cache"),
            ],
            environment: environment
        )
        #expect(result.status == 0, "\(result.standardError)")
        let lines = result.standardError.split(separator: "\n").filter { $0.contains("word timing") }
        #expect(
            lines == [
                "warning: Piper voice piper:en_US-joe-medium gives no word timing: there is no folder to keep the model's aligned copy in"
            ],
            "\(result.standardError)"
        )
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))
        #expect(files.contains { $0.hasSuffix(".mp3") } && !files.contains { $0.hasSuffix(".marks.json") })
    }

    @Test("voices lists the installed Piper voice as available, with its model file and rate", .requiresPiper)
    func installedPiper() async throws {
        let result = try await renderSession(["voices"])
        #expect(result.status == 0)
        let model = try PiperSupport.installation!.model(for: PiperSupport.voice)
        let line = result.standardOutput.split(separator: "\n").first { $0.hasPrefix("piper:en_US-joe-medium\t") }
        #expect(
            line.map(String.init) == "piper:en_US-joe-medium\tpiper\ten_US\tavailable\t\(model.modelPath) (22050 Hz)"
        )
    }

    @Test(
        "--fallback-voice espeak: a Piper voice with no model is one warning line, eSpeak speaks, the timeline says which voice stood in"
    )
    func fallsBack() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        let result = try await renderSession([
            "render", try Self.script(in: folder), "--cache", folder.path("cache"), "--seed", "7", "--voice",
            "piper:en_US-joe-medium",
            "--piper-models", folder.path("models"), "-o", folder.path("s.wav"), "--timeline", folder.path("s.json"),
            "--fallback-voice", "espeak",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let warnings = result.standardError.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        #expect(
            warnings == [
                "warning: Piper voice en_US-joe-medium unavailable (\(Self.reason(emptyModels: folder.path("models")))); using espeak:en-us"
            ]
        )
        let timeline = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder.path("s.json"))))
                as? [String: Any]
        )
        #expect(timeline["voice"] as? String == "espeak:en-us")
        #expect(timeline["requestedVoice"] as? String == "piper:en_US-joe-medium")
    }

    @Test(
        "No fallback voice (the default, and --no-fallback): one error line naming what is missing, exit 1, nothing written",
        arguments: [[], ["--no-fallback"], ["--fallback-voice", "espeak", "--no-fallback"]]
    )
    func noFallback(extra: [String]) async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        let result = try await renderSession(
            [
                "render", try Self.script(in: folder), "--cache", folder.path("cache"), "--provider", "piper",
                "--piper-models", folder.path("models"), "-o", folder.path("s.wav"),
            ] + extra
        )
        #expect(result.status == 1)
        #expect(
            result.standardError
                == "error: Piper voice en_US-joe-medium unavailable (\(Self.reason(emptyModels: folder.path("models")))); --fallback-voice names a voice to speak in instead\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))
    }

    @Test(
        "SIGINT while Piper speaks: exit 130 at once, no worker process left, nothing half-written in the cache",
        .requiresPiper
    )
    func interruptedWhileSpeaking() async throws {
        let folder = try TemporaryFolder()
        // The model in a folder of the test's own, so that its workers are told apart by their arguments.
        let model = try PiperSupport.installation!.model(for: PiperSupport.voice)
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        for (source, name) in [
            (model.modelPath, "en_US-joe-medium.onnx"), (model.configPath, "en_US-joe-medium.onnx.json"),
        ] {
            try FileManager.default.createSymbolicLink(
                atPath: folder.path("models/\(name)"),
                withDestinationPath: source
            )
        }
        // One short clip, then long ones: the short one is stored while the long ones are being spoken.
        let long =
            try String(contentsOf: Repository.script("ten-minute-session"), encoding: .utf8)
            .components(separatedBy: "\"text\": \"").dropFirst().map { $0.prefix { $0 != "\"" } }
            .max { $0.count < $1.count } ?? ""
        let segments = ["Welcome."] + (1...4).map { "\($0). \(long)" }
        let json = segments.enumerated().map { index, text in
            "{\"id\": \"s\(index)\", \"phase\": \"p\", \"startSeconds\": \(index * 100), \"text\": \"\(text)\"}"
        }
        try Data(
            """
            {"id": "long", "category": "test", "title": "Long", "subtitle": "s", "orderIndex": 1,
             "durationSeconds": 600, "segments": [\(json.joined(separator: ", "))]}
            """.utf8
        ).write(to: URL(fileURLWithPath: folder.path("long.json")))
        func workers() -> Int {
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return entries.filter { pid in
                guard pid.allSatisfy(\.isNumber),
                    let line = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline")
                else { return false }
                return String(decoding: line, as: UTF8.self).contains(folder.path("models"))
            }.count
        }
        let (prepared, interrupted) = try await renderSession([
            "prepare", folder.path("long.json"), "--cache", folder.path("cache"), "--provider", "piper",
            "--piper-models", folder.path("models"),
        ]) { process in
            let deadline = Date().addingTimeInterval(60)
            // Two workers speaking, and at least one clip stored.
            while Date() < deadline,
                workers() < 2
                    || !((try? FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))) ?? [])
                        .contains(where: { $0.hasSuffix(".mp3") })
            {
                try await Task.sleep(for: .milliseconds(20))
            }
            try process.send(SIGINT)
            return Date()
        }
        #expect(prepared.termination == .exited(130))
        // Counted to the end of collecting the child's output, which under the thread sanitizer
        // on two loaded cores took up to 2.7 s (CI, 34091b4); a long clip takes Piper longer.
        #expect(Date().timeIntervalSince(interrupted) < 4, "a clip being spoken does not hold it up")
        // The workers were ended before the command exited; on a loaded machine the kernel may
        // take a moment to finish them, so wait up to 3 s for them to be gone.
        let gone = Date().addingTimeInterval(3)
        while workers() > 0 && Date() < gone { try await Task.sleep(for: .milliseconds(50)) }
        #expect(workers() == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path("cache"))
        let kept = [".mp3", ".loudness.json", ".marks.json"]
        #expect(left.allSatisfy { name in kept.contains { name.hasSuffix($0) } }, "\(left)")
        for clip in left where clip.hasSuffix(".mp3") {
            #expect(try AudioFileDecoder.verifyMPEG(path: folder.path("cache/\(clip)")).frameCount > Frames(0))
        }
    }

    @Test("A pause out of range is a usage error naming the flag")
    func pauseOutOfRange() async throws {
        let result = try await renderSession([
            "timeline", Repository.script("ten-minute-session").path, "--cache", Repository.cache.path, "--offline",
            "--sentence-pause", "11",
        ])
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("error: --sentence-pause: 11.0 is outside 0.0…10.0 seconds\n"))
    }
}
