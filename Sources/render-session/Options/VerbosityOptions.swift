import ArgumentParser

/// `-q` and `-v`, on every command, as sox and ffmpeg users expect: errors only, or each stage
/// with its time. Read once, before the command runs (``RenderSession/main()``).
struct VerbosityOptions: ParsableArguments {
    @Flag(name: [.customShort("q"), .long], help: "Print errors only: no summary, warnings or progress.")
    var quiet = false

    @Flag(name: [.customShort("v"), .long], help: "Also print each stage as it ends, with its time.")
    var verbose = false

    func validate() throws {
        if quiet && verbose { throw ValidationError("-q/--quiet and -v/--verbose ask for opposite things; give one") }
    }

    var level: Console.Level { quiet ? .quiet : verbose ? .verbose : .normal }
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
