import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Where outputs go and where scripts come from, as a new user tries it.
@Suite("Outputs and inputs of the command", .serialized, .tags(.concurrent))
struct OutputTests {
    static let script = "Fixtures/scripts/edge-cases.json"
    static let render = ["render", script, "--cache", "Fixtures/cache", "--seed", "3", "--loudness", "off"]

    /// The bytes `render` writes to a regular file, for comparison.
    static func fileBytes(in folder: TemporaryFolder) async throws -> Data {
        let result = try await renderSession(render + ["-o", folder.path("reference.wav")])
        #expect(result.status == 0, "\(result.standardError)")
        return try Data(contentsOf: folder.url.appendingPathComponent("reference.wav"))
    }

    @Test("-o - writes the WAV to standard output, byte for byte the file, and prints no path")
    func standardOutput() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(Self.render + ["-o", "-"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(Data(result.standardOutputBytes) == (try await Self.fileBytes(in: folder)))
        #expect(result.standardError.contains("\nRendered edge-cases: "))
    }

    @Test("--timeline - prints the timeline JSON; the audio path is not printed into it")
    func timelineToStandardOutput() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(Self.render + ["-o", folder.path("a.wav"), "--timeline", "-"])
        #expect(result.status == 0, "\(result.standardError)")
        var timeline = try JSONDecoder().decode(Timeline.self, from: Data(result.standardOutputBytes))
        #expect(try AudioFileDecoder.measure(path: folder.path("a.wav")).frameCount == timeline.totalFrames)
        #expect(timeline.encoding == AudioEncoding(container: "wav", codec: "pcm_s16le"))
        let printed = try await renderSession([
            "timeline", Self.script, "--cache", "Fixtures/cache", "--seed", "3", "--loudness", "off",
        ])
        let bytes = try Data(contentsOf: folder.url.appendingPathComponent("a.wav")).count
        #expect(timeline.audioFile?.bytes == Int64(bytes))
        (timeline.encoding, timeline.audioFile) = (nil, nil)
        #expect(
            printed.standardOutput == String(decoding: TimelineJSON.encode(timeline), as: UTF8.self),
            "the same JSON as `timeline`, but for how the audio was encoded and the file's stamp"
        )
    }

    @Test("A symbolic link keeps pointing at the file it names, which is replaced")
    func symbolicLink() async throws {
        let folder = try TemporaryFolder()
        try Data("old".utf8).write(to: folder.url.appendingPathComponent("target.wav"))
        try FileManager.default.createSymbolicLink(atPath: folder.path("link.wav"), withDestinationPath: "target.wav")
        let result = try await renderSession(Self.render + ["-o", folder.path("link.wav")])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: folder.path("link.wav")) == "target.wav")
        #expect(
            try await Data(contentsOf: folder.url.appendingPathComponent("target.wav"))
                == (try Self.fileBytes(in: folder))
        )
    }

    @Test("A FIFO is written straight through and stays a FIFO; a folder is refused")
    func fifoAndFolder() async throws {
        let folder = try TemporaryFolder()
        let fifo = folder.path("pipe.wav")
        #expect(mkfifo(fifo, 0o600) == 0)
        // The far end of the FIFO starts at once: the command waits for it.
        async let reader = ChildProcess.run(
            "/bin/sh",
            ["-c", "cat '\(fifo)' > '\(folder.path("received.wav"))'"],
            waitsForTurn: false
        )
        let result = try await renderSession(Self.render + ["-o", fifo])
        #expect(try await reader.termination == .exited(0))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            try await Data(contentsOf: folder.url.appendingPathComponent("received.wav"))
                == (try Self.fileBytes(in: folder))
        )
        var status = stat()
        #expect(lstat(fifo, &status) == 0 && status.st_mode & S_IFMT == S_IFIFO, "still a FIFO")

        try FileManager.default.createDirectory(atPath: folder.path("dir.wav"), withIntermediateDirectories: false)
        let refused = try await renderSession(Self.render + ["-o", folder.path("dir.wav")])
        #expect(refused.status == 74)
        #expect(refused.standardError == "error: Cannot write \(folder.path("dir.wav")): it is a directory\n")
    }

    @Test("A character device such as /dev/null is written, not replaced")
    func device() async throws {
        let result = try await renderSession(Self.render + ["-o", "/dev/null"])
        #expect(result.status == 0, "\(result.standardError)")
        var status = stat()
        #expect(lstat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR)
    }

    @Test("The output's folder is created, as batch and import create theirs")
    func createsFolder() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(Self.render + ["-o", folder.path("new/deeper/s.wav")])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardOutput == folder.path("new/deeper/s.wav") + "\n"
                + folder.path("new/deeper/s.wav.timeline.json") + "\n"
        )
    }

    @Test(
        "Two outputs at one path, or an extension it cannot write, are usage errors before any work",
        arguments: [
            (
                ["-o", "X.wav", "--timeline", "X.wav"],
                "error: --timeline: the timeline and the audio cannot both go to X.wav\n"
            ),
            (
                ["-o", "X.wav", "--timeline", "./sub/../X.wav"],
                "error: --timeline: the timeline and the audio cannot both go to ./sub/../X.wav\n"
            ),
            (
                ["-o", "-", "--timeline", "-"],
                "error: --timeline: the timeline and the audio cannot both go to standard output\n"
            ),
            (
                ["-o", "X.aiff"],
                "error: --output: cannot write .aiff files; the formats written are .wav, .flac, .mp3, .opus, .ogg, .m4a and .m4b (or name one with --format)\n"
            ),
            (
                ["-o", "X.Opus", "--sample-rate", "22050"],
                "error: --format: opus cannot hold 22050 Hz; it takes 48000 Hz\n"
            ),
            (
                ["-o", "X.mp3", "--bitrate", "64", "--quality", "2"],
                "error: --format: give --bitrate (constant) or --quality (variable), not both\n"
            ),
            (
                ["-o", "X.mp3", "--channels", "3"],
                "error: --format: mp3 cannot hold 3 channels; it takes 1 to 2\n"
            ),
            (
                ["-o", "-", "--verify"],
                "error: --verify: standard output cannot be read back; write a file to verify it\n"
            ),
        ]
    )
    func usageErrors(arguments: [String], message: String) async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession(
            ["render", Repository.root.appendingPathComponent(Self.script).path, "--cache", Repository.cache.path]
                + arguments,
            directory: folder.url
        )
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix(message), "\(result.standardError)")
        #expect(try folder.contents().isEmpty, "nothing written")
    }

    @Test("A link to the audio output given as the timeline is the same file")
    func sameFileThroughLink() async throws {
        let folder = try TemporaryFolder()
        try Data().write(to: folder.url.appendingPathComponent("a.wav"))
        try FileManager.default.createSymbolicLink(atPath: folder.path("b.json"), withDestinationPath: "a.wav")
        let result = try await renderSession(
            Self.render + ["-o", folder.path("a.wav"), "--timeline", folder.path("b.json")]
        )
        #expect(result.status == 64)
        #expect(
            result.standardError.hasPrefix(
                "error: --timeline: the timeline and the audio cannot both go to \(folder.path("b.json"))\n"
            )
        )
    }

    @Test("-n refuses, before any work, to replace an existing output; without it outputs are replaced")
    func noOverwrite() async throws {
        let folder = try TemporaryFolder()
        try Data("keep".utf8).write(to: folder.url.appendingPathComponent("s.wav"))
        let refused = try await renderSession(
            Self.render + ["-o", folder.path("s.wav"), "-n", "--cache", folder.path("empty-cache")]
        )
        #expect(refused.status == 1)
        #expect(
            refused.standardError
                == "error: \(folder.path("s.wav")) exists; not replacing it (outputs are replaced unless -n/--no-overwrite is given)\n"
        )
        #expect(try folder.contents() == ["s.wav"], "no cache was filled: the check comes first")
        let silence = try await renderSession([
            "silence", "--seconds", "1", "-o", folder.path("s.wav"), "--no-overwrite",
        ])
        #expect(silence.status == 1)
        #expect(try String(contentsOfFile: folder.path("s.wav"), encoding: .utf8) == "keep")
        let replaced = try await renderSession(["silence", "--seconds", "1", "-o", folder.path("s.wav")])
        #expect(replaced.status == 0)
        #expect(try AudioFileDecoder.measure(path: folder.path("s.wav")).frameCount == 8_000)
    }

    @Test("silence -o - writes the WAV to standard output")
    func silenceToStandardOutput() async throws {
        let result = try await renderSession(["silence", "--seconds", "0.5", "-o", "-", "--sample-rate", "16000"])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardOutputBytes.count == 44 + 8_000 * 2)
        #expect(result.standardOutputBytes.dropFirst(44).allSatisfy { $0 == 0 })
    }

    @Test(
        "Negative numbers say what range is allowed",
        arguments: [
            (
                ["silence", "--seconds", "-3", "-o", "x.wav"],
                "error: --seconds: -3.0 is outside the range above 0 up to 86400\n"
            ),
            (
                ["batch", "Fixtures/scripts", "-o", "x", "--seed", "-1"],
                "error: The value '-1' is invalid for '--seed <n>': a seed is a whole number from 0 to 18446744073709551615\n"
            ),
            (
                ["batch", "Fixtures/scripts", "-o", "x", "--jobs", "-2"],
                "error: The value '-2' is invalid for '--jobs <n>': -2 is outside 1 to 64\n"
            ),
        ]
    )
    func negativeNumbers(arguments: [String], message: String) async throws {
        let result = try await renderSession(arguments)
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix(message), "\(result.standardError)")
    }

    @Test("A script is read from standard input (-) and from a pipe's path, as <(…) gives it")
    func scriptFromPipes() async throws {
        let folder = try TemporaryFolder()
        let bytes = try Data(contentsOf: Repository.root.appendingPathComponent(Self.script))
        let arguments = ["--cache", "Fixtures/cache", "--seed", "3"]
        let fromFile = try await renderSession(["timeline", Self.script] + arguments)
        let fromStandardInput = try await renderSession(["timeline", "-"] + arguments, input: bytes)
        #expect(fromStandardInput.status == 0, "\(fromStandardInput.standardError)")
        #expect(fromStandardInput.standardOutput == fromFile.standardOutput)

        let fifo = folder.path("script.json")
        #expect(mkfifo(fifo, 0o600) == 0)
        async let writer = ChildProcess.run(
            "/bin/sh",
            ["-c", "cat '\(Repository.root.appendingPathComponent(Self.script).path)' > '\(fifo)'"],
            waitsForTurn: false
        )
        let fromPipe = try await renderSession(["timeline", fifo] + arguments)
        #expect(try await writer.termination == .exited(0))
        #expect(fromPipe.status == 0, "\(fromPipe.standardError)")
        #expect(fromPipe.standardOutput == fromFile.standardOutput)

        let invalid = try await renderSession(["timeline", "-"] + arguments, input: Data("{".utf8))
        #expect(invalid.status == 65)
        #expect(invalid.standardError.hasPrefix("error: <stdin>: line 1, column 2: "), "\(invalid.standardError)")
    }

    @Test("An unknown voice is one line for a render and one for a whole batch, before any work")
    func unknownVoiceOnce() async throws {
        let folder = try TemporaryFolder()
        let line =
            #"error: unknown voice "espeak:xx-nonexistent": eSpeak NG has no such voice; `render-session voices` lists them"#
        let render = try await renderSession([
            "render", "Fixtures/scripts/ten-minute-session.json", "-o", folder.path("s.wav"),
            "--cache", folder.path("c"), "--voice", "espeak:xx-nonexistent",
        ])
        #expect(render.status == 65)
        #expect(render.standardError == line + "\n")
        let batch = try await renderSession([
            "batch", "Fixtures/scripts", "-o", folder.path("out"), "--cache", folder.path("c"),
            "--voice", "espeak:xx-nonexistent",
        ])
        #expect(batch.status == 65)
        #expect(batch.standardError == line + "\n")
        #expect(try folder.contents() == [], "no output folder, no cache")
    }

    @Test("batch over a folder with no scripts exits 1 and says so")
    func emptyBatch() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("none"), withIntermediateDirectories: false)
        let result = try await renderSession(["batch", folder.path("none"), "-o", folder.path("out")])
        #expect(result.status == 65)
        #expect(result.standardError == "error: No scripts to render: \(folder.path("none")) holds no *.json file\n")
    }

    @Test("A Markdown line that looks like a marker but is not one fails import with its file and line")
    func markerLikeLine() async throws {
        let folder = try TemporaryFolder()
        let markdown = try String(
            contentsOf: Repository.fixtures.appendingPathComponent("meditations/reactivity.md"),
            encoding: .utf8
        )
        var lines = markdown.components(separatedBy: "\n")
        let marker = try #require(lines.firstIndex(of: "[2:00]"))
        lines[marker] = "[2:00] Notice your feet."
        try Data(lines.joined(separator: "\n").utf8).write(to: folder.url.appendingPathComponent("m.md"))
        let result = try await renderSession(["import", folder.path("m.md"), "-o", folder.path("out")])
        #expect(result.status == 65)
        #expect(
            result.standardError.hasPrefix(
                "error: \(folder.path("m.md")):\(marker + 1): \"[2:00] Notice your feet.\" is not a time marker"
            ),
            "\(result.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("out")))
    }

    @Test(
        "-y, ffmpeg's word for replacing, is accepted where -n is (replacing is the default); both together are a usage error"
    )
    func overwriteFlag() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.wav")
        for seconds in ["0.01", "0.02"] {
            let result = try await renderSession(["silence", "--seconds", seconds, "-o", path, "-y"])
            #expect(result.status == 0, "\(result.standardError)")
        }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: path)).count == 44 + 320,
            "the second file (0.02 s at 8 kHz) replaced the first"
        )
        for command in [["silence", "--seconds", "0.01"], ["show", "Fixtures/positions/five-seconds.timeline.json"]] {
            let extra = command[0] == "show" ? folder.path("s.svg") : path
            let result = try await renderSession(command + ["-o", extra, "-n", "-y"])
            #expect(result.status == 64)
            #expect(result.standardError.hasPrefix("error: -n and -y contradict each other; give one\n"))
        }
    }
}
