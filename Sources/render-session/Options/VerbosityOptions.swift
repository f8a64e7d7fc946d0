import ArgumentParser
import SessionTimeline

/// `-q` and `-v`, on every command, as sox and ffmpeg users expect: errors only, or each stage
/// with its time; and `--log-format`, lines for a person or JSON for a log collector. Read once,
/// before the command runs (``RenderSession/main()``).
struct VerbosityOptions: ParsableArguments {
    @Flag(name: [.customShort("q"), .long], help: "Print errors only: no summary, warnings or progress.")
    var quiet = false

    @Flag(name: [.customShort("v"), .long], help: "Also print each stage as it ends, with its time.")
    var verbose = false

    @Option(
        help: ArgumentHelp(
            "How standard error is written: lines for a person, or one JSON object per line for a log collector. (default: $RENDER_SESSION_LOG_FORMAT, else text)",
            valueName: "text|json"
        ),
        transform: { text in
            guard let format = Console.LogFormat(rawValue: text) else {
                throw ValidationError("--log-format: \(printable(text, limit: 40)) is not text or json")
            }
            return format
        }
    )
    var logFormat: Console.LogFormat?

    func validate() throws {
        if quiet && verbose { throw ValidationError("-q/--quiet and -v/--verbose ask for opposite things; give one") }
    }

    var level: Console.Level { quiet ? .quiet : verbose ? .verbose : .normal }

    /// The log format `arguments` ask for (`--log-format F` or `--log-format=F`, before any `--`),
    /// else `$RENDER_SESSION_LOG_FORMAT`'s, else text: read before the command is parsed, so that
    /// a usage error is written in it too. A value that names no format is left to the parser's error.
    static func logFormat(in arguments: [String], environment: [String: String]) -> Console.LogFormat {
        let options = arguments.prefix { $0 != "--" }
        var given: String?
        for (index, argument) in options.enumerated() {
            if argument == "--log-format", index + 1 < options.count {
                given = options[index + 1]
            } else if argument.hasPrefix("--log-format=") {
                given = String(argument.dropFirst("--log-format=".count))
            }
        }
        return (given ?? environment["RENDER_SESSION_LOG_FORMAT"]).flatMap(Console.LogFormat.init(rawValue:)) ?? .text
    }
}

/// A command that takes ``VerbosityOptions``.
protocol TakesVerbosity {
    var verbosity: VerbosityOptions { get }
}

extension RenderCommand: TakesVerbosity {}
extension TimelineCommand: TakesVerbosity {}
extension PrepareCommand: TakesVerbosity {}
extension BatchCommand: TakesVerbosity {}
extension ImportCommand: TakesVerbosity {}
extension ListCommand: TakesVerbosity {}
extension QueueCommand: TakesVerbosity {}
extension SilenceCommand: TakesVerbosity {}
extension SoundsCommand: TakesVerbosity {}
extension VerifyCommand: TakesVerbosity {}
extension PositionCommand: TakesVerbosity {}
extension VoicesCommand: TakesVerbosity {}
