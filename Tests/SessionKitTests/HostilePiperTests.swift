import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// A Piper engine that breaks its protocol, played by a shell script in place of the interpreter:
/// needs no Piper, since the script answers for the engine.
@Suite("A broken Piper engine", .serialized)
struct HostilePiperTests {
    /// A folder with `python` (the shell script `body`) and a model `fake` for it to "load".
    static func engine(_ body: String) throws -> (folder: TemporaryFolder, installation: PiperInstallation) {
        let folder = try TemporaryFolder()
        let python = folder.path("python")
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: python))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: python)
        let models = folder.path("models")
        try FileManager.default.createDirectory(atPath: models, withIntermediateDirectories: true)
        try Data("not a network".utf8).write(to: URL(fileURLWithPath: models + "/fake.onnx"))
        try Data(#"{"audio": {"sample_rate": 22050}}"#.utf8).write(to: URL(fileURLWithPath: models + "/fake.onnx.json"))
        return (folder, PiperInstallation(python: python, modelFolders: [models]))
    }

    /// What `render-session prepare` of a one-segment script saying `text`, in the fake engine's
    /// voice, printed on standard error and how it exited; a run past `seconds` is killed and
    /// fails the test.
    ///
    /// The command runs in a process of its own: in this one it shared the cooperative threads with
    /// the whole suite, and when the tests still blocked them waiting for child processes, a prepare
    /// that takes 30 ms alone waited minutes for one (seen: 82 s and 594 s under the address sanitizer).
    static func prepare(
        _ text: String = "Hello.",
        with installation: PiperInstallation,
        in folder: TemporaryFolder,
        within seconds: Double,
        environment extra: [String: String] = [:]
    ) async throws -> (status: Int32, errors: [String], warnings: [String]) {
        let script =
            #"{"id": "h", "category": "t", "title": "H", "subtitle": "s", "orderIndex": 1, "#
            + #""durationSeconds": 20, "segments": [{"id": "a", "phase": "p", "startSeconds": 0, "text": "\#(text)"}]}"#
        try Data(script.utf8).write(to: URL(fileURLWithPath: folder.path("script.json")))
        var environment = ProcessInfo.processInfo.environment
        environment["RENDER_SESSION_PIPER_PYTHON"] = installation.python
        environment.merge(extra) { _, new in new }
        let run = try await ChildProcess.run(
            Repository.binary.path,
            [
                "prepare", folder.path("script.json"), "--cache", folder.path("cache"), "--voice", "piper:fake",
                "--piper-models", installation.modelFolders[0], "--no-fallback",
            ],
            environment: environment,
            timeLimit: .seconds(seconds)
        )
        guard let run else {
            Issue.record("prepare took longer than \(seconds) s (it was killed)")
            return (-1, [], [])
        }
        let lines = run.standardErrorText.split(separator: "\n").map(String.init)
        return (run.status, lines.filter { $0.hasPrefix("error: ") }, lines.filter { $0.hasPrefix("warning: ") })
    }

    /// The reason in the one error line for the script's one clip.
    static func reason(_ result: (status: Int32, errors: [String], warnings: [String])) throws -> String {
        #expect(result.status == 1)
        #expect(result.errors.count == 1, "\(result.errors)")
        let line = try #require(result.errors.first)
        let prefix = #"error: Cannot synthesize "Hello." (key "#
        #expect(line.hasPrefix(prefix), "\(line)")
        return String(line.drop { $0 != ")" }.dropFirst(3))
    }

    @Test("A frame count that would overflow is a broken protocol naming the worker, not a trap")
    func overflowingFrameCount() async throws {
        let (folder, installation) = try Self.engine(
            """
            echo '{"ready": true, "sampleRate": 22050}'
            read request
            echo '{"frames": 9223372036854775807}'
            read request
            """
        )
        let reason = try Self.reason(
            try await Self.prepare(with: installation, in: folder, within: 60)
        )
        #expect(reason.hasPrefix("the Piper worker for fake (process "), "\(reason)")
        #expect(
            reason.hasSuffix(
                ") broke its protocol: it announced 9223372036854775807 frames, outside the 0…253575 a clip of this text may hold"
            ),
            "\(reason)"
        )
    }

    @Test("A frame count beyond what a clip of the text may hold is refused before any audio is read")
    func implausibleFrameCount() async throws {
        let (folder, installation) = try Self.engine(
            """
            echo '{"ready": true, "sampleRate": 22050}'
            read request
            echo '{"frames": 793800000}'
            exec cat /dev/zero
            """
        )
        let reason = try Self.reason(
            try await Self.prepare(with: installation, in: folder, within: 60)
        )
        #expect(reason.hasSuffix("it announced 793800000 frames, outside the 0…253575 a clip of this text may hold"))
    }

    @Test(
        "Megabytes without a newline end in a broken-protocol error, in bounded time",
        arguments: ["greeting", "answer"]
    )
    func endlessLine(where place: String) async throws {
        let endless = "exec tr -d '\\n' < /dev/zero"
        let body =
            place == "greeting"
            ? endless
            : """
            echo '{"ready": true, "sampleRate": 22050}'
            read request
            \(endless)
            """
        let (folder, installation) = try Self.engine(body)
        let result = try await Self.prepare(with: installation, in: folder, within: 60)
        let expected = ") broke its protocol: it wrote a line longer than 262144 bytes"
        // Before the model is loaded, the voice is unavailable, for the same reason.
        let reason = place == "answer" ? try Self.reason(result) : Self.unavailability(result)
        #expect(reason.hasPrefix("the Piper worker for fake (process ") && reason.hasSuffix(expected), "\(reason)")
    }

    /// The one error line of a prepare whose voice is unavailable, without its prefix and suffix:
    /// the reason in `Piper voice fake unavailable (REASON); --fallback-voice …`.
    static func unavailability(_ result: (status: Int32, errors: [String], warnings: [String])) -> String {
        #expect(result.status == 1)
        #expect(result.errors.count == 1, "\(result.errors)")
        let line = result.errors.first ?? ""
        let (prefix, suffix) = (
            "error: Piper voice fake unavailable (", "); --fallback-voice names a voice to speak in instead"
        )
        #expect(line.hasPrefix(prefix) && line.hasSuffix(suffix), "\(line)")
        return String(line.dropFirst(prefix.count).dropLast(suffix.count))
    }

    @Test("A worker that never says it is ready is stopped after its loading time, and the voice is unavailable")
    func neverReady() async throws {
        let (folder, installation) = try Self.engine("exec sleep 600")
        let result = try await Self.prepare(
            with: installation,
            in: folder,
            within: 60,
            environment: ["RENDER_SESSION_PIPER_LOAD_SECONDS": "2"]
        )
        #expect(Self.unavailability(result) == "the Piper worker did not load fake within 2.0 seconds and was stopped")
    }

    @Test(
        "A FIFO planted as the model or its config is refused by name before any worker starts",
        arguments: ["fake.onnx", "fake.onnx.json"]
    )
    func plantedFIFO(file: String) async throws {
        let (folder, installation) = try Self.engine(#"touch "$(dirname "$0")/started"; exec sleep 600"#)
        let path = installation.modelFolders[0] + "/" + file
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o644) == 0)
        let result = try await Self.prepare(with: installation, in: folder, within: 60)
        #expect(Self.unavailability(result) == "\(path) is not a regular file (a FIFO, a device or a socket)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("started")), "no worker started")
    }

    /// What prepare of "Hello there." printed, and the cache's files, when the engine speaks it as
    /// one second of noise (loud everywhere) with `words` (JSON) for its spans.
    static func helloThere(
        words: String
    ) async throws -> (result: (status: Int32, errors: [String], warnings: [String]), kept: [String]) {
        let (folder, installation) = try Self.engine(
            """
            echo '{"ready": true, "sampleRate": 22050}'
            read request
            echo '{"frames": 22050, "words": \(words)}'
            head -c 44100 /dev/urandom
            read request
            """
        )
        let result = try await Self.prepare("Hello there.", with: installation, in: folder, within: 60)
        return (result, try FileManager.default.contentsOfDirectory(atPath: folder.path("cache")))
    }

    @Test(
        "Word spans that do not fit the clip keep the clip, without words, and say why once",
        arguments: [
            ("past the audio", "[[[0, 100], [200, 9223372036854775807]]]"),
            ("out of order", "[[[12000, 14000], [0, 1000]]]"),
            ("negative", "[[[-500, 100], [200, 300]]]"),
            ("empty", "[[[300, 300], [400, 500]]]"),
            ("not pairs", "[[[0, 100, 200], [300, 400]]]"),
            ("a span for each token", "[[[0, 100]]]"),
            ("a list for each sentence", "[[[0, 100], [200, 300]], [[400, 500]]]"),
        ]
    )
    func unfitWordSpans(_ kind: String, words: String) async throws {
        let (result, kept) = try await Self.helloThere(words: words)
        #expect(result.status == 0 && result.errors.isEmpty, "\(kind): \(result.errors)")
        #expect(
            result.warnings == [
                "warning: Piper voice piper:fake gives no word timing: its word spans do not fit the sentences spoken"
            ],
            "\(kind)"
        )
        #expect(kept.filter { $0.hasSuffix(".mp3") }.count == 1, "\(kind): the clip is kept: \(kept)")
        #expect(!kept.contains { $0.hasSuffix(".marks.json") }, "\(kind): with no marks: \(kept)")
    }

    @Test("Spans that fit give the clip its words, kept beside it (the control for the spans that do not)")
    func fitWordSpans() async throws {
        let (result, kept) = try await Self.helloThere(words: "[[[0, 8000], [9000, 20000]]]")
        #expect(result.status == 0 && result.errors.isEmpty && result.warnings.isEmpty, "\(result)")
        #expect(kept.filter { $0.hasSuffix(".marks.json") }.count == 1, "\(kept)")
    }

    @Test("The worker runs isolated: -I, in /, with an environment of its own")
    func isolated() async throws {
        let (folder, installation) = try Self.engine(
            """
            env > "$(dirname "$0")/env.txt"
            pwd > "$(dirname "$0")/pwd.txt"
            echo "$1" > "$(dirname "$0")/first-argument.txt"
            echo '{"error": "not a real engine"}'
            exit 1
            """
        )
        let result = try await Self.prepare(with: installation, in: folder, within: 60)
        #expect(result.status == 1 && result.errors.count == 1, "the fake engine made no clip: \(result.errors)")
        let read = { (name: String) in
            try String(contentsOfFile: folder.path(name), encoding: .utf8).trimmingCharacters(in: .newlines)
        }
        #expect(try read("first-argument.txt") == "-I")
        #expect(try read("pwd.txt") == "/")
        let names = Set(try read("env.txt").split(separator: "\n").map { String($0.prefix { $0 != "=" }) })
        // The shell adds PWD (and may add SHLVL, _); nothing of the test's own environment passes.
        #expect(names.subtracting(["PWD", "SHLVL", "_", "OLDPWD"]) == ["PATH", "LANG", "LC_ALL"], "\(names)")
        #expect(ProcessInfo.processInfo.environment["HOME"] != nil && !names.contains("HOME"))
    }
}
