import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// What crosses the tool's borders from others (issue 22), tried through the command.
@Suite("Hostile input through the command: voice names, printed titles, input sizes")
struct HostileInputCommandTests {
    static let script = Repository.script("ten-minute-session").path

    /// Each command that speaks, with the arguments that make it write into `folder`.
    static func commands(_ folder: TemporaryFolder) -> [[String]] {
        [
            ["timeline", script, "--cache", folder.path("cache")],
            ["render", script, "--cache", folder.path("cache"), "-o", folder.path("out.wav")],
            ["prepare", script, "--cache", folder.path("cache")],
            ["batch", script, "--cache", folder.path("cache"), "-o", folder.path("batch")],
            ["queue", script, "--cache", folder.path("cache"), "-o", folder.path("queue")],
        ]
    }

    @Test(
        "A voice id is a name from the engine's list, never a path: one line, exit 65, before any work",
        arguments: [
            (
                "espeak:../../../../etc/passwd",
                #"error: unknown voice "espeak:../../../../etc/passwd": eSpeak NG has no such voice; `render-session voices` lists them"#
            ),
            (
                "espeak:en-su",
                #"error: unknown voice "espeak:en-su": eSpeak NG has no such voice (did you mean "espeak:en-us"?); `render-session voices` lists them"#
            ),
            (
                "piper:../../models/evil",
                #"error: unknown voice "piper:../../models/evil": a Piper voice is a model's file name without .onnx, such as piper:en_US-joe-medium"#
            ),
        ]
    )
    func voiceIsNeverAPath(voice: String, expected: String) async throws {
        for arguments in Self.commands(try TemporaryFolder()) {
            let folder = try TemporaryFolder()
            let command = Self.commands(folder)[Self.commands(folder).firstIndex { $0[0] == arguments[0] }!]
            let result = try await renderSession(command + ["--voice", voice])
            #expect(result.status == 65, "\(command[0])")
            #expect(result.standardError == expected + "\n", "\(command[0])")
            #expect(try folder.contents() == [], "\(command[0]) wrote nothing")
        }
    }

    @Test("A session file's own voice is checked the same way")
    func scriptVoice() async throws {
        let folder = try TemporaryFolder()
        let json = #"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 60, "voice": "espeak:/dev/zero"}"#
        try Data(json.utf8).write(to: URL(fileURLWithPath: folder.path("timer.json")))
        let result = try await renderSession(["timeline", folder.path("timer.json"), "--cache", folder.path("cache")])
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: unknown voice \"espeak:/dev/zero\": eSpeak NG has no such voice; `render-session voices` lists them\n"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("cache")))
    }

    @Test(
        "A script's sounds are library names: a path is refused at its JSON path, a bare name is never a file in the working folder"
    )
    func scriptSoundPaths() async throws {
        let folder = try TemporaryFolder()
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.script)))
        func write(_ name: String, _ change: ([String: Any]) -> [String: Any]) throws -> String {
            let json = try JSONSerialization.data(withJSONObject: change(try #require(original as? [String: Any])))
            try json.write(to: URL(fileURLWithPath: folder.path(name)))
            return folder.path(name)
        }
        try FileManager.default.createDirectory(atPath: folder.path("library"), withIntermediateDirectories: true)
        // A file the script's writer hopes to have mixed in, in the folder the command runs in.
        try FileManager.default.copyItem(
            atPath: Repository.root.path + "/Fixtures/sounds/still-moment/silence.m4a",
            toPath: folder.path("secret.m4a")
        )
        let paths = try write("paths.json") {
            $0.merging(["sound": ["ambience": "/home/victim/private/recording.m4a", "bell": "../secret/secret.mp3"]]) {
                $1
            }
        }
        let rule =
            "is a path; a script names a sound by its name in the sound library, and only the command line gives a sound file's path"
        for command in ["render", "queue"] {
            let output = folder.path("\(command)-out")
            let result = try await renderSession(
                [
                    command, paths, "--cache", "Fixtures/cache", "--offline", "-o",
                    output + (command == "render" ? ".wav" : ""),
                ]
            )
            #expect(result.status == 65, "\(command)")
            #expect(
                result.standardError == """
                    error: \(paths): sound.ambience: "/home/victim/private/recording.m4a" \(rule)
                    error: \(paths): sound.bell: "../secret/secret.mp3" \(rule)

                    """,
                "\(command)"
            )
            #expect(
                !FileManager.default.fileExists(atPath: output)
                    && !FileManager.default.fileExists(atPath: output + ".wav")
            )
        }
        let timer = folder.path("timer.json")
        try Data(#"{"kind": "timer", "id": "t", "title": "T", "durationSeconds": 60, "endGong": "/etc/hosts"}"#.utf8)
            .write(to: URL(fileURLWithPath: timer))
        let timerResult = try await renderSession(["timeline", timer, "--cache", folder.path("cache")])
        #expect(timerResult.status == 65)
        #expect(timerResult.standardError == "error: \(timer): endGong: \"/etc/hosts\" \(rule)\n")

        // A bare name is looked for in the library only, though a file of that name is in the working folder.
        let bare = try write("bare.json") { $0.merging(["sound": ["bell": "secret.m4a"]]) { $1 } }
        let arguments = [
            "render", bare, "--cache", Repository.root.path + "/Fixtures/cache", "--offline", "--sounds", "library",
        ]
        let refused = try await renderSession(arguments + ["-o", "bare.wav"], directory: folder.url)
        #expect(refused.status == 65)
        #expect(
            refused.standardError.hasPrefix(
                "error: Bell \"secret.m4a\" (sound.bell) is not in the sound library library"
            )
        )
        // The same file given on the command line is the user's choice, and plays.
        let chosen = try await renderSession(
            arguments + ["-o", "chosen.wav", "--bell", "secret.m4a"],
            directory: folder.url
        )
        #expect(chosen.status == 0, "\(chosen.standardError)")
    }

    @Test("list escapes control characters in titles; error lines escape them too")
    func terminalEscapes() async throws {
        let folder = try TemporaryFolder()
        var script =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.script)))
            as! [String: Any]
        script["title"] = "Evil \u{1B}]0;pwned\u{07}\u{1B}[2J title"
        script["subtitle"] = "sub\u{9B}31mtitle"
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: folder.path("evil.json")))
        let list = try await renderSession(["list", folder.url.path])
        #expect(list.status == 0)
        #expect(!list.standardOutputBytes.contains(0x1B) && !list.standardOutput.unicodeScalars.contains("\u{9B}"))
        #expect(list.standardOutput.contains(#"Evil \u{1b}]0;pwned\u{7}\u{1b}[2J title — sub\u{9b}31mtitle"#))

        // A control character in a text is refused at its path, and the message shows it escaped.
        script["title"] = "T"
        script["segments"] = [["id": "a", "phase": "opening", "startSeconds": 0, "text": "Hi\u{1B}[2J"]]
        try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: folder.path("evil.json")))
        let timeline = try await renderSession(["timeline", folder.path("evil.json")])
        #expect(timeline.status == 65 && !timeline.standardError.utf8.contains(0x1B))
        #expect(
            timeline.standardError
                == "error: \(folder.path("evil.json")): segments[0].text: holds the control character U+001B at character 3; control characters are not speech\n"
        )
    }

    @Test("A script over 16 MiB is refused before parsing, from a file and from standard input")
    func oversizedScript() async throws {
        let folder = try TemporaryFolder()
        let big = Data(#"{"id": ""#.utf8) + Data(repeating: UInt8(ascii: "x"), count: 16 << 20) + Data(#""}"#.utf8)
        try big.write(to: URL(fileURLWithPath: folder.path("big.json")))
        let file = try await renderSession(["timeline", folder.path("big.json")])
        #expect(file.status == 65)
        #expect(
            file.standardError
                == "error: \(folder.path("big.json")): the script is larger than 16 MiB, the most a script may be\n"
        )
        let standardInput = try await renderSession(["timeline", "-"], input: big)
        #expect(
            standardInput.standardError
                == "error: <stdin>: the script is larger than 16 MiB, the most a script may be\n"
        )
    }

    @Test(
        "A timeline or queue over 32 MiB (a sparse 3 GB file, or standard input) is refused before it is read to its end"
    )
    func oversizedTimeline() async throws {
        let folder = try TemporaryFolder()
        let sparse = folder.path("big.json")
        #expect(FileManager.default.createFile(atPath: sparse, contents: Data("{".utf8)))
        #expect(truncate(sparse, 3 << 30) == 0)
        let line = "error: Cannot read timeline \(sparse): it is larger than 32 MiB, the most a timeline may be\n"
        for command in [
            ["show", sparse], ["position", sparse, "--at", "1"], ["verify", "x.wav", "--timeline", sparse],
        ] {
            // Only a read that stopped at the bound says this; one that read the 3 GB to its end
            // would say the JSON is cut short. (Its time says nothing: under the address sanitizer,
            // in a loaded suite, starting the command alone took up to 60 s.)
            let result = try await renderSession(command)
            #expect(result.status == 65 && result.standardError == line, "\(command): \(result.standardError)")
        }
        let big = Data(repeating: UInt8(ascii: " "), count: (32 << 20) + 1)
        let standardInput = try await renderSession(["position", "-", "--at", "1"], input: big)
        #expect(standardInput.status == 65)
        #expect(
            standardInput.standardError
                == "error: Cannot read timeline <stdin>: it is larger than 32 MiB, the most a timeline may be\n"
        )
    }

    /// The fixture timeline with `original` replaced by `hostile`.
    static func hostileTimeline(_ original: String, _ hostile: String, in folder: TemporaryFolder) throws -> String {
        let json = try String(contentsOfFile: "Fixtures/positions/five-seconds.timeline.json", encoding: .utf8)
        #expect(json.contains(original))
        let path = folder.path("hostile.json")
        try json.replacingOccurrences(of: original, with: hostile).write(
            toFile: path,
            atomically: true,
            encoding: .utf8
        )
        return path
    }

    @Test(
        "Frames no session holds, in a timeline or a queue, are one error line with the JSON path (exit 65), never a trap",
        arguments: [
            (
                #""startFrame": 1500, "frameCount": 2000,"#, #""startFrame": 9223372036854775807, "frameCount": 2000,"#,
                "items[2].startFrame: 9223372036854775807 frames is outside 0…663552000000 (ten days at 768 kHz)"
            ),
            (
                #""startFrame": 1500, "frameCount": 2000,"#, #""startFrame": 1500, "frameCount": 10000000000000000,"#,
                "items[2].frameCount: 10000000000000000 frames is outside 0…663552000000 (ten days at 768 kHz)"
            ),
            (
                #""plannedStartFrame": 1500, "lateByFrames": 0"#,
                #""plannedStartFrame": 1500, "lateByFrames": 9223372036854775807"#,
                "items[2].lateByFrames: 9223372036854775807 frames is outside 0…663552000000 (ten days at 768 kHz)"
            ),
            (
                #""startFrame": 0, "endFrame": 1500"#,
                #""startFrame": 9223372036854775807, "endFrame": -9223372036854775807"#,
                "phases[0].startFrame: 9223372036854775807 frames is outside 0…663552000000 (ten days at 768 kHz)"
            ),
            (
                #""startFrame": 0, "endFrame": 1500"#, #""startFrame": 1400, "endFrame": 100"#,
                "phases[0]: ends before it starts"
            ),
            (
                #""name": "gong", "startFrame": 800, "frameCount": 2000"#,
                #""name": "gong", "startFrame": 800, "frameCount": 9223372036854775807"#,
                "overlays[0].frameCount: 9223372036854775807 frames is outside 0…663552000000 (ten days at 768 kHz)"
            ),
            (
                #""startFrame": 3750, "frameCount": 1250"#, #""startFrame": 3750, "frameCount": 950000000"#,
                "items[4]: ends past ten days at 1000 Hz"
            ),
            (
                #""totalFrames": 5000,"#,
                #""totalFrames": 5000, "audioFile": {"bytes": 10, "sha256": "../../etc/passwd"},"#,
                "audioFile.sha256: a SHA-256 is 64 lowercase hexadecimal digits"
            ),
            (
                #""totalFrames": 5000,"#,
                #""totalFrames": 5000, "audioFile": {"bytes": -1, "sha256": "\#(String(repeating: "a", count: 64))"},"#,
                "audioFile.bytes: a size is not negative"
            ),
        ]
    )
    func hostileFrames(original: String, hostile: String, problem: String) async throws {
        let folder = try TemporaryFolder()
        let path = try Self.hostileTimeline(original, hostile, in: folder)
        let line = "error: Cannot read timeline \(path): \(problem)\n"
        for command in [["show", path], ["show", path, "-o", folder.path("x.svg")], ["position", path, "--at", "1"]] {
            let result = try await renderSession(command)
            #expect(result.status == 65 && result.standardError == line, "\(command): \(result.standardError)")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.path("x.svg")))
    }

    @Test("A queue item's sourceFrames of 2^63−1 is one error line with its JSON path, never a trap")
    func hostileQueueFrames() async throws {
        let folder = try TemporaryFolder()
        let json = try String(contentsOfFile: "Fixtures/positions/queue.json", encoding: .utf8)
            .replacingOccurrences(of: #""sourceFrames": 72345"#, with: #""sourceFrames": 9223372036854775807"#)
        try json.write(toFile: folder.path("queue.json"), atomically: true, encoding: .utf8)
        let result = try await renderSession(["position", folder.path("queue.json"), "--at", "1"])
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: Cannot read queue \(folder.path("queue.json")): items[1].sourceFrames: 9223372036854775807 frames is outside 0…663552000000 (ten days at 768 kHz)\n"
        )
    }

    @Test("A UTF-8 byte-order mark before a script file is skipped; a duplicate key is one line")
    func byteOrderMarkAndDuplicates() async throws {
        let folder = try TemporaryFolder()
        let original = try Data(contentsOf: URL(fileURLWithPath: Self.script))
        try (Data([0xEF, 0xBB, 0xBF]) + original).write(to: URL(fileURLWithPath: folder.path("bom.json")))
        let plain = try await renderSession(["timeline", Self.script, "--cache", Repository.cache.path, "--seed", "7"])
        let marked = try await renderSession([
            "timeline", folder.path("bom.json"), "--cache", Repository.cache.path, "--seed", "7",
        ])
        #expect(marked.status == 0 && marked.standardOutput == plain.standardOutput)

        let duplicated = String(decoding: original, as: UTF8.self)
            .replacingOccurrences(
                of: #""durationSeconds": 600"#,
                with: #""durationSeconds": 600, "durationSeconds": 60"#
            )
        try Data(duplicated.utf8).write(to: URL(fileURLWithPath: folder.path("dup.json")))
        let result = try await renderSession(["timeline", folder.path("dup.json")])
        #expect(result.status == 65)
        #expect(result.standardError.hasPrefix("error: \(folder.path("dup.json")): line "))
        #expect(
            result.standardError.hasSuffix(
                #": the key "durationSeconds" appears twice in the top-level object; only one of them can count"# + "\n"
            )
        )
    }

    @Test("Every eSpeak voice `voices` lists speaks (en-gb, fr-fr and the like were refused)")
    func everyListedEspeakVoiceSpeaks() throws {
        let ids = VoiceCatalog().voices.filter { $0.provider == "espeak" }.map(\.id)
        #expect(ids.count > 100)
        var failures: [String] = []
        for id in ids {
            do {
                let mp3 = try EmbeddedVoice.speech(text: "one", voice: String(id.dropFirst("espeak:".count)), speed: 1)
                    .mp3
                if mp3.count < 200 { failures.append("\(id): \(mp3.count) bytes") }
            } catch {
                failures.append("\(id): \(error)")
            }
        }
        #expect(failures == [])
    }
}
