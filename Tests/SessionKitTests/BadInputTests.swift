import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("Bad clips", .serialized)
struct BadClipTests {
    static let bad = Repository.fixtures.appendingPathComponent("bad")

    @Test(
        "Every broken clip is refused with one line naming the file and the cause",
        arguments: [
            ("empty.mp3", AudioError.Code.noAudio, "the file is empty"),
            (
                "id3-only.mp3", .noAudio,
                "no MPEG audio frames found (the file is empty, holds only tags, or is not audio)"
            ),
            (
                "random-bytes.mp3", .noAudio,
                "no MPEG audio frames found (the file is empty, holds only tags, or is not audio)"
            ),
            (
                "html-error-page.mp3", .noAudio,
                "no MPEG audio frames found (the file is empty, holds only tags, or is not audio)"
            ),
            (
                "cut-to-a-third.mp3", .truncated,
                "the file is cut short: its LAME/Xing tag promises 371691 frames, the stream holds 123840"
            ),
            (
                "rate-change.mp3", .formatChanged,
                "the stream is several streams stitched together (its format or encoder tag changes part of the way through)"
            ),
            (
                "short-data.wav", .truncated,
                "the file is cut short: its header declares 16000 bytes of audio, it holds 6000"
            ),
        ]
    )
    func refused(name: String, code: AudioError.Code, reason: String) throws {
        let path = Self.bad.appendingPathComponent(name).path
        #expect {
            _ = try AudioFileDecoder.measure(path: path)
        } throws: { error in
            guard let error = error as? AudioError else { return false }
            #expect(error.code == code, "\(error)")
            #expect(error.reason == reason)
            #expect(!error.description.contains("\n"))
            return error.description.contains(path)
        }
    }

    @Test("A render with a broken clip fails before writing, naming the text and key; nothing is left")
    func renderRefuses() async throws {
        let folder = try TemporaryFolder()
        let cache = folder.url.appendingPathComponent("cache")
        try FileManager.default.copyItem(at: Repository.cache, to: cache)
        let script = try ScriptFile.load(Repository.script("edge-cases").path)
        let tied = ClipCache(directory: cache.path).entry(text: "Tied.", voice: Voice.defaultVoice.id, speed: 1)
        try FileManager.default.removeItem(atPath: tied.path)
        try FileManager.default.copyItem(
            atPath: Self.bad.appendingPathComponent("html-error-page.mp3").path,
            toPath: tied.path
        )
        await #expect {
            _ = try await planOffline(script, cache: cache.path)
        } throws: { error in
            (error as? SessionError)?.lines == [
                "Clip for \"Tied.\" (key \(tied.key)): Cannot decode \(tied.path): no MPEG audio frames found (the file is empty, holds only tags, or is not audio)"
            ]
        }
    }

    @Test("A clip that is a directory says so")
    func directoryClip() throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("dir.mp3"), withIntermediateDirectories: false)
        #expect(
            throws: AudioError(
                .cannotOpen,
                path: folder.path("dir.mp3"),
                reason: "it is a directory, not an audio file"
            )
        ) {
            try AudioFileDecoder.measure(path: folder.path("dir.mp3"))
        }
    }

    @Test("A clip that is unreadable says so", .enabled(if: getuid() != 0, "running as root, every file is readable"))
    func unreadableClip() throws {
        let folder = try TemporaryFolder()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: folder.path("locked.mp3")))
        try FileManager.default.setAttributes([.posixPermissions: 0], ofItemAtPath: folder.path("locked.mp3"))
        #expect(
            throws: AudioError(
                .cannotOpen,
                path: folder.path("locked.mp3"),
                reason: "the file is not readable (permission denied)"
            )
        ) {
            try AudioFileDecoder.measure(path: folder.path("locked.mp3"))
        }
    }
}
