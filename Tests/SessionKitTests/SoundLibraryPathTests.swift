import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Issue 22, item 9: a library's files stay inside its folder, whatever `sounds.json` says.
@Suite("Sound library paths")
struct SoundLibraryPathTests {
    /// A library folder `lib` in a fresh folder, with `secret.wav` beside it (outside the library).
    func library(_ json: String) throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("lib"), withIntermediateDirectories: true)
        try Data("RIFF secret".utf8).write(to: URL(fileURLWithPath: folder.path("secret.wav")))
        try Data("RIFF gong".utf8).write(to: URL(fileURLWithPath: folder.path("lib/gong.wav")))
        try Data(json.utf8).write(to: URL(fileURLWithPath: folder.path("lib/sounds.json")))
        return folder
    }

    @Test(
        "A file entry that climbs out with '..' is an error at its JSON path",
        arguments: ["../secret.wav", "../secret", "sub/../../secret.wav", ".."]
    )
    func parentSteps(file: String) throws {
        let folder = try library(#"[{"id": "gong", "file": "gong"}, {"id": "x", "file": "\#(file)"}]"#)
        let index = folder.path("lib/sounds.json")
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                "\(index): [1].file: \"\(file)\" must name a file inside the library's folder, not climb out of it with '..'"
            )
        ) {
            try SoundLibrary(folder: folder.path("lib"))
        }
    }

    @Test("A link in the folder that points out of it is an error naming sounds.json, the JSON path and the rule")
    func linkOut() throws {
        let folder = try library(#"[{"id": "gong", "file": "gong"}, {"id": "x", "file": "x"}]"#)
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("lib/x.wav"),
            withDestinationPath: folder.path("secret.wav")
        )
        let index = folder.path("lib/sounds.json")
        let resolved = URL(fileURLWithPath: folder.path("secret.wav")).resolvingSymlinksInPath().path
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                "\(index): [1].file: \"x\" leads to \(resolved), outside the library's folder; a library's files must stay inside its folder"
            )
        ) {
            try SoundLibrary(folder: folder.path("lib"))
        }
    }

    @Test("A link that stays inside the folder is fine")
    func linkInside() throws {
        let folder = try library(#"[{"id": "gong", "file": "gong"}, {"id": "x", "file": "x"}]"#)
        try FileManager.default.createSymbolicLink(atPath: folder.path("lib/x.wav"), withDestinationPath: "gong.wav")
        let library = try SoundLibrary(folder: folder.path("lib"))
        #expect(library.resolve("x") == .found(path: folder.path("lib/x.wav"), entry: library.entries[1]))
    }

    @Test(
        "A bare file name is never found through a link that leads out of the folder, with or without sounds.json",
        arguments: [true, false]
    )
    func bareNameLinkOut(withIndex: Bool) throws {
        let folder = try library(#"[{"id": "gong", "file": "gong"}]"#)
        if !withIndex { try FileManager.default.removeItem(atPath: folder.path("lib/sounds.json")) }
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("lib/leak.wav"),
            withDestinationPath: folder.path("secret.wav")
        )
        let library = try SoundLibrary(folder: folder.path("lib"))
        let tried = library.candidates(for: "leak")
        #expect(library.resolve("leak") == .missing(lookedFor: tried))
        #expect(library.resolve("leak.wav") == .missing(lookedFor: library.candidates(for: "leak.wav")))
        #expect(library.resolve("LEAK") == .missing(lookedFor: library.candidates(for: "LEAK")), "nor by another case")
        #expect(
            library.resolve("gong") != .missing(lookedFor: library.candidates(for: "gong")),
            "a file inside still is"
        )
    }

    // Issue 41, item 9: the lookup and the open are two steps; every open checks the file it
    // opened, so a file swapped for a link leading out between them is refused, never read.

    @Test(
        "A file a name found, opened as inside its library, is refused when it leads out; as a path given, it is opened"
    )
    func decoderInsideFolder() throws {
        let folder = try LayeredRenderTests.gongLibrary()
        let outside = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: folder.path("ding.wav"), toPath: outside.path("secret.wav"))
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("leak.wav"),
            withDestinationPath: outside.path("secret.wav")
        )
        let resolved = try #require(FileSystem.resolvedPath(outside.path("secret.wav")))
        #expect(
            throws: AudioError(
                .cannotOpen,
                path: folder.path("leak.wav"),
                reason: "it leads to \(resolved), outside the folder \(folder.url.path)"
            )
        ) {
            try AudioFileDecoder(path: folder.path("leak.wav"), inside: folder.url.path)
        }
        #expect(try AudioFileDecoder(path: folder.path("leak.wav")).sampleRate.hertz == 44_100)
        // A link inside the folder to a file inside it is followed, an absolute one too.
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("again.wav"),
            withDestinationPath: folder.path("ding.wav")
        )
        #expect(
            try AudioFileDecoder(path: folder.path("again.wav"), inside: folder.url.path).sampleRate.hertz == 44_100
        )
    }

    @Test("The open file is what is checked: one replaced under its name after the open is refused")
    func replacedAfterOpen() throws {
        let folder = try LayeredRenderTests.gongLibrary()
        let path = folder.path("ding.wav")
        let file = try FileDescriptor.open(path, .readOnly)
        #expect(file.placeOutside(openedThrough: path, folder: folder.url.path) == nil)
        try FileManager.default.copyItem(atPath: path, toPath: folder.path("new.wav"))
        try FileSystem.rename(folder.path("new.wav"), to: path)
        #expect(
            file.placeOutside(openedThrough: path, folder: folder.url.path)
                == "it was replaced while it was being opened"
        )
    }

    @Test("A sound found when planned and swapped for a link leading out before the render is refused, nothing written")
    func swappedBeforeRender() async throws {
        let library = try LayeredRenderTests.gongLibrary()
        let outside = try TemporaryFolder()
        let folder = try TemporaryFolder()
        let pipeline = LayeredRenderTests.pipeline(
            SoundSettings(startGong: "gong", loudness: .off),
            library: library.url.path,
            audio: folder.path("s.wav")
        )
        let script = try ScriptFile.load(Repository.script("edge-cases").path)
        let timeline = try pipeline.plan(script, clips: try await pipeline.prepare(texts: script.allTexts))
        #expect(timeline.overlays.map(\.source.path) == [library.path("ding.wav")])
        try FileManager.default.moveItem(atPath: library.path("ding.wav"), toPath: outside.path("secret.wav"))
        try FileManager.default.createSymbolicLink(
            atPath: library.path("ding.wav"),
            withDestinationPath: outside.path("secret.wav")
        )
        let resolved = try #require(FileSystem.resolvedPath(outside.path("secret.wav")))
        let error = #expect(throws: SessionError.self) { try pipeline.render(timeline) }
        #expect(error?.code == .unusableSound)
        #expect(
            error?.lines.first?.hasSuffix(
                "\(library.path("ding.wav")): it leads to \(resolved), outside the folder \(library.url.path)"
            ) == true,
            "\(error?.lines ?? [])"
        )
        #expect(try folder.contents() == [], "nothing is written")
    }
}
