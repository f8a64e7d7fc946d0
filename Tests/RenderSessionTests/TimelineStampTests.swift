import Foundation
import SessionTimeline
import TestSupport
import Testing

/// A rendered file and its timeline stay together: a render writes the timeline beside the file
/// and records the file's size and SHA-256 in it, and nothing describes a file by another
/// render's timeline (issue 42, item 1).
@Suite("The timeline beside a rendered file", .serialized)
struct TimelineStampTests {
    static let render = [
        "render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--offline", "--loudness", "off",
    ]

    /// The SHA-256 of the file at `path`, as coreutils' `sha256sum` prints it.
    static func sha256(_ path: String) async throws -> String {
        let result = try await ChildProcess.run("/usr/bin/sha256sum", [path])
        #expect(result.termination == .exited(0))
        return String(result.standardOutputText.prefix(64))
    }

    @Test(
        "render writes the timeline beside the audio by default, with the file's size and SHA-256, and prints both paths"
    )
    func writtenBeside() async throws {
        let folder = try TemporaryFolder()
        let audio = folder.path("x.mp3")
        let result = try await renderSession(Self.render + ["-o", audio, "--seed", "3"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput == "\(audio)\n\(audio).timeline.json\n")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: audio + ".timeline.json"))
        )
        let size = try FileManager.default.attributesOfItem(atPath: audio)[.size] as? Int
        #expect(timeline.audioFile?.bytes == size.map(Int64.init))
        #expect(timeline.audioFile?.sha256 == (try await Self.sha256(audio)))
        let verified = try await renderSession(["verify", audio])
        #expect(verified.status == 0, "\(verified.standardError)")
    }

    @Test("--no-timeline writes none and removes the one an earlier render left; verify then wants --no-timeline")
    func noTimeline() async throws {
        let folder = try TemporaryFolder()
        let audio = folder.path("x.wav")
        #expect(try await renderSession(Self.render + ["-o", audio, "--seed", "3"]).status == 0)
        #expect(FileManager.default.fileExists(atPath: audio + ".timeline.json"))

        let again = try await renderSession(Self.render + ["-o", audio, "--seed", "4", "--no-timeline"])
        #expect(again.status == 0, "\(again.standardError)")
        #expect(again.standardOutput == "\(audio)\n")
        #expect(try folder.contents() == ["x.wav"], "the stale timeline is gone")

        let unchecked = try await renderSession(["verify", audio])
        #expect(unchecked.status == 65)
        #expect(
            unchecked.standardError
                == "error: Cannot verify \(audio): it has no timeline (\(audio).timeline.json does not exist); name it with --timeline, or check only that it decodes and does not clip with --no-timeline\n"
        )
        let decodingOnly = try await renderSession(["verify", audio, "--no-timeline"])
        #expect(decodingOnly.status == 0, "\(decodingOnly.standardError)")

        let both = try await renderSession(Self.render + ["-o", audio, "--no-timeline", "--timeline", "t.json"])
        #expect(both.status == 64)
        #expect(both.standardError.hasPrefix("error: --no-timeline and --timeline contradict each other"))
    }

    @Test("verify, show, the picture and the page refuse a timeline of another render, naming its session")
    func foreignTimeline() async throws {
        let folder = try TemporaryFolder()
        let audio = folder.path("x.wav")
        let sidecar = audio + ".timeline.json"
        #expect(try await renderSession(Self.render + ["-o", audio, "--seed", "3"]).status == 0)
        let old = folder.path("old.json")
        try FileManager.default.copyItem(atPath: sidecar, toPath: old)
        // The same session and length with another seed: only the bytes tell the files apart.
        #expect(try await renderSession(Self.render + ["-o", audio, "--seed", "4"]).status == 0)
        try FileManager.default.removeItem(atPath: sidecar)
        try FileManager.default.copyItem(atPath: old, toPath: sidecar)

        let described = "describes another file, rendered from session \"edge-cases\" (\"Edge cases\", seed 3) to "
        for (arguments, verb, name) in [
            (["verify", audio], "verify", sidecar),
            (["show", audio], "show", sidecar),
            (["show", old, "--audio", audio, "-o", folder.path("p.svg")], "draw", old),
            (["show", old, "--audio", audio, "-o", folder.path("p.html")], "draw", old),
        ] {
            let result = try await renderSession(arguments)
            #expect(result.status == 65, "\(arguments)")
            #expect(
                result.standardError.hasPrefix("error: Cannot \(verb) \(audio): \(name) \(described)"),
                "\(result.standardError)"
            )
            #expect(result.standardError.hasSuffix("; give the timeline written with it, or render it again\n"))
            #expect(result.standardOutput.isEmpty)
        }
        #expect(try folder.contents() == ["old.json", "x.wav", "x.wav.timeline.json"], "no picture, no page")
    }
}
