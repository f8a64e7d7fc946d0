import Foundation
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// A speech recognizer that breaks its protocol, played by a shell script in place of the
/// interpreter: needs no recognizer, since the script answers for it.
@Suite("A broken speech recognizer")
struct HostileRecognizerTests {
    /// A recognizer whose interpreter is the shell script `body`, with a model folder to name.
    static func recognizer(_ body: String) throws -> (folder: TemporaryFolder, recognizer: SpeechRecognizer) {
        let folder = try TemporaryFolder()
        let python = folder.path("python")
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: URL(fileURLWithPath: python))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: python)
        let model = folder.path("model")
        try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
        for file in ["model.bin", "config.json"] {
            try Data("{}".utf8).write(to: URL(fileURLWithPath: "\(model)/\(file)"))
        }
        return (folder, SpeechRecognizer(installation: RecognizerInstallation(python: python, model: model)))
    }

    static let spans = (0..<3).map { _ in
        RecognizerSpan(path: "/nonexistent.wav", frameCount: 22_050, sampleRate: 22_050)
    }

    @Test("Words come back in each span's frames, clamped to the span; an answer's error is that span's alone")
    func answers() async throws {
        let (folder, recognizer) = try Self.recognizer(
            """
            echo '{"ready": true}'
            read request; echo '{"words": [["Hello", 0, 8000], ["there.", 8000, 99999999]]}'
            read request; echo '{"error": "FileNotFoundError: no such file"}'
            read request; echo '{"words": []}'
            """
        )
        defer { withExtendedLifetime(folder) {} }
        let answers = try await recognizer.transcribe(Self.spans)
        try #require(answers.count == 3)
        #expect(
            try answers[0].get() == [
                HeardWord(text: "Hello", startFrame: .zero, endFrame: Frames(11_025)),
                HeardWord(text: "there.", startFrame: Frames(11_025), endFrame: Frames(22_050)),
            ]
        )
        #expect(throws: SessionError.self) { try answers[1].get() }
        if case .failure(let error) = answers[1] { #expect(error.description == "FileNotFoundError: no such file") }
        #expect(try answers[2].get() == [])
    }

    @Test("Output that is not the protocol ends the process; the spans it had not answered fail, saying so")
    func brokenProtocol() async throws {
        let (folder, recognizer) = try Self.recognizer(
            """
            echo '{"ready": true}'
            read request; echo '{"words": []}'
            read request; echo 'Traceback (most recent call last):'
            exec sleep 600
            """
        )
        defer { withExtendedLifetime(folder) {} }
        let started = ContinuousClock.now
        let answers = try await recognizer.transcribe(Self.spans)
        // Killed at the broken line (the reason below says so), not waited for: `sleep 600` would
        // take ten minutes. The bound is loose because a loaded machine under the address
        // sanitizer took 45 s to run these three spans' worth of process.
        #expect(ContinuousClock.now - started < .seconds(120), "the process was killed, not waited for")
        try #require(answers.count == 3)
        #expect(try answers[0].get() == [])
        for answer in answers[1...] {
            guard case .failure(let error) = answer else {
                Issue.record("a span after the break was answered")
                continue
            }
            #expect(error.description.hasPrefix("the speech recognizer (process "), "\(error)")
            #expect(
                error.description.hasSuffix(
                    ") broke its protocol: it wrote something that is not its protocol: Traceback (most recent call last):"
                ),
                "\(error)"
            )
        }
    }

    @Test("A recognizer that does not load is an error naming why; one that dies mid-way fails the rest")
    func failures() async throws {
        let (folderUnloadable, unloadable) = try Self.recognizer(
            """
            echo '{"error": "the recognizer did not load /m: RuntimeError: Unable to open file model.bin"}'
            exit 1
            """
        )
        defer { withExtendedLifetime(folderUnloadable) {} }
        await #expect {
            _ = try await unloadable.transcribe(Self.spans)
        } throws: { error in
            let error = error as? SessionError
            return error?.code == .recognizerUnavailable
                && error?.description == "the recognizer did not load /m: RuntimeError: Unable to open file model.bin"
        }
        let (folderDying, dying) = try Self.recognizer(
            """
            echo '{"ready": true}'
            read request; echo '{"words": [["Hi", 0, 100]]}'
            kill -9 $$
            """
        )
        defer { withExtendedLifetime(folderDying) {} }
        let answers = try await dying.transcribe(Self.spans)
        #expect(try answers[0].get().map(\.text) == ["Hi"])
        for answer in answers[1...] {
            if case .failure(let error) = answer {
                #expect(error.description == "the speech recognizer ended before answering", "\(error)")
            } else {
                Issue.record("a span after the recognizer died was answered")
            }
        }
    }

    @Test("The recognizer runs isolated: -I, in /, offline, with an environment of its own")
    func isolated() async throws {
        let (folder, recognizer) = try Self.recognizer(
            """
            env > "$(dirname "$0")/env.txt"
            pwd > "$(dirname "$0")/pwd.txt"
            echo "$1" > "$(dirname "$0")/first-argument.txt"
            echo '{"error": "not a real recognizer"}'
            """
        )
        await #expect(throws: SessionError.self) { _ = try await recognizer.transcribe(Self.spans) }
        let read = { (name: String) in
            try String(contentsOfFile: folder.path(name), encoding: .utf8).trimmingCharacters(in: .newlines)
        }
        #expect(try read("first-argument.txt") == "-I")
        #expect(try read("pwd.txt") == "/")
        let names = Set(try read("env.txt").split(separator: "\n").map { String($0.prefix { $0 != "=" }) })
        #expect(
            names.subtracting(["PWD", "SHLVL", "_", "OLDPWD"]) == ["PATH", "LANG", "LC_ALL", "HF_HUB_OFFLINE"],
            "\(names)"
        )
    }
}
