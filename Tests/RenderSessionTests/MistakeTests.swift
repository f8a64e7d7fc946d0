import Foundation
import SessionTimeline
import TestSupport
import Testing

/// Issue 24: a mistake never ships with exit 0, and what the tool says is true.
@Suite("Mistakes are errors, and the summary tells the truth")
struct MistakeTests {
    static let script = "Fixtures/scripts/edge-cases.json"
    static let offline = ["--cache", Repository.cache.path, "--offline", "--seed", "7"]

    @Test(
        "A voice that names nothing is one error line before any work, with the nearest voices",
        arguments: [
            (
                "espeak:en-uss",
                #"error: unknown voice "espeak:en-uss": eSpeak NG has no such voice (did you mean "espeak:en-us"?); `render-session voices` lists them"#
            ),
            (
                "piper:en_US-joe-meduim",
                #"error: unknown voice "piper:en_US-joe-meduim": no en_US-joe-meduim.onnx with its .onnx.json in MODELS (did you mean "piper:en_US-joe-medium"?); `render-session voices` lists them"#
            ),
        ]
    )
    func voiceTypo(voice: String, expected: String) async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("models"), withIntermediateDirectories: true)
        let result = try await renderSession([
            "render", Self.script, "-o", folder.path("s.wav"), "--cache", folder.path("cache"), "--voice", voice,
            "--piper-models", folder.path("models"), "--fallback-voice", "espeak",
        ])
        #expect(result.status == 65)
        #expect(result.standardError == expected.replacing("MODELS", with: folder.path("models")) + "\n")
        #expect(result.standardOutput.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))
        #expect(!FileManager.default.fileExists(atPath: folder.path("cache")), "no clip was made")
    }

    @Test("A fallback voice that names nothing is refused too, before any work")
    func fallbackTypo() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Self.script, "-o", folder.path("s.wav"), "--fallback-voice", "espeak:xx"] + Self.offline
        )
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: unknown voice \"espeak:xx\": eSpeak NG has no such voice; `render-session voices` lists them\n"
        )
    }

    @Test("The summary names the voice and where it came from: --voice, $RENDER_SESSION_VOICE, the default")
    func voiceOrigin() async throws {
        let folder = try TemporaryFolder()
        var environment = ProcessInfo.processInfo.environment
        environment["RENDER_SESSION_VOICE"] = "espeak:en-us"
        let cases: [([String], [String: String]?, String)] = [
            ([], nil, "voice espeak:en-us (default)"),
            (["--voice", "espeak:en-us"], nil, "voice espeak:en-us (--voice)"),
            ([], environment, "voice espeak:en-us ($RENDER_SESSION_VOICE)"),
        ]
        for (extra, environment, said) in cases {
            let result = try await renderSession(
                ["render", Self.script, "-o", folder.path("s.wav")] + Self.offline + extra,
                environment: environment
            )
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.contains(", \(said), 7 clips (7 cached)\n"), "\(result.standardError)")
        }
    }

    @Test("A voice from $RENDER_SESSION_VOICE that names nothing is the same error as --voice's")
    func environmentVoiceTypo() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["RENDER_SESSION_VOICE"] = "espeak:en-uss"
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Self.script, "-o", folder.path("s.wav")] + Self.offline,
            environment: environment
        )
        #expect(result.status == 65)
        #expect(result.standardError.hasPrefix(#"error: unknown voice "espeak:en-uss""#))
    }

    @Test(
        "Late speech: each late clip is a line naming its place and what overran it, and --json lists them; --max-late below the worst fails before rendering, at or above it renders"
    )
    func lateSpeech() async throws {
        let folder = try TemporaryFolder()
        let plain = try await renderSession(
            ["render", Self.script, "-o", folder.path("a.wav"), "--json"] + Self.offline
        )
        #expect(plain.status == 0, "\(plain.standardError)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(plain.standardOutput.utf8)) as? [String: Any]
        )
        let late = try #require(summary["late"] as? [String: Any])
        let count = try #require(late["count"] as? Int)
        let worst = try #require(late["worstSeconds"] as? Double)
        #expect(count > 0 && worst > 1, "edge-cases.json has clips that run past the next one's start")
        #expect(count == 3 && worst == 2.89)
        let name = Self.script
        #expect(
            plain.standardError.hasPrefix(
                """
                warning: \(name): segments[1] ("late") starts 2.4 s late: segments[0] ("first") runs to 0:04.440
                warning: \(name): interjections[0] ("Tied.") starts 2.9 s late: segments[2] ("tie") runs to 0:13.387
                warning: \(name): interjections[1] ("Breathe in.") starts 0.1 s late: interjections[0] ("Tied.") runs to 0:14.103
                Rendered edge-cases: 0:35.9 at 22050 Hz mono, speech -16.0 LUFS, -1.3 dBTP, 3 clips late (worst 2.9 s), in
                """
            ),
            "\(plain.standardError)"
        )
        let items = try #require(late["items"] as? [[String: Any]])
        #expect(items.map { $0["path"] as? String } == ["segments[1]", "interjections[0]", "interjections[1]"])
        #expect(items.map { $0["overrunBy"] as? String } == ["segments[0]", "segments[2]", "interjections[0]"])
        #expect(items.map { $0["lateSeconds"] as? Double } == [2.44, 2.89, 0.1])
        #expect(items.map { $0["overrunEndSeconds"] as? Double } == [4.44, 13.39, 14.1])
        #expect(items.first?["id"] as? String == "late" && items.dropFirst().allSatisfy { $0["id"] == nil })

        let refused = try await renderSession(
            ["render", Self.script, "-o", folder.path("b.wav"), "--max-late", "1"] + Self.offline
        )
        #expect(refused.status == 1)
        let lines = refused.standardError.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(
            lines.first
                == #"error: \#(name): interjections[0] ("Tied.") starts 2.9 s late: segments[2] ("tie") runs to 0:13.387, more than the 1 s allowed (and 1 more past it)"#,
            "\(lines)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("b.wav")))

        let allowed = try await renderSession(
            ["render", Self.script, "-o", folder.path("c.wav"), "--max-late", "\(worst + 0.01)"] + Self.offline
        )
        #expect(allowed.status == 0, "\(allowed.standardError)")
    }

    @Test(
        "--json on a failure still prints one JSON object, the errors and the exit status: a usage error's 64, a script's 65"
    )
    func jsonOnFailure() async throws {
        let folder = try TemporaryFolder()
        try Data("{}".utf8).write(to: folder.url.appendingPathComponent("bad.json"))
        let cases: [([String], Int32)] = [
            (["render", folder.path("bad.json"), "-o", folder.path("x.wav"), "--json"], 65),
            (["render", Self.script, "-o", folder.path("x.wav"), "--json", "--bogus"], 64),
            (["verify", folder.path("none.wav"), "--json"], 65),
            (["batch", folder.path("bad.json"), "-o", folder.path("out"), "--json", "--seed", "-1"], 64),
        ]
        for (arguments, status) in cases {
            let result = try await renderSession(arguments)
            #expect(result.status == status, "\(arguments): \(result.standardError)")
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any],
                "\(arguments): \(result.standardOutput)"
            )
            #expect(result.standardOutput.split(separator: "\n").count == 1, "one line")
            #expect(object["exitStatus"] as? Int == Int(status))
            // Each error line of standard error, without its "error: ".
            let printed = result.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
            #expect(object["errors"] as? [String] == printed.map { String($0.dropFirst(7)) }, "\(arguments)")
            #expect(!printed.isEmpty)
        }
        // Without --json, standard output stays empty.
        let plain = try await renderSession(["render", folder.path("bad.json"), "-o", folder.path("x.wav")])
        #expect(plain.status == 65 && plain.standardOutput.isEmpty)
    }

    @Test("--json prints one JSON object on stdout with the summary's facts, and the timeline agrees")
    func json() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Self.script, "-o", folder.path("s.mp3"), "--timeline", folder.path("t.json"), "--json"]
                + Self.offline
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutput.split(separator: "\n").count == 1)
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("t.json")))
        )
        #expect(summary["audio"] as? String == folder.path("s.mp3"))
        #expect(summary["timeline"] as? String == folder.path("t.json"))
        #expect(summary["script"] as? String == "edge-cases")
        #expect((summary["totalFrames"] as? NSNumber)?.int64Value == timeline.totalFrames.count)
        #expect(summary["seed"] as? Int == 7)
        #expect(summary["sampleRate"] as? Int == timeline.sampleRate.hertz)
        #expect(summary["voice"] as? [String: String] == ["used": "espeak:en-us", "origin": "default"])
        #expect(
            summary["clips"] as? [String: Int] == ["needed": 7, "cached": 7, "synthesized": 0, "failed": 0]
        )
        let loudness = try #require(summary["loudness"] as? [String: Any])
        #expect(loudness["program"] as? Double == timeline.loudness?.program.map { ($0 * 100).rounded() / 100 })
        #expect(loudness["speech"] as? Double == timeline.loudness?.speech.map { ($0 * 100).rounded() / 100 })
        #expect(loudness["anchor"] as? String == "speech" && loudness["target"] as? Double == -16)
        #expect(loudness["limiter"] is [String: Double] && loudness["range"] is Double)
        #expect((summary["late"] as? [String: Any])?["count"] as? Int == timeline.lateness.lateCount)

        let clash = try await renderSession(["render", Self.script, "-o", "-", "--json"] + Self.offline)
        #expect(clash.status == 64)
        #expect(clash.standardError.hasPrefix("error: --json: standard output carries the audio or timeline"))
    }

    @Test(
        "An extension that names another format than --format is a usage error; Opus in .ogg is allowed",
        arguments: [
            (
                "x.wav", "mp3",
                #"error: --output: OUT names a .wav file, but --format says mp3; name the file .mp3, or leave the format to its extension"#
            ),
            (
                "x.mp3", "flac",
                #"error: --output: OUT names a .mp3 file, but --format says flac; name the file .flac, or leave the format to its extension"#
            ),
            ("x.ogg", "opus", nil),
        ]
    )
    func extensionMismatch(name: String, format: String, expected: String?) async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Self.script, "-o", folder.path(name), "--format", format] + Self.offline
        )
        if let expected {
            #expect(result.status == 64)
            #expect(result.standardError.hasPrefix(expected.replacing("OUT", with: folder.path(name)) + "\n"))
            #expect(!FileManager.default.fileExists(atPath: folder.path(name)))
        } else {
            #expect(result.status == 0, "\(result.standardError)")
        }
    }

    @Test("silence: a rate the format cannot hold is a usage error (64), as render's is; Opus defaults to 48 kHz")
    func silenceStatus() async throws {
        let folder = try TemporaryFolder()
        let bad = try await renderSession([
            "silence", "--seconds", "1", "--sample-rate", "7000", "-o", folder.path("x.mp3"),
        ])
        #expect(bad.status == 64)
        #expect(bad.standardError.hasPrefix("error: --format: mp3 cannot hold 7000 Hz; it takes one of 8000, "))
        let opus = try await renderSession(["silence", "--seconds", "1", "-o", folder.path("x.opus")])
        #expect(opus.status == 0, "\(opus.standardError)")
        #expect(opus.standardError == "Wrote 48000 frames of silence at 48000 Hz → \(folder.path("x.opus"))\n")
    }

    @Test(
        "-o - on a terminal is refused with one line, as zstd does; nothing binary reaches the screen",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
            "needs /usr/bin/script (util-linux) to give the command a terminal"
        )
    )
    func audioToTerminal() async throws {
        for arguments in [
            ["render", Self.script, "-o", "-"] + Self.offline, ["silence", "--seconds", "1", "-o", "-"],
        ] {
            let command = ([Repository.binary.path] + arguments).map { "'\($0)'" }.joined(separator: " ")
            // -e: script exits with the command's status; the command's stdout and stderr are the terminal.
            let run = try await ChildProcess.run(
                "/usr/bin/script",
                ["-qec", command + " 2>&1", "/dev/null"],
                directory: Repository.root.path
            )
            let text = run.standardOutputText
            #expect(run.termination == .exited(64), "\(arguments): \(text)")
            #expect(
                text.hasPrefix(
                    "error: -o -: standard output is a terminal, not a place for audio; redirect it (> out.wav) or pipe it"
                ),
                "\(text)"
            )
            #expect(!text.contains("RIFF"))
        }
    }

    @Test(
        "A misspelled command is named as one, with the nearest; an option is never corrected to its opposite",
        arguments: [
            (["rendr", "x.json", "-o", "x.wav"], "error: unknown command 'rendr' (did you mean 'render'?)"),
            (["verfy", "x.wav"], "error: unknown command 'verfy' (did you mean 'verify'?)"),
            (["xyzzy"], "error: unknown command 'xyzzy'"),
            (["render", "x.json", "-o", "x.wav", "--no-verify"], "error: Unknown option '--no-verify'"),
            (
                ["render", "x.json", "-o", "x.wav", "--no-encode-silence"],
                "error: Unknown option '--no-encode-silence'"
            ),
            (
                ["render", "x.json", "-o", "x.wav", "--sead", "3"],
                "error: Unknown option '--sead'. Did you mean '--seed'?"
            ),
        ]
    )
    func commandTypo(arguments: [String], expected: String) async throws {
        let result = try await renderSession(arguments)
        #expect(result.status == 64)
        #expect(result.standardError.split(separator: "\n").first.map(String.init) == expected)
        #expect(result.standardOutput.isEmpty)
    }

    @Test("--version names the release, the commit built from, and every library and engine with its version")
    func version() async throws {
        let result = try await renderSession(["--version"])
        #expect(result.status == 0)
        let lines = result.standardOutput.split(separator: "\n").map(String.init)
        let commit = try await ChildProcess.run(
            "/usr/bin/git",
            ["-C", Repository.root.path, "rev-parse", "--short=12", "HEAD"]
        ).standardOutputText.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lines.first?.hasPrefix("render-session 0.1.0 (commit \(commit)") == true, "\(lines)")
        let names = lines.dropFirst().map { String($0.prefix { $0 != " " || false }) }
        #expect(
            names == [
                "libmpg123", "libsndfile", "libsoxr", "libebur128", "LAME", "libopus", "libvorbis",
                "libFLAC", "libavcodec", "libavformat", "eSpeak", "Piper",
            ]
        )
        #expect(lines.contains { $0.hasPrefix("eSpeak NG 1.") }, "\(lines)")
        #expect(lines.contains("LAME 3.100"), "\(lines)")
        #expect(result.standardError.isEmpty)
    }

    @Test(
        "Sidecars keep the extension, so an MP3 and an Opus render side by side verify each against its own; a timeline of another format is refused, naming both"
    )
    func sidecarsPerFormat() async throws {
        let folder = try TemporaryFolder()
        for name in ["s.mp3", "s.opus"] {
            let result = try await renderSession(
                ["render", Self.script, "-o", folder.path(name), "--timeline", folder.path(name + ".timeline.json")]
                    + Self.offline
            )
            #expect(result.status == 0, "\(result.standardError)")
        }
        for name in ["s.mp3", "s.opus"] {
            let verified = try await renderSession(["verify", folder.path(name)])
            #expect(verified.status == 0, "\(name): \(verified.standardOutput) \(verified.standardError)")
            #expect(verified.standardError.hasPrefix("verified \(folder.path(name)): 0 problems"))
        }
        try FileManager.default.removeItem(atPath: folder.path("s.opus.timeline.json"))
        try FileManager.default.copyItem(
            atPath: folder.path("s.mp3.timeline.json"),
            toPath: folder.path("s.opus.timeline.json")
        )
        let refused = try await renderSession(["verify", folder.path("s.opus")])
        #expect(refused.status == 65)
        #expect(
            refused.standardError
                == "error: Cannot verify \(folder.path("s.opus")) against \(folder.path("s.opus.timeline.json")): the timeline is of a .mp3 file (mp3 at 22050 Hz), not a .opus one\n"
        )
    }

    @Test("A Markdown file of meditations given where a script belongs says to import it, in one line, exit 65")
    func markdownGivenAsScript() async throws {
        let folder = try TemporaryFolder()
        let path = "Fixtures/meditations/reactivity.md"
        let result = try await renderSession(["render", path, "-o", folder.path("s.wav")] + Self.offline)
        #expect(result.status == 65)
        #expect(
            result.standardError
                == "error: \(path): is Markdown, not a script's JSON; `render-session import \(path) -o DIR` makes a script of each of its meditations\n"
        )
        // Named otherwise, a leading heading gives it away just the same.
        try Data(contentsOf: Repository.root.appendingPathComponent(path)).write(
            to: folder.url.appendingPathComponent("m.txt")
        )
        let renamed = try await renderSession(["timeline", folder.path("m.txt")] + Self.offline)
        #expect(renamed.status == 65)
        #expect(renamed.standardError.contains(": is Markdown, not a script's JSON; "))
    }

    @Test(
        "A script's unknown keys are one warning each with the nearest key, or with --strict errors (65); a guided script's voice speaks"
    )
    func scriptKeys() async throws {
        let folder = try TemporaryFolder()
        let json = #"""
            {"id": "typo", "category": "t", "title": "Typo", "durationSeconds": 3, "voice": "espeak:en-gb",
             "sound": {"ambiance": "rain"},
             "segments": [{"id": "a", "phase": "opening", "startSeconds": 0, "text": "Hello."}]}
            """#
        try Data(json.utf8).write(to: folder.url.appendingPathComponent("typo.json"))
        let arguments = ["render", folder.path("typo.json"), "-o", folder.path("t.wav"), "--cache", folder.path("c")]
        let warned = try await renderSession(arguments)
        #expect(warned.status == 0, "\(warned.standardError)")
        let lines = warned.standardError.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == #"warning: \#(folder.path("typo.json")): sound.ambiance: is not a field of the sound block (did you mean "ambience"?); it is ignored"#
        )
        #expect(
            lines.count == 4
                && lines[2].hasSuffix(", voice espeak:en-gb (the script's), 1 clip (0 cached, 1 synthesized)"),
            "\(lines)"
        )
        let strict = try await renderSession(arguments + ["--strict"])
        #expect(strict.status == 65)
        #expect(
            strict.standardError
                == #"error: \#(folder.path("typo.json")): sound.ambiance: is not a field of the sound block (did you mean "ambience"?)"#
                + "\n"
        )
    }

    @Test(
        "batch: each session's late speech is in the manifest, the summary counts late sessions, --json says it all, and an up-to-date run keeps it"
    )
    func batchLateness() async throws {
        let folder = try TemporaryFolder()
        let arguments = [
            "batch", "Fixtures/scripts", "-o", folder.path("out"), "--cache", Repository.cache.path, "--offline",
            "--json",
        ]
        for (run, result) in [("first", "rendered"), ("second", "upToDate")] {
            let batch = try await renderSession(arguments)
            #expect(batch.status == 0, "\(run): \(batch.standardError)")
            #expect(
                batch.standardError.contains(", 0 failed, 1 with late speech (worst "),
                "\(run): \(batch.standardError)"
            )
            let summary = try #require(
                try JSONSerialization.jsonObject(with: Data(batch.standardOutput.utf8)) as? [String: Any]
            )
            #expect(summary["lateSessions"] as? Int == 1)
            let sessions = try #require(summary["sessions"] as? [[String: Any]])
            #expect(sessions.map { $0["name"] as? String } == ["edge-cases", "ten-minute-session"])
            #expect(sessions.map { $0["result"] as? String } == [result, result])
            #expect(sessions[0]["audio"] as? String == folder.path("out/edge-cases.wav"))
            #expect(sessions[0]["timeline"] as? String == folder.path("out/edge-cases.wav.timeline.json"))
            let timeline = try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: folder.path("out/edge-cases.wav.timeline.json")))
            )
            #expect(sessions[0]["lateClips"] as? Int == timeline.lateness.lateCount && timeline.lateness.lateCount > 0)
            #expect(sessions[1]["lateClips"] as? Int == 0)
            let manifest = try #require(
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: URL(fileURLWithPath: folder.path("out/manifest.json")))
                ) as? [String: Any]
            )
            let record = ((manifest["outputs"] as? [String: Any])?["edge-cases.wav"] as? [String: Any]) ?? [:]
            #expect(record["lateClips"] as? Int == timeline.lateness.lateCount)
            #expect(record["worstLateSeconds"] as? Double == sessions[0]["worstLateSeconds"] as? Double)
        }
    }

    @Test("-q prints errors only; -v prints each stage with its time; both is a usage error; every command takes them")
    func verbosity() async throws {
        let folder = try TemporaryFolder()
        let arguments = ["render", Self.script, "-o", folder.path("s.wav")] + Self.offline
        let quiet = try await renderSession(arguments + ["-q"])
        #expect(quiet.status == 0)
        #expect(quiet.standardError.isEmpty)
        #expect(
            quiet.standardOutput == folder.path("s.wav") + "\n" + folder.path("s.wav.timeline.json") + "\n",
            "the data asked for is still printed"
        )
        let quietError = try await renderSession(arguments + ["--quiet", "--bell", "gnog"])
        #expect(quietError.status == 65)
        #expect(quietError.standardError.hasPrefix(#"error: Bell "gnog" (--bell) is not in the sound library"#))
        let verbose = try await renderSession(arguments + ["-v"])
        #expect(verbose.status == 0)
        let stages = verbose.standardError.split(separator: "\n").filter { $0.hasPrefix("stage ") }
        #expect(
            stages.map { String($0.prefix { $0 != ":" }) } == [
                "stage check", "stage prepare", "stage plan", "stage render",
            ]
        )
        #expect(stages.allSatisfy { $0.contains(#/: [0-9]+\.[0-9]{2} s$/#) }, "\(stages)")
        let both = try await renderSession(arguments + ["-q", "-v"])
        #expect(both.status == 64)
        #expect(both.standardError.hasPrefix("error: -q/--quiet and -v/--verbose ask for opposite things; give one\n"))
        for command in [
            "render", "timeline", "prepare", "batch", "import", "list", "queue", "silence", "sounds", "verify",
            "position",
            "voices",
        ] {
            let help = try await renderSession([command, "--help"]).standardOutput
            #expect(help.contains("-q, --quiet") && help.contains("-v, --verbose"), "\(command)")
        }
    }

    @Test("prepare --json: one JSON object with the summary's counts")
    func prepareJSON() async throws {
        let result = try await renderSession([
            "prepare", "Fixtures/scripts", "--cache", Repository.cache.path, "--json",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        let summary = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        #expect(summary["scripts"] as? Int == 2)
        #expect(summary["clips"] as? [String: Int] == ["needed": 15, "cached": 15, "synthesized": 0, "failed": 0])
        #expect(summary["problems"] as? [String] == [] && summary["invalidScripts"] as? [String] == [])
    }

    @Test(
        "A script with five mistakes takes one run: the key it ignores, its rule, its voice and both its sounds, each a line, the sounds naming where they came from; then a library entry whose file is absent says so (issue 42, item 7)"
    )
    func everyMistakeInOneRun() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path("lib")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let gong = try await renderSession(["silence", "--seconds", "0.5", "-o", library + "/gong.wav"])
        #expect(gong.status == 0)
        try Data(#"[{"id": "gong", "file": "gong"}, {"id": "ghost", "file": "ghost"}]"#.utf8)
            .write(to: URL(fileURLWithPath: library + "/sounds.json"))
        var json = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Repository.root.appending(path: "Fixtures/scripts/ten-minute-session.json"))
            ) as? [String: Any]
        )
        json["titel"] = "Typo"
        json["durationSeconds"] = -5
        json["voice"] = "espeak:en-uss"
        json["sound"] = ["startGong": "gongg", "ambience": "waterfall"]
        let script = folder.path("five.json")
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: script))
        let arguments = ["render", script, "-o", folder.path("s.wav"), "--sounds", library] + Self.offline
        let result = try await renderSession(arguments)
        #expect(result.status == 65)
        #expect(
            result.standardError.split(separator: "\n").map(String.init) == [
                #"warning: \#(script): titel: is not a field of a guided script (did you mean "title"?); it is ignored"#,
                "error: \(script): durationSeconds: -5 must be greater than 0",
                #"error: unknown voice "espeak:en-uss": eSpeak NG has no such voice (did you mean "espeak:en-us"?); `render-session voices` lists them"#,
                #"error: Start gong "gongg" (sound.startGong) is not in the sound library \#(library) (did you mean "gong"?); --allow-missing-sounds leaves it out"#,
                #"error: Ambience "waterfall" (sound.ambience) is not in the sound library \#(library), which has "ghost", "gong"; --allow-missing-sounds leaves it out"#,
            ],
            "\(result.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("s.wav")))

        // The script mended, the same run finds the library's entry without its file, from the command line.
        json["titel"] = nil
        json["durationSeconds"] = 600
        json["voice"] = nil
        json["sound"] = nil
        try JSONSerialization.data(withJSONObject: json).write(to: URL(fileURLWithPath: script))
        let ghost = try await renderSession(arguments + ["--ambience", "ghost", "--start-gong", "gong"])
        #expect(ghost.status == 65)
        #expect(
            ghost.standardError
                == #"error: Ambience "ghost" (--ambience) is in the sound library \#(library) as "ghost", but its file is absent (looked for ghost.caf, ghost.wav, ghost.flac, ghost.mp3, ghost.ogg, ghost.m4a, ghost.mp4, ghost.aac); --allow-missing-sounds leaves it out"#
                + "\n"
        )
    }

    @Test("A key a sounds.json entry does not have is one warning with the nearest key, from sounds and from a render")
    func soundsJSONKeys() async throws {
        let folder = try TemporaryFolder()
        let library = folder.path("lib")
        try FileManager.default.createDirectory(atPath: library, withIntermediateDirectories: true)
        let silence = try await renderSession(["silence", "--seconds", "0.5", "-o", library + "/ding.wav"])
        #expect(silence.status == 0)
        try Data(#"[{"id": "ding", "file": "ding", "gian": 2}]"#.utf8)
            .write(to: URL(fileURLWithPath: library + "/sounds.json"))
        let warning =
            #"warning: \#(library)/sounds.json: [0].gian: is not a field of a sound (did you mean "gain"?); it is ignored"#
        let listed = try await renderSession(["sounds", "--sounds", library])
        #expect(listed.status == 0)
        #expect(listed.standardError == warning + "\n")
        let rendered = try await renderSession(
            ["render", Self.script, "-o", folder.path("s.wav"), "--sounds", library, "--start-gong", "ding"]
                + Self.offline
        )
        #expect(rendered.status == 0)
        #expect(rendered.standardError.split(separator: "\n").first.map(String.init) == warning)
    }

    @Test(
        "Ctrl-C during a render on a terminal: the message clears the progress bar's line first, exit 130, nothing left",
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")
                && FileManager.default.isExecutableFile(atPath: "/usr/bin/pkill"),
            "needs /usr/bin/script and /usr/bin/pkill (util-linux, procps) to give the command a terminal and a Ctrl-C"
        )
    )
    func interruptClearsProgress() async throws {
        let folder = try TemporaryFolder()
        // Two hours of rain: long enough to draw a progress bar, quick to interrupt.
        try Data(
            #"{"kind": "timer", "id": "long", "title": "Long", "durationSeconds": 7200, "countdownSeconds": 0, "ambience": "rain"}"#
                .utf8
        ).write(to: folder.url.appendingPathComponent("long.json"))
        let binary = Repository.binary.path
        // Loudness off: the program anchor's measuring passes over two hours would come before
        // the progress bar this test waits for.
        let command =
            "'\(binary)' render '\(folder.path("long.json"))' -o '\(folder.path("long.flac"))' --offline --loudness off"
        let transcript = folder.path("transcript")
        let (terminal, _) = try await ChildProcess.run("/usr/bin/script", ["-qec", command, transcript]) { _ in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline,
                !((try? String(contentsOfFile: transcript, encoding: .utf8)) ?? "").contains("ETA")
            {
                try await Task.sleep(for: .milliseconds(100))
            }
            _ = try await ChildProcess.run(
                "/usr/bin/pkill",
                ["-INT", "-f", "^\(binary) render \(folder.path("long.json"))"]
            )
        }
        let text = try String(contentsOfFile: transcript, encoding: .utf8)
        #expect(text.contains("ETA"), "a progress bar was drawn")
        #expect(text.contains("\u{1B}[K\r\u{1B}[KInterrupted; unfinished files were removed"), "\(text.suffix(300))")
        #expect(terminal.termination == .exited(130))
        #expect(!FileManager.default.fileExists(atPath: folder.path("long.flac")))
    }
}
