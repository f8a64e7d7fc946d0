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

    /// Prepares `texts` in the fake engine's voice, failing the test if that takes longer than `seconds`.
    ///
    /// The deadline only catches a hang: under the whole suite, tests that wait synchronously for
    /// a child process hold the (two) cooperative threads, so a prepare that takes 30 ms alone can
    /// wait a minute for a thread (seen: 82 s).
    static func prepare(
        _ texts: [String],
        with installation: PiperInstallation,
        in folder: TemporaryFolder,
        within seconds: Double
    ) async throws -> PreparedClips? {
        let preparer = ClipPreparer(
            identity: ClipIdentity(cacheFolder: folder.path("cache"), voice: "piper:fake"),
            provider: PiperSpeechProvider(installation: installation),
            jobs: 1
        )
        let result = await withTaskGroup(of: Result<PreparedClips, SessionError>?.self) { group in
            group.addTask {
                do throws(SessionError) {
                    return .success(try await preparer.prepare(texts: texts))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(seconds))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let result else {
            Issue.record("preparing took longer than \(seconds) s")
            return nil
        }
        return try result.get()
    }

    /// The one failure of `result`'s single clip.
    static func reason(_ result: PreparedClips?) throws -> String {
        let result = try #require(result)
        #expect(result.synthesized == 0 && result.failures.count == 1)
        return try #require(result.failures.first).reason
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
            try await Self.prepare(["Hello."], with: installation, in: folder, within: 300)
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
            try await Self.prepare(["Hello."], with: installation, in: folder, within: 300)
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
        let outcome: Result<PreparedClips?, any Error>
        do {
            outcome = .success(try await Self.prepare(["Hello."], with: installation, in: folder, within: 300))
        } catch {
            outcome = .failure(error)
        }
        let expected = ") broke its protocol: it wrote a line longer than 65536 bytes"
        switch outcome {
        case .success(let result):
            let reason = try Self.reason(result)
            #expect(reason.hasPrefix("the Piper worker for fake (process ") && reason.hasSuffix(expected), "\(reason)")
        case .failure(let error as SessionError):
            // Before the model is loaded, the voice is unavailable, for the same reason.
            #expect(place == "greeting")
            #expect(error.code == .voiceUnavailable)
            #expect(error.lines.count == 1 && error.lines[0].hasSuffix(expected + ")"), "\(error)")
        case .failure(let error):
            Issue.record("unexpected \(error)")
        }
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
        do {
            _ = try await Self.prepare(["Hello."], with: installation, in: folder, within: 20)
            Issue.record("the fake engine made a clip")
        } catch let error as SessionError {
            #expect(error.code == .voiceUnavailable)
        }
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
