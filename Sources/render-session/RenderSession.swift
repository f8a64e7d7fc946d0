import ArgumentParser
import Foundation
import SessionAudio
import SessionKit
import SessionTimeline

/// `render-session`: turns a guided-session script into one gapless audio file.
@main
struct RenderSession: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-session",
        abstract: "Render a guided-meditation script into one gapless audio file.",
        discussion: """
            A script (the app backend's GuidedMeditationScript JSON) says what is spoken when. \
            Every text's clip comes from a content-addressed cache of MP3 files, filled on demand \
            by the embedded eSpeak NG voice, Piper's natural voices offline (render-session \
            voices lists them), the app backend's TTS proxy or an OpenAI-compatible speech server; the clips, exact silences, randomized interjections and a closing bell \
            become one audio file (\(FormatNames.titles)), and the plan of it a \
            timeline JSON.

            \(ExitStatus.summary)

            Example:
              render-session render Fixtures/scripts/ten-minute-session.json \\
                -o out/session.wav --cache Fixtures/cache --seed 7
            """,
        version: "\(SessionKitVersion.current) (\(buildCommit))",
        subcommands: [
            RenderCommand.self, TimelineCommand.self, PrepareCommand.self, BatchCommand.self, ImportCommand.self,
            ListCommand.self, QueueCommand.self, SilenceCommand.self, SoundsCommand.self, VerifyCommand.self,
            PositionCommand.self, ShowCommand.self, CaptionsCommand.self, VoicesCommand.self, ServeCommand.self,
        ]
    )

    /// Parses and runs as ArgumentParser does, with two mistakes told the way a person needs:
    /// a misspelled command is named as one (ArgumentParser would complain about its first option
    /// instead), and an option is never "corrected" to its opposite (`--overwrite` is not
    /// `--no-overwrite`).
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments == ["--version"] {
            Console.writeStandardOutput(Data(await versionReport().utf8))
            return
        }
        Console.wantsJSON.withLock { $0 = arguments.prefix { $0 != "--" }.contains("--json") }
        let logFormat = VerbosityOptions.logFormat(in: arguments, environment: ProcessInfo.processInfo.environment)
        Console.logFormat.withLock { $0 = logFormat }
        if let problem = unknownCommand(in: arguments) {
            if Console.logsJSON {
                Console.writeRecord(LogRecord(level: .error, event: "error", message: problem))
            } else {
                Console.writeStandardError(
                    "error: \(problem)\nUsage: render-session <subcommand>\n  See 'render-session --help' for more information.\n"
                )
            }
            Console.failureJSON(exitStatus: ExitCode.validationFailure.rawValue, extra: [problem])
            ProcessControl.exit(status: ExitCode.validationFailure.rawValue)
        }
        do {
            try await parseAndRun(arguments)
        } catch {
            let code = exitCode(for: error)
            let message = lowercasingErrorPrefix(withoutOppositeSuggestion(fullMessage(for: error)))
            if !message.isEmpty {
                if code == .success {
                    Console.writeStandardOutput(Data((message + "\n").utf8))
                } else if Console.logsJSON {
                    // One record: the error, without its usage lines.
                    let first = message.split(separator: "\n").first.map(String.init) ?? message
                    let line = first.hasPrefix("error: ") ? String(first.dropFirst("error: ".count)) : first
                    Console.writeRecord(
                        LogRecord(level: .error, event: "error", message: printable(line, limit: 2_000))
                    )
                } else {
                    Console.writeStandardError(message + "\n")
                }
            }
            // A usage error's first line is the error; the rest is usage.
            let usage = message.split(separator: "\n").first.map { [String($0)] } ?? []
            Console.failureJSON(exitStatus: code.rawValue, extra: usage)
            ProcessControl.exit(status: code.rawValue)
        }
    }

    /// Parses `arguments` and runs the command they name. Off the main actor, which `@main`
    /// gives `main()`: the parsed command is a plain value the command's own task then owns.
    private nonisolated static func parseAndRun(_ arguments: [String]) async throws {
        var command = try parseAsRoot(arguments)
        if let told = command as? any TakesVerbosity {
            Console.level.withLock { $0 = told.verbosity.level }
            if let format = told.verbosity.logFormat { Console.logFormat.withLock { $0 = format } }
        }
        Console.started(type(of: command).configuration.commandName ?? "render-session")
        if var asynchronous = command as? any AsyncParsableCommand {
            try await asynchronous.run()
        } else {
            try command.run()
        }
    }

    /// `unknown command 'rendr' (did you mean 'render'?)` when the first argument is a word that
    /// names no command; `nil` when it names one or is an option.
    static func unknownCommand(in arguments: [String]) -> String? {
        guard let first = arguments.first, !first.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.compactMap { $0.configuration.commandName } + ["help"]
        guard !names.contains(first) else { return nil }
        let near = nearestNames(to: first, among: names).map { "'\($0)'" }
        let suggestion = near.isEmpty ? "" : " (did you mean \(near.joined(separator: " or "))?)"
        return "unknown command '\(printable(first, limit: 100))'\(suggestion)"
    }

    /// ArgumentParser's `Error: …` as every other error of the tool begins, `error: …` (as git's
    /// and GCC's do), so that a log filter or a person finds them all with one word.
    static func lowercasingErrorPrefix(_ message: String) -> String {
        message.hasPrefix("Error: ") ? "error: " + message.dropFirst("Error: ".count) : message
    }

    /// ArgumentParser's message with a suggestion dropped when it is the option's opposite:
    /// `--overwrite` → `--no-overwrite` would do the reverse of what was asked.
    static func withoutOppositeSuggestion(_ message: String) -> String {
        guard
            let match = message.firstMatch(
                of: /Unknown option '--(?<given>[a-z-]+)'\. Did you mean '--(?<offered>[a-z-]+)'\?/
            )
        else { return message }
        let (given, offered) = (String(match.output.given), String(match.output.offered))
        guard given == "no-" + offered || offered == "no-" + given else { return message }
        return message.replacingCharacters(in: match.range, with: "Unknown option '--\(given)'")
    }

    /// What `--version` prints: the release and commit, then each library and engine with the
    /// version it reports here, one a line, so that a bug report carries them.
    static func versionReport() async -> String {
        var lines = ["render-session \(SessionKitVersion.current) (commit \(buildCommit))"]
        for (name, version) in LibraryVersions.all { lines.append("\(name) \(version)") }
        let piper = PiperInstallation.located()
        if let version = await piper.engineVersion() {
            lines.append("Piper \(version) (\(piper.python))")
        } else {
            lines.append("Piper not installed (looked for \(piper.python); scripts/setup-piper installs it)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
