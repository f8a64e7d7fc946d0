import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Writes `text` to `path`, creating folders as needed.
private func write(_ text: String, to path: String) throws {
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent,
        withIntermediateDirectories: true
    )
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}

/// What `SoundLibrary.entries(json:name:)` throws for `json`, as lines.
private func problems(_ json: String) -> [String] {
    do {
        _ = try SoundLibrary.entries(json: Data(json.utf8), name: "lib/sounds.json")
        return []
    } catch {
        return error.lines
    }
}

/// The names in `folder` with their inode and modification time.
private func snapshot(_ folder: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
        let attributes = try FileManager.default.attributesOfItem(
            atPath: (folder as NSString).appendingPathComponent(name)
        )
        let inode = attributes[.systemFileNumber].map { "\($0)" } ?? "?"
        let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        result[name] = "\(inode) \(date) \(attributes[.size] ?? 0)"
    }
    return result
}

@Suite("Sound libraries")
struct SoundLibraryTests {
    @Test(
        "A bare name is looked for as .caf, then .wav, .flac, .mp3, .ogg, .m4a, .mp4, .aac; missing lists every path tried"
    )
    func priority() throws {
        let folder = try TemporaryFolder()
        for fileExtension in SoundLibrary.extensions { try write("", to: folder.path("bell.\(fileExtension)")) }
        let library = try SoundLibrary(folder: folder.url.path)
        #expect(library.entries.isEmpty && !library.hasIndex)
        for fileExtension in SoundLibrary.extensions {
            #expect(library.resolve("bell") == .found(path: folder.path("bell.\(fileExtension)"), entry: nil))
            try FileManager.default.removeItem(atPath: folder.path("bell.\(fileExtension)"))
        }
        #expect(
            library.resolve("bell")
                == .missing(
                    lookedFor: ["caf", "wav", "flac", "mp3", "ogg", "m4a", "mp4", "aac"].map {
                        folder.path("bell.\($0)")
                    }
                )
        )
    }

    @Test("An id names its entry's file; the entry comes with it")
    func entryByID() throws {
        let folder = try TemporaryFolder()
        try write(
            #"[{"id": "forest", "name": "Forest", "file": "forest-ambience", "gain": 0.15, "loop": true, "iconName": "leaf"}]"#,
            to: folder.path("sounds.json")
        )
        try write("", to: folder.path("forest-ambience.mp3"))
        try write("", to: folder.path("forest-ambience.ogg"))
        try write("", to: folder.path("forest.wav"))
        let library = try SoundLibrary(folder: folder.url.path)
        let forest = SoundEntry(id: "forest", name: "Forest", file: "forest-ambience", gain: 0.15, loop: true)
        #expect(library.entries == [forest])
        #expect(library.resolve("forest") == .found(path: folder.path("forest-ambience.mp3"), entry: forest))
        // A bare file name finds the file, and the entry whose file it is.
        #expect(library.resolve("forest-ambience") == .found(path: folder.path("forest-ambience.mp3"), entry: forest))
        #expect(
            library.listing() == [
                SoundListing(entry: forest, lookup: .found(path: folder.path("forest-ambience.mp3"), entry: forest))
            ]
        )
    }

    @Test("Names match regardless of case, an exact match first: seed 003's gong-ende finds gong-Ende.caf")
    func caseInsensitive() throws {
        let folder = try TemporaryFolder()
        try write("", to: folder.path("gong-Ende.caf"))
        try write("", to: folder.path("Lang.wav"))
        try write("", to: folder.path("lang.mp3"))
        let bare = try SoundLibrary(folder: folder.url.path)
        #expect(bare.resolve("gong-ende") == .found(path: folder.path("gong-Ende.caf"), entry: nil))
        #expect(bare.resolve("GONG-ENDE") == .found(path: folder.path("gong-Ende.caf"), entry: nil))
        // An exact name wins over a case variant earlier in the extension order.
        #expect(bare.resolve("lang") == .found(path: folder.path("lang.mp3"), entry: nil))
        #expect(bare.resolve("LANG") == .found(path: folder.path("Lang.wav"), entry: nil))
        #expect(
            bare.resolve("gong-end")
                == .missing(lookedFor: SoundLibrary.extensions.map { folder.path("gong-end.\($0)") })
        )

        // Ids too, and an entry's file whose case differs from the file's.
        try write(
            #"[{"id": "Ende", "file": "GONG-ENDE"}, {"id": "ende", "file": "lang"}]"#,
            to: folder.path("sounds.json")
        )
        let indexed = try SoundLibrary(folder: folder.url.path)
        let (upper, lower) = (indexed.entries[0], indexed.entries[1])
        #expect(indexed.resolve("Ende") == .found(path: folder.path("gong-Ende.caf"), entry: upper))
        #expect(indexed.resolve("ende") == .found(path: folder.path("lang.mp3"), entry: lower))
        #expect(indexed.resolve("ENDE") == .found(path: folder.path("gong-Ende.caf"), entry: upper))
    }

    @Test("The app's own sounds.json (seed 002) as it is: filename, volume, localized name and description, iconName")
    func appShape() throws {
        let json = #"""
            [{"id": "silent", "filename": "silence.m4a", "name": {"en": "Silence", "de": "Stille"},
              "description": {"en": "Keeps the app playing", "de": "Hält die App wach"}, "iconName": "speaker.slash", "volume": 0.15},
             {"id": "forest", "filename": "forest-ambience.mp3", "name": {"de": "Wald", "fr": "Forêt"}, "iconName": "leaf", "volume": 0.15},
             {"id": "rain", "filename": "rain", "name": "sound.rain.name", "volume": 0.2}]
            """#
        var warnings: [String] = []
        let entries = try SoundLibrary.entries(json: Data(json.utf8), name: "sounds.json", warnings: &warnings)
        #expect(warnings.isEmpty, "the app's keys are known: \(warnings)")
        #expect(
            entries == [
                SoundEntry(id: "silent", name: "Silence", file: "silence.m4a", gain: 0.15),
                // Without English, the first language in order.
                SoundEntry(id: "forest", name: "Wald", file: "forest-ambience.mp3", gain: 0.15),
                SoundEntry(id: "rain", name: "sound.rain.name", file: "rain", gain: 0.2),
            ]
        )
        // A typo of the app's keys is a warning with the nearest key, as for ours.
        var typos: [String] = []
        _ = try SoundLibrary.entries(
            json: Data(#"[{"id": "a", "file": "a", "volme": 0.5}]"#.utf8),
            name: "sounds.json",
            warnings: &typos
        )
        #expect(
            typos == [#"sounds.json: [0].volme: is not a field of a sound (did you mean "volume"?); it is ignored"#]
        )
    }

    @Test("A file with an extension is tried as it is, then its stem with each extension")
    func fileWithExtension() throws {
        let folder = try TemporaryFolder()
        try write(#"[{"id": "chime", "file": "chime.mp3"}]"#, to: folder.path("sounds.json"))
        let library = try SoundLibrary(folder: folder.url.path)
        let chime = SoundEntry(id: "chime", file: "chime.mp3")
        #expect(chime.name == "chime")
        #expect(
            library.resolve("chime")
                == .missing(
                    lookedFor: ["mp3", "caf", "wav", "flac", "ogg", "m4a", "mp4", "aac"].map {
                        folder.path("chime.\($0)")
                    }
                )
        )
        try write("", to: folder.path("chime.wav"))
        #expect(library.resolve("chime") == .found(path: folder.path("chime.wav"), entry: chime))
        try write("", to: folder.path("chime.mp3"))
        #expect(library.resolve("chime") == .found(path: folder.path("chime.mp3"), entry: chime))
    }

    @Test("An argument with a slash is a path, found or missing as it is")
    func pathArgument() throws {
        let folder = try TemporaryFolder()
        try write("", to: folder.path("own.wav"))
        try write("", to: folder.path("lib/own.caf"))
        let library = try SoundLibrary(folder: folder.path("lib"))
        #expect(library.resolve(folder.path("own.wav")) == .found(path: folder.path("own.wav"), entry: nil))
        #expect(library.resolve(folder.path("none.wav")) == .missing(lookedFor: [folder.path("none.wav")]))
        #expect(library.resolve("sub/own") == .missing(lookedFor: ["sub/own"]))
        #expect(library.resolve("own") == .found(path: folder.path("lib/own.caf"), entry: nil))
        // A folder is not a sound.
        #expect(library.resolve(folder.path("lib")) == .missing(lookedFor: [folder.path("lib")]))
    }

    @Test("A folder without sounds.json lists its sound files by stem, whatever the case of their extensions")
    func bareListing() throws {
        let folder = try TemporaryFolder()
        for name in ["b.wav", "b.mp3", "a.ogg", "notes.txt", "c.FLAC"] { try write("", to: folder.path(name)) }
        let library = try SoundLibrary(folder: folder.url.path)
        #expect(
            library.listing() == [
                SoundListing(
                    entry: SoundEntry(id: "a", file: "a"),
                    lookup: .found(path: folder.path("a.ogg"), entry: nil)
                ),
                SoundListing(
                    entry: SoundEntry(id: "b", file: "b"),
                    lookup: .found(path: folder.path("b.wav"), entry: nil)
                ),
                // An extension in another case is found, as any name is.
                SoundListing(
                    entry: SoundEntry(id: "c", file: "c"),
                    lookup: .found(path: folder.path("c.FLAC"), entry: nil)
                ),
            ]
        )
    }

    @Test(
        "A broken sounds.json is one line per problem, naming the file and the JSON path",
        arguments: [
            (#"{"id": "a"}"#, ["lib/sounds.json: (top level): expected an array of sounds, found an object"]),
            (#"[{"id": "a", "file": "a", "gain": -1}]"#, ["lib/sounds.json: [0].gain: -1 must be 0 or more"]),
            (#"[{"id": "a", "file": "a", "gain": -0.5}]"#, ["lib/sounds.json: [0].gain: -0.5 must be 0 or more"]),
            (
                #"[{"id": }]"#,
                [
                    "lib/sounds.json: line 1, column 9: expected a value (object, array, string, number, true, false or null)"
                ]
            ),
            (
                #"""
                [{"id": "gong", "file": "g", "gain": 0, "loop": false}, "x", {"file": 3},
                 {"id": "gong", "file": "h", "gain": "loud", "loop": 1},
                 {"id": "a/b", "name": "", "file": "/abs", "gain": null, "loop": null}]
                """#,
                [
                    "lib/sounds.json: [1]: expected an object, found a string",
                    "lib/sounds.json: [2].id: is required but missing",
                    "lib/sounds.json: [2].file: expected a string, found a number",
                    "lib/sounds.json: [3].id: \"gong\" is already the id of [0]",
                    "lib/sounds.json: [3].gain: expected a number, found a string",
                    "lib/sounds.json: [3].loop: expected true or false, found a number",
                    "lib/sounds.json: [4].id: \"a/b\" may contain only letters, digits, '.', '_' and '-' (1 to 128 of them), not '.' or '..'",
                    "lib/sounds.json: [4].name: must not be empty",
                    "lib/sounds.json: [4].file: \"/abs\" must be a name in the library's folder, not an absolute path",
                ]
            ),
            // The app's shape, broken: a file or gain given twice, a localized name that is not text.
            (
                #"""
                [{"id": "a", "file": "a", "filename": "b.mp3"}, {"id": "b", "filename": "b", "gain": 1, "volume": 0.5},
                 {"id": "c", "filename": "/c.mp3", "volume": -1, "name": {"en": 3}}, {"id": "d"}]
                """#,
                [
                    "lib/sounds.json: [0].filename: names the file a second time, after \"file\"; give one of them",
                    "lib/sounds.json: [1].volume: sets the gain a second time, after \"gain\"; give one of them",
                    "lib/sounds.json: [2].name.en: expected a non-empty string, found a number",
                    "lib/sounds.json: [2].filename: \"/c.mp3\" must be a name in the library's folder, not an absolute path",
                    "lib/sounds.json: [2].volume: -1 must be 0 or more",
                    "lib/sounds.json: [3].file: is required but missing (or \"filename\", as an app's sounds.json names it)",
                ]
            ),
        ]
    )
    func badIndex(json: String, expected: [String]) {
        #expect(problems(json) == expected)
    }

    @Test("A folder that is not there, or is a file, is an error that says so")
    func badFolder() throws {
        let folder = try TemporaryFolder()
        try write("", to: folder.path("file"))
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                "Cannot open the sound library \(folder.path("none")): no such folder"
            )
        ) {
            try SoundLibrary(folder: folder.path("none"))
        }
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                "Cannot open the sound library \(folder.path("file")): it is a file, not a folder"
            )
        ) {
            try SoundLibrary(folder: folder.path("file"))
        }
        try write("[", to: folder.path("lib/sounds.json"))
        #expect(
            throws: SessionError(
                .invalidSoundLibrary,
                "\(folder.path("lib/sounds.json")): line 1, column 2: the text ends where a value was expected"
            )
        ) {
            try SoundLibrary(folder: folder.path("lib"))
        }
    }

    @Test("The default folder sits beside the clip cache")
    func defaultFolder() {
        #expect(
            SoundLibrary.defaultFolder(environment: ["XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"])
                == "/x/cache/render-session/sounds/v5"
        )
        #expect(
            SoundLibrary.defaultFolder(environment: ["HOME": "/home/u"]) == "/home/u/.cache/render-session/sounds/v5"
        )
        #expect(
            SoundLibrary.defaultFolder(environment: ["XDG_CACHE_HOME": "relative", "HOME": "/home/u"])
                == "/home/u/.cache/render-session/sounds/v5"
        )
    }

    @Test("sounds.json round-trips through json(_:)")
    func jsonRoundTrip() throws {
        let data = SoundLibrary.json(SoundLibrary.builtinEntries)
        #expect(try SoundLibrary.entries(json: data, name: "x") == SoundLibrary.builtinEntries)
    }

    @Test("The default library is made once, by two at once, then only opened; its sounds decode to their lengths")
    func builtin() async throws {
        let folder = try TemporaryFolder()
        let environment = ["XDG_CACHE_HOME": folder.path("cache"), "HOME": folder.path("home")]
        let library = folder.path("cache/render-session/sounds/v5")
        async let first = Task.detached { try SoundLibrary.builtin(environment: environment) }.value
        async let second = Task.detached { try SoundLibrary.builtin(environment: environment) }.value
        let (one, two) = try await (first, second)
        #expect(one.folder == library && two.folder == library)
        #expect(one.entries == SoundLibrary.builtinEntries && two.entries == SoundLibrary.builtinEntries)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: library).sorted() == [
                ".render-session.lock", "auftakt.flac", "ausatmen.flac", "ausklang.flac", "completion.flac",
                "drone.flac", "einatmen.flac", "forest.flac", "gong.flac", "halten-aus.flac", "halten-ein.flac",
                "kurz.flac", "lang.flac", "last-round.flac", "rain.flac", "silent.flac", "sounds.json",
                "triple-gong.flac",
            ]
        )
        #expect(
            try String(contentsOfFile: library + "/sounds.json", encoding: .utf8) == """
                [
                  {"id": "gong", "name": "Gong", "file": "gong", "loop": false},
                  {"id": "triple-gong", "name": "Triple gong", "file": "triple-gong", "loop": false},
                  {"id": "completion", "name": "Completion gong", "file": "completion", "loop": false},
                  {"id": "rain", "name": "Rain", "file": "rain", "gain": 0.15, "loop": true},
                  {"id": "drone", "name": "Drone", "file": "drone", "gain": 0.15, "loop": true},
                  {"id": "forest", "name": "Forest", "file": "forest", "gain": 0.15, "loop": true},
                  {"id": "silent", "name": "Silent", "file": "silent", "gain": 0.15, "loop": true},
                  {"id": "gong-dreimal", "name": "Triple gong", "file": "triple-gong", "loop": false},
                  {"id": "gong-ende", "name": "Completion gong", "file": "completion", "loop": false},
                  {"id": "einatmen", "name": "Breathe in", "file": "einatmen", "loop": false},
                  {"id": "halten-ein", "name": "Hold after breathing in", "file": "halten-ein", "loop": false},
                  {"id": "ausatmen", "name": "Breathe out", "file": "ausatmen", "loop": false},
                  {"id": "halten-aus", "name": "Hold after breathing out", "file": "halten-aus", "loop": false},
                  {"id": "auftakt", "name": "Get ready", "file": "auftakt", "loop": false},
                  {"id": "kurz", "name": "Short beep", "file": "kurz", "loop": false},
                  {"id": "lang", "name": "Long beep", "file": "lang", "loop": false},
                  {"id": "last-round", "name": "Last round", "file": "last-round", "loop": false},
                  {"id": "ausklang", "name": "Closing chime", "file": "ausklang", "loop": false}
                ]

                """
        )
        let before = try snapshot(library)
        let again = try SoundLibrary.builtin(environment: environment)
        #expect(again.entries == SoundLibrary.builtinEntries)
        #expect(try snapshot(library) == before, "the second open writes nothing")

        // Each sound is asked for by its own id, the cues by the names seed 003 gives them.
        for sound in SynthesizedSound.allCases {
            let path = library + "/\(sound.rawValue).flac"
            let entry = try #require(again.entries.first { $0.id == sound.rawValue }, "\(sound) has an entry")
            #expect(entry.file == sound.rawValue && entry.loop == sound.isBed)
            #expect(again.resolve(sound.rawValue) == .found(path: path, entry: entry))
            let measurement = try AudioFileDecoder.measure(path: path)
            #expect(measurement.frameCount == sound.frameCount, "\(sound)")
            #expect(measurement.sampleRate == 44_100 && measurement.channelCount == .mono)
        }
        let entry = { (id: String) in SoundLibrary.builtinEntries.first { $0.id == id } }
        #expect(
            again.resolve("gong-dreimal") == .found(path: library + "/triple-gong.flac", entry: entry("gong-dreimal"))
        )
        #expect(again.resolve("gong-ende") == .found(path: library + "/completion.flac", entry: entry("gong-ende")))
        // Seed 002's ids, in any case, as its app's settings store them ("Silent" before its migration).
        for (id, file) in [("silent", "silent"), ("Silent", "silent"), ("forest", "forest"), ("FOREST", "forest")] {
            #expect(again.resolve(id) == .found(path: library + "/\(file).flac", entry: entry(file)), "\(id)")
        }

        // A file deleted by hand is made again, and only it.
        try FileManager.default.removeItem(atPath: library + "/rain.flac")
        _ = try SoundLibrary.builtin(environment: environment)
        let after = try snapshot(library)
        #expect(after.keys.sorted() == before.keys.sorted())
        #expect(
            after.filter { $0.key != "rain.flac" && $0.key != "sounds.json" }
                == before.filter { $0.key != "rain.flac" && $0.key != "sounds.json" }
        )
    }
}
