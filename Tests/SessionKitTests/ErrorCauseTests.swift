import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

@testable import SessionKit

/// A `SessionError` keeps the error it wraps (issues 23 and 38): its line is the sentence it always
/// was, and the error it was made from is there for a program to look at.
@Suite("Errors keep their cause")
struct ErrorCauseTests {
    @Test("A bell that cannot be decoded: one line naming it, and the AudioError underneath")
    func bellCause() async throws {
        let folder = try TemporaryFolder()
        let bad = Repository.fixtures.appendingPathComponent("bad/random-bytes.mp3").path
        let pipeline = RenderTests.pipeline(
            sound: SoundSettings(bell: bad, loudness: .off),
            audio: folder.path("s.wav")
        )
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let error = await #expect(throws: SessionError.self) { try await pipeline.run(script) }
        #expect(error?.code == .unusableSound)
        #expect(error?.lines.count == 1 && error?.lines.first?.hasPrefix("Bell \"\(bad)\": ") == true)
        #expect(error?.underlyingError is AudioError, "\(String(describing: error?.underlyingError))")
    }

    /// A failure made in a `catch`, and what the error it caught must be.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        /// The kind of the `SessionError`.
        let code: SessionError.Code
        /// Makes the failure happen in `folder`.
        let fail: @Sendable (TemporaryFolder) async throws -> Void
        /// Whether the underlying error is the one expected.
        let isCause: @Sendable (any Error) -> Bool
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "A script that cannot be read: the system's error",
            code: .unreadableScript,
            fail: { folder in _ = try ScriptFile.load(folder.path("missing.json")) },
            isCause: { ($0 as? SystemError) == .noSuchFileOrDirectory }
        ),
        Case(
            name: "A timeline that is not JSON: the DecodingError",
            code: .unreadableTimeline,
            fail: { folder in
                let path = folder.path("t.json")
                try Data("not JSON".utf8).write(to: URL(fileURLWithPath: path))
                _ = try SessionVerifier.readTimeline(at: path)
            },
            isCause: { $0 is DecodingError }
        ),
        Case(
            name: "A cache folder that cannot be created: Foundation's error",
            code: .cannotWrite,
            fail: { folder in
                try Data().write(to: URL(fileURLWithPath: folder.path("file")))
                try ClipCache(directory: folder.path("file/cache")).prepareFolder()
            },
            isCause: { $0 is CocoaError }
        ),
        Case(
            name: "Meditations to import that cannot be read: Foundation's error",
            code: .unreadableScript,
            fail: { folder in _ = try MeditationImport.run(markdownPath: folder.path("m.md"), into: folder.path("out"))
            },
            isCause: { ($0 as? CocoaError)?.code == .fileReadNoSuchFile }
        ),
        Case(
            name: "A file written into a folder that does not exist: Foundation's error",
            code: .cannotWrite,
            fail: { folder in try AtomicFile.write(Data(), to: folder.path("none/x.json")) },
            isCause: { $0 is CocoaError }
        ),
        Case(
            name: "A proxy that answers HTTP 500 to every try: the last try's failure",
            code: .providerUnavailable,
            fail: { _ in
                let server = try await TTSServer()
                let transport = HTTPTransport(headers: [], timeoutSeconds: 10, retry: PrepareTests.fastRetry)
                let provider = ProxySpeechProvider(baseURL: server.baseURL, transport: transport)
                _ = try await provider.speak(SpeechRequest(text: "[status=500] Always broken.", voice: .defaultVoice))
            },
            isCause: { ($0 as? HTTPTransport.TransportFailure)?.error.lines == ["HTTP 500: upstream said 500"] }
        ),
    ]

    @Test("An error made from a caught error keeps it as its underlying error", arguments: cases)
    func keepsCause(_ row: Case) async throws {
        let folder = try TemporaryFolder()
        let error = try await #require(throws: SessionError.self) { try await row.fail(folder) }
        #expect(error.code == row.code, "\(error)")
        let cause = try #require(error.underlyingError, "\(error) keeps no underlying error")
        #expect(row.isCause(cause), "\(error): \(type(of: cause)) \(cause)")
    }
}
