import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// The outcome of running the built `render-session`.
struct CommandResult {
    /// How it ended; ``status`` folds a signal into a number, as a shell does.
    let termination: Termination
    let standardOutputBytes: [UInt8]
    let standardError: String
    /// How long it ran (``ProcessOutcome/duration``: not the wait for its turn).
    let duration: Duration

    /// The exit status, or 128 + the signal's number when a signal ended it.
    var status: Int32 { termination.status }
    var standardOutput: String { String(decoding: standardOutputBytes, as: UTF8.self) }
    /// Standard error's last line: a command's summary, after its progress and its sessions' lines.
    var lastErrorLine: String { standardError.split(separator: "\n").last.map(String.init) ?? "" }

    init(_ outcome: ProcessOutcome) {
        termination = outcome.termination
        standardOutputBytes = outcome.standardOutput
        standardError = outcome.standardErrorText
        duration = outcome.duration
    }
}

/// Runs the built `render-session` with `arguments` in `directory` (the repository's folder unless
/// given), with `input` on standard input (`/dev/null` if `nil`); with `waitsForTurn` false it
/// starts at once, beside however many other children run (``ChildProcess``).
func renderSession(
    _ arguments: [String],
    environment: [String: String]? = nil,
    input: Data? = nil,
    directory: URL = Repository.root,
    waitsForTurn: Bool = true
) async throws -> CommandResult {
    CommandResult(
        try await ChildProcess.run(
            Repository.binary.path,
            arguments,
            environment: environment,
            directory: directory.path,
            input: input,
            waitsForTurn: waitsForTurn
        )
    )
}

/// Runs the built `render-session` with `arguments` in the repository's folder, calls `body`
/// while it runs (to send it a signal once it has started work, say), then waits for its end.
func renderSession<Result: Sendable>(
    _ arguments: [String],
    while body: (RunningProcess) async throws -> Result
) async throws -> (CommandResult, Result) {
    let (outcome, result) = try await ChildProcess.run(
        Repository.binary.path,
        arguments,
        directory: Repository.root.path,
        while: body
    )
    return (CommandResult(outcome), result)
}

@Suite("The render-session command", .serialized)
struct CommandTests {
    static let script = "Fixtures/scripts/ten-minute-session.json"
    static let cache = ["--cache", "Fixtures/cache"]

    @Test("render writes the WAV and its timeline beside it, prints only their paths on stdout and a summary on stderr")
    func render() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Self.script, "-o", folder.path("s.wav"), "--seed", "7"] + Self.cache
        )
        #expect(result.status == 0)
        #expect(result.standardOutput == folder.path("s.wav") + "\n" + folder.path("s.wav.timeline.json") + "\n")
        // One line under 160 characters (before the path) with what a person checks first, then
        // indented lines with the rest.
        let lines = result.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        let summary =
            #/Rendered ten-minute-session: 10:12\.0 at 22050 Hz mono, speech -[0-9]+\.[0-9] LUFS, -[0-9]+\.[0-9] dBTP, in [0-9.]+ s → (.*)/#
        #expect(lines[0].wholeMatch(of: summary).map { String($0.output.1) } == folder.path("s.wav"), "\(lines)")
        #expect(lines[0].count - folder.path("s.wav").count < 160)
        #expect(lines[1] == "  13494600 frames, seed 7, voice espeak:en-us (default), 8 clips (8 cached)")
        let loudness =
            #/  loudness: program -[0-9]+\.[0-9] LUFS, LRA [0-9]+\.[0-9] LU, leveler up to [0-9]+\.[0-9] dB \([0-9]+\.[0-9] s over 1 dB\), limiter up to [0-9]+\.[0-9] dB \([0-9]+\.[0-9] s over 1 dB\)/#
        #expect(
            lines[2].wholeMatch(of: loudness) != nil,
            "the summary gives the speech and program loudness, the range, the true peak and the limiter's work"
        )
        #expect(try folder.contents() == ["s.wav", "s.wav.timeline.json"])
    }

    @Test("timeline prints JSON that follows the schema's rules and matches what render writes")
    func timeline() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(["timeline", Self.script, "--seed", "11"] + Self.cache)
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(result.standardOutput.utf8)) as? [String: Any]
        )
        #expect(json["schemaVersion"] as? Int == 3)
        #expect(json["scriptId"] as? String == "ten-minute-session")
        #expect(json["category"] as? String == "reactivity")
        let phases = try #require(json["phases"] as? [[String: Any]])
        #expect(phases.map { $0["name"] as? String } == ["opening", "teachings", "silence", "closing"])
        let unmarked = try await renderSession(
            ["timeline", Self.script, "--seed", "11", "--silence-phase", "off"] + Self.cache
        )
        let plain = try JSONSerialization.jsonObject(with: Data(unmarked.standardOutput.utf8)) as? [String: Any]
        let plainPhases = try #require(plain?["phases"] as? [[String: Any]])
        #expect(plainPhases.map { $0["name"] as? String } == ["opening", "teachings", "closing"], "as before the rule")
        #expect(json["title"] as? String == "The Space Between")
        #expect(json["seed"] as? Int == 11)
        #expect(json["sampleRate"] as? Int == 22_050)
        #expect(json["channels"] as? Int == 1)
        #expect(json["durationSeconds"] as? Double == 612)
        let items = try #require(json["items"] as? [[String: Any]])
        var cursor = 0
        let common: Set = ["index", "kind", "startFrame", "frameCount", "startSeconds", "durationSeconds"]
        let clipKeys: Set = [
            "text", "phase", "plannedStartFrame", "lateByFrames", "key", "source", "sourceSampleRate", "sourceFrames",
            "gapless", "loudness", "leveledLoudness", "gain",
        ]
        for (index, item) in items.enumerated() {
            #expect(item["index"] as? Int == index)
            #expect(item["startFrame"] as? Int == cursor, "items are contiguous")
            let frames = try #require(item["frameCount"] as? Int)
            #expect(frames > 0)
            // JSONSerialization on Linux may read a double one unit in the last place off.
            #expect(
                abs(try #require(item["startSeconds"] as? Double) - Double(cursor) / 22_050)
                    <= (Double(cursor) / 22_050).ulp
            )
            #expect(
                abs(try #require(item["durationSeconds"] as? Double) - Double(frames) / 22_050)
                    <= (Double(frames) / 22_050).ulp
            )
            cursor += frames
            // A clip's words and sentences where its voice gives them (the fixture clips' do).
            let keys = Set(item.keys).subtracting(["words", "sentences"])
            switch item["kind"] as? String {
            case "segment":
                #expect(keys == common.union(clipKeys).union(["segmentId"]))
                #expect(item["words"] != nil && item["sentences"] != nil, "the fixture clips' words")
            case "interjection":
                #expect(keys == common.union(clipKeys))
                // One phase name per item: the phase of `phases` it starts in, as positions and queues say.
                let within = phases.last { ($0["startFrame"] as? Int ?? .max) <= cursor - frames }
                #expect(
                    item["phase"] as? String == within?["name"] as? String && within?["name"] as? String == "silence"
                )
            case "silence": #expect(keys == common)
            case "bell":
                #expect(item["source"] as? String == "builtin")
                #expect(index == items.count - 1)
            default: Issue.record("unknown kind \(String(describing: item["kind"]))")
            }
        }
        #expect(json["totalFrames"] as? Int == cursor)

        // The same seed renders exactly that timeline.
        let render = try await renderSession(
            [
                "render", Self.script, "-o", folder.path("s.wav"), "--seed", "11",
                "--timeline", folder.path("s.json"),
            ] + Self.cache
        )
        #expect(render.status == 0)
        #expect(render.standardOutput == folder.path("s.wav") + "\n" + folder.path("s.json") + "\n")
        // Byte for byte, but for what only a render can know: the output's measured loudness and encoding.
        var written = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("s.json")))
        )
        #expect(written.loudness?.program != nil && written.loudness?.truePeak != nil)
        written.loudness = written.loudness.map {
            TimelineLoudness(
                target: $0.target,
                ceiling: $0.ceiling,
                anchor: $0.anchor,
                programGain: $0.programGain,
                speechGain: $0.speechGain,
                speechLeveling: $0.speechLeveling,
                codecHeadroom: $0.codecHeadroom
            )
        }
        #expect(written.encoding == AudioEncoding(container: "wav", codec: "pcm_s16le"))
        #expect(written.audioFile != nil)
        (written.encoding, written.audioFile) = (nil, nil)
        #expect(String(decoding: TimelineJSON.encode(written), as: UTF8.self) == result.standardOutput)
        let measured = try AudioFileDecoder.measure(path: folder.path("s.wav"))
        #expect(measured.frameCount == Frames(Int64(cursor)))
    }

    @Test("Without --seed a seed is drawn and recorded")
    func randomSeed() async throws {
        let first = try await renderSession(["timeline", Self.script] + Self.cache)
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(first.standardOutput.utf8)) as? [String: Any]
        )
        let seed = try #require(json["seed"] as? Int)
        let again = try await renderSession(["timeline", Self.script, "--seed", String(seed)] + Self.cache)
        #expect(again.standardOutput == first.standardOutput)
    }

    @Test("silence writes exactly round(seconds × rate) frames")
    func silence() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(["silence", "--seconds", "270", "-o", folder.path("quiet.wav")])
        #expect(result.status == 0)
        #expect(result.standardOutput == folder.path("quiet.wav") + "\n")
        let size = try FileManager.default.attributesOfItem(atPath: folder.path("quiet.wav"))[.size] as? Int
        #expect(size == 4_320_044)
    }

    @Test("An invalid script fails with one line per problem, naming file and JSON path, and writes nothing")
    func invalidScript() async throws {
        let folder = try TemporaryFolder()
        let script = folder.path("reactivity-03.json")
        try Data(
            #"""
            {"id": "reactivity-03", "category": "reactivity", "title": "T", "durationSeconds": 600,
             "segments": [{"id": "a", "startSeconds": 0, "text": "Hi", "phase": "p"},
                          {"id": "b", "startSeconds": 10, "text": "", "phase": "p"},
                          {"id": "c", "startSeconds": 700, "text": "Bye", "phase": "p"}]}
            """#.utf8
        ).write(to: URL(fileURLWithPath: script))
        let result = try await renderSession([
            "render", script, "-o", folder.path("out.wav"), "--cache", folder.path("cache"),
        ])
        #expect(result.status == 65)
        #expect(result.standardOutput.isEmpty)
        #expect(
            result.standardError == """
                error: \(script): segments[1].text: is empty; a text needs 1 to 5000 characters
                error: \(script): segments[2].startSeconds: 700 is past durationSeconds 600

                """
        )
        #expect(try folder.contents() == ["reactivity-03.json"], "no output and no cache folder")
    }

    @Test("With --offline, missing clips are listed together and nothing is written")
    func missingClips() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "render", Self.script, "-o", folder.path("out.wav"), "--cache", folder.path("empty"), "--offline",
        ])
        #expect(result.status == 1)
        let lines = result.standardError.split(separator: "\n")
        #expect(lines.count == 9, "3 segments and 5 interjection options, then what to do")
        #expect(
            lines.dropLast().allSatisfy {
                $0.hasPrefix("error: No clip for \"") && $0.contains("): nothing at \(folder.path("empty"))/")
            }
        )
        #expect(
            lines.last
                == "error: The cache lacks these clips and --offline makes none: fill it with `render-session prepare \(Self.script) --cache \(folder.path("empty"))`, or run without --offline"
        )
        #expect(try folder.contents().isEmpty)
    }

    @Test("A script that does not exist is named in the error")
    func missingScript() async throws {
        let result = try await renderSession(["timeline", "no-such.json"] + Self.cache)
        #expect(result.status == 65)
        #expect(result.standardError == "error: no-such.json: cannot read the script: no such file\n")
    }

    @Test(
        "Bad option values are usage errors (exit 64)",
        arguments: [
            (["--speed", "9"], "error: --speed: 9.0 is outside 0.25…4.0\n"),
            (
                ["--sample-rate", "100"],
                "error: The value '100' is invalid for '--sample-rate <hz>': a sample rate is a whole number of hertz from 1000 to 768000\n"
            ),
            (["--channels", "0"], "error: The value '0' is invalid for '--channels <n>': 0 is outside 1 to 8\n"),
            (
                ["--seed", "-1"],
                "error: The value '-1' is invalid for '--seed <n>': a seed is a whole number from 0 to 18446744073709551615\n"
            ),
            (
                ["--seed", "x"],
                "error: The value 'x' is invalid for '--seed <n>': a seed is a whole number from 0 to 18446744073709551615\n"
            ),
            (["--speed", "-2"], "error: --speed: -2.0 is outside 0.25…4.0\n"),
        ]
    )
    func badOptions(arguments: [String], message: String) async throws {
        let result = try await renderSession(["timeline", Self.script] + Self.cache + arguments)
        #expect(result.status == 64)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix(message), "\(result.standardError)")
    }

    @Test("Every command's help shows an example", arguments: ["render", "timeline", "silence", "prepare"])
    func help(command: String) async throws {
        let result = try await renderSession([command, "--help"])
        #expect(result.status == 0)
        #expect(result.standardOutput.contains("Example"))
        #expect(result.standardOutput.contains("render-session \(command) "))
    }
}
