import Foundation
import SessionTimeline
import TestSupport
import Testing

/// The help the command prints, held to what it does and to docs/cli.md.
@Suite("Help and documentation", .serialized)
struct HelpTests {
    static let subcommands = [
        "render", "timeline", "prepare", "batch", "import", "list", "queue", "silence", "sounds", "verify",
        "position", "show", "captions", "voices", "serve",
    ]

    /// The commands that run until they are stopped: their examples are run by their own tests
    /// (`serve`'s by ServeTests, with a free port and SIGTERM), not to their end here.
    static let runUntilStopped: Set<String> = ["serve"]

    /// The example command lines in a help text: the lines under `Example:`/`Examples:`, with
    /// shell continuations joined.
    static func examples(in help: String) -> [String] {
        var examples: [String] = []
        var inExamples = false
        var current = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line == "Example:" || line == "Examples:" {
                inExamples = true
                continue
            }
            guard inExamples else { continue }
            if line.isEmpty { break }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            current +=
                (current.isEmpty ? "" : " ")
                + (trimmed.hasSuffix("\\") ? String(trimmed.dropLast()).trimmingCharacters(in: .whitespaces) : trimmed)
            if !trimmed.hasSuffix("\\") {
                examples.append(current)
                current = ""
            }
        }
        return examples
    }

    /// Splits a command line as a POSIX shell would for the words examples use: spaces, single
    /// quotes, and a final `> file` redirection.
    static func words(_ line: String) -> (words: [String], redirect: String?) {
        var words: [String] = []
        var word = ""
        var quoted = false
        var inWord = false
        for character in line {
            if character == "'" {
                quoted.toggle()
                inWord = true
            } else if character == " " && !quoted {
                if inWord { words.append(word) }
                word = ""
                inWord = false
            } else {
                word.append(character)
                inWord = true
            }
        }
        if inWord { words.append(word) }
        if let index = words.firstIndex(of: ">"), index + 1 < words.count {
            return (Array(words[..<index]), words[index + 1])
        }
        return (words, nil)
    }

    @Test("Every help shows examples, wraps no line, and prints no stray backslash in prose")
    func helpShape() async throws {
        for command in [[]] + Self.subcommands.map({ [$0] }) {
            let result = try await renderSession(command + ["--help"])
            #expect(result.status == 0)
            let lines = result.standardOutput.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(!Self.examples(in: result.standardOutput).isEmpty, "\(command) shows an example")
            let examples = lines.drop { $0 != "Example:" && $0 != "Examples:" }.prefix { !$0.isEmpty }
            for line in lines where line.hasSuffix("\\") {
                #expect(examples.contains(line), "\(command): a backslash ends a line outside the examples: \(line)")
            }
            for line in examples.dropFirst() {
                #expect(line.hasPrefix("  "), "\(command): an example line the help wrapped: \(line)")
            }
        }
    }

    @Test("The root help lists the exit statuses")
    func exitStatuses() async throws {
        let help = try await renderSession(["--help"]).standardOutput.replacingOccurrences(of: "\n", with: " ")
        for phrase in ["0 done", "1 the work failed", "64 a usage error", "130 or 143 interrupted"] {
            #expect(help.contains(phrase), "\(phrase)")
        }
    }

    @Test("Every example every help prints runs against the fixtures")
    func examplesRun() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        for command in [[]] + Self.subcommands.filter({ !Self.runUntilStopped.contains($0) }).map({ [$0] }) {
            for example in Self.examples(in: try await renderSession(command + ["--help"]).standardOutput) {
                let line =
                    example
                    .replacingOccurrences(of: " out/", with: " \(folder.path("out"))/")
                    .replacingOccurrences(of: "https://api.example.com", with: server.baseURL.absoluteString)
                var (words, redirect) = Self.words(line)
                // `NAME=value render-session …`: the environment the example sets.
                var environment = ["XDG_CACHE_HOME": folder.path("xdg-cache"), "HOME": folder.path("home")]
                while let first = words.first, first.contains("="), !first.hasPrefix("-") {
                    let parts = first.split(separator: "=", maxSplits: 1).map(String.init)
                    environment[parts[0]] = parts[1]
                    words.removeFirst()
                }
                #expect(words.first == "render-session", "\(example)")
                let result = try await renderSession(Array(words.dropFirst()), environment: environment)
                #expect(result.status == 0, "\(example): \(result.standardError)")
                if let redirect {
                    try FileManager.default.createDirectory(
                        atPath: URL(fileURLWithPath: redirect).deletingLastPathComponent().path,
                        withIntermediateDirectories: true
                    )
                    try Data(result.standardOutputBytes).write(to: URL(fileURLWithPath: redirect))
                    #expect(result.standardOutputBytes.starts(with: Array("RIFF".utf8)), "\(example) writes a WAV")
                }
            }
        }
    }

    /// The long options `render-session COMMAND --help` lists, without those every command takes
    /// (docs/cli.md's "Inputs, outputs and exit statuses" says them once).
    static func helpOptions(_ command: String) async throws -> Set<String> {
        let help = try await renderSession([command, "--help"]).standardOutput
        let options = help.split(separator: "\n").drop { !$0.hasSuffix("OPTIONS:") }
        return Set(
            options.flatMap { line in
                line.trimmingCharacters(in: .whitespaces).hasPrefix("-")
                    ? line.matches(of: /--[a-z][a-z-]*/).map { String($0.output) } : []
            }
        ).subtracting(["--help", "--version", "--quiet", "--verbose", "--log-format"])
    }

    /// The long options docs/cli.md shows in the synopsis of `## \`COMMAND\``, with
    /// `[provider options]`, `[sound options]` and `[encoding options]` standing for their sections' synopses.
    static func documentedOptions(_ command: String) throws -> Set<String> {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        func synopsis(of heading: String) -> String {
            let section = text.components(separatedBy: "\n## ").first { $0.hasPrefix(heading) } ?? ""
            return section.components(separatedBy: "```").dropFirst().first ?? ""
        }
        var block = synopsis(of: "`\(command)`")
        if block.contains("[provider options]") { block += synopsis(of: "Provider options") }
        if block.contains("[sound options]") { block += synopsis(of: "Sound options") }
        if block.contains("[encoding options]") { block += synopsis(of: "Encoding options") }
        return Set(block.matches(of: /--[a-z][a-z-]*/).map { String($0.output) })
    }

    @Test("docs/cli.md and --help list the same options for every command", arguments: subcommands)
    func docsAgree(command: String) async throws {
        let help = try await Self.helpOptions(command)
        let documented = try Self.documentedOptions(command)
        #expect(!help.isEmpty)
        #expect(
            help.subtracting(documented).isEmpty,
            "\(command): in --help, not in docs/cli.md: \(help.subtracting(documented).sorted())"
        )
        #expect(
            documented.subtracting(help).isEmpty,
            "\(command): in docs/cli.md, not in --help: \(documented.subtracting(help).sorted())"
        )
    }

    @Test("docs/cli.md's command table and the root help list the same commands")
    func commandTable() async throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let table = text.components(separatedBy: "| subcommand | what it does |").dropFirst().first ?? ""
        let rows = table.split(separator: "\n").dropFirst().prefix { $0.hasPrefix("| `") }
        let documented = rows.compactMap { $0.firstMatch(of: /^\| `([a-z]+)`/).map { String($0.output.1) } }
        #expect(documented == Self.subcommands)
        let help = try await renderSession(["--help"]).standardOutput
        let listed = help.split(separator: "\n").drop { $0 != "SUBCOMMANDS:" }.dropFirst().prefix { !$0.isEmpty }
            .compactMap { $0.firstMatch(of: /^  ([a-z]+)/).map { String($0.output.1) } }
        #expect(listed.filter { $0 != "help" } == Self.subcommands)
    }

    @Test("The usage error docs/cli.md quotes for an extension not written is the one the command prints")
    func extensionError() async throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/cli.md"), encoding: .utf8)
        let flat = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let quoted = try #require(flat.firstMatch(of: /\(`-o out\.aiff` → `([^`]+)`\)/)).output.1
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "-o",
            folder.path("out.aiff"),
        ])
        #expect(result.status == 64)
        #expect(result.standardError.split(separator: "\n").first == "error: \(quoted)")
    }

    @Test("The root help says the session becomes one audio file, in any of the formats")
    func rootHelpFormats() async throws {
        let help = try await renderSession(["--help"]).standardOutput.split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        #expect(help.contains("become one audio file (WAV, FLAC, MP3, Opus, Ogg Vorbis, M4A or M4B)"))
        #expect(!help.contains("WAV file"))
    }

    /// How a help's prose names each format; a format added to ``AudioFileFormat`` (each has its
    /// writer) must be named here, and then in every help that lists formats.
    static func title(_ format: AudioFileFormat) -> String {
        switch format {
        case .wav: "WAV"
        case .flac: "FLAC"
        case .mp3: "MP3"
        case .opus: "Opus"
        case .vorbis: "Ogg Vorbis"
        case .m4a: "M4A"
        case .m4b: "M4B"
        }
    }

    @Test(
        "Every help that lists the formats lists every format the tool writes: its overview, --format and -o",
        arguments: ["render", "silence", "batch", "verify", "timeline"]
    )
    func helpFormatLists(command: String) async throws {
        let help = try await renderSession([command, "--help"]).standardOutput.split(whereSeparator: \.isWhitespace)
            .joined(separator: " ")
        let names = AudioFileFormat.allCases.map(\.rawValue)
        let nameList = names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
        if command != "verify" {
            #expect(help.contains("The file format: \(nameList)."), "--format in \(command)")
        }
        if command == "render" || command == "silence" {
            let titles = AudioFileFormat.allCases.map(Self.title)
            #expect(help.contains(titles.dropLast().joined(separator: ", ") + " or " + (titles.last ?? "")))
            #expect(help.contains("(" + names.map { "." + $0 }.joined(separator: ", ") + ")"), "-o in \(command)")
        }
        if command == "verify" { #expect(help.contains("Decodes the file (\(nameList))")) }
        if command == "batch" { #expect(help.contains("{id}.wav and {id}.wav.timeline.json")) }
    }

    @Test(
        "docs/timing.md gives the output rates --sample-rate takes (SampleRate.supported), and the command refuses the next ones out"
    )
    func outputRateRange() async throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent("docs/timing.md"), encoding: .utf8)
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let range = SampleRate.supported
        let written = [range.lowerBound, range.upperBound].map {
            $0.formatted(.number.locale(Locale(identifier: "en_US")))
        }
        #expect(text.contains("The output rate is in the same range, \(written[0]) to \(written[1]) Hz"))
        let folder = try TemporaryFolder()
        for (hertz, status) in [(range.lowerBound - 1, 64), (range.lowerBound, 0), (range.upperBound + 1, 64)] {
            let result = try await renderSession([
                "silence", "--seconds", "0.01", "--sample-rate", String(hertz), "-o", folder.path("\(hertz).wav"),
            ])
            #expect(result.status == Int32(status), "\(hertz) Hz: \(result.standardError)")
        }
    }

    @Test(
        "Completion names files of each option's kind, folders, fixed values, and asks the tool for voices and sounds"
    )
    func completions() async throws {
        let bash = try await renderSession(["--generate-completion-script", "bash"])
        #expect(bash.status == 0)
        for expected in [
            // Scripts and timelines, Markdown for import, audio for -o and verify.
            "-fX '!*.@(json)'", "-fX '!*.@(md)'", "-fX '!*.@(wav|flac|mp3|opus|ogg|m4a|m4b)'",
            // --format's and --loudness's values.
            "'wav'$'\\n''flac'$'\\n''mp3'$'\\n''opus'$'\\n''ogg'$'\\n''m4a'$'\\n''m4b'",
            "'off'$'\\n''podcast'$'\\n''streaming'$'\\n''ebu-r128'$'\\n''speech'",
            // Voices and sounds are asked of the tool when tab is pressed.
            "---completion render -- --voice", "---completion render -- --ambience",
        ] {
            #expect(bash.standardOutput.contains(expected), "\(expected)")
        }
        // What the tool answers: the library's names, this machine's voices, by the word typed.
        let sounds = try await renderSession(
            [
                "---completion", "render", "--", "--start-gong", "3", "1", "render-session", "render", "--start-gong",
                "g",
            ]
        )
        #expect(sounds.status == 0 && sounds.standardOutput == "gong\ngong-dreimal\ngong-ende\n")
        let voices = try await renderSession(
            ["---completion", "render", "--", "--voice", "3", "9", "render-session", "render", "--voice", "espeak:en"]
        )
        let listed = voices.standardOutput.split(separator: "\n")
        #expect(listed.contains("espeak:en-us") && listed.allSatisfy { $0.hasPrefix("espeak:en") }, "\(listed)")
    }
}
