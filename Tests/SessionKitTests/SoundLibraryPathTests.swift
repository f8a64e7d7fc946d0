import Foundation
import SessionKit
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
}
