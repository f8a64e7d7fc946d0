public import Foundation
import Subprocess
import SystemPackage

/// Child processes the tests run (the built command, ffmpeg, ffprobe, shells), awaited without
/// blocking a thread.
///
/// Swift Testing runs tests on Swift concurrency's cooperative pool, one thread per core: a test
/// that waited for a child with `Process.waitUntilExit()` or `readDataToEndOfFile()` held one of
/// those threads for the child's whole run, and two such tests stopped every other test. Here
/// swift-subprocess spawns the child, reads its pipes through its own epoll thread and learns of
/// its exit from a pidfd, so a waiting test gives its thread back.
///
/// Children run at most one per core at once (as many as the blocked threads used to allow), so
/// that freeing the threads does not start every test's child together: dozens of renders on two
/// cores made each take minutes, and tests that time a child (an interrupt, a timeout) failed. A
/// test waiting for its turn is suspended, not blocked, and the tests that run no child go on.
public enum ChildProcess {
    /// Runs `executable` with `arguments` to its end and collects what it printed.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment; `nil` inherits the test process's.
    ///   - directory: the child's working directory; `nil` keeps the test process's.
    ///   - input: the bytes on the child's standard input, which is then closed; `nil` gives it
    ///     `/dev/null`. A child that exits without reading them all is not an error.
    ///   - waitsForTurn: `false` for a child that another child waits on (the far end of a FIFO),
    ///     which must start at once: waiting for a turn that its partner holds would never end.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: Data? = nil,
        waitsForTurn: Bool = true
    ) async throws -> ProcessOutcome {
        try await run(
            executable,
            arguments,
            environment: environment,
            directory: directory,
            input: input,
            waitsForTurn: waitsForTurn,
            while: { _ in }
        ).outcome
    }

    /// Runs `executable` with `arguments`, calls `body` while it runs (to signal it, say), then
    /// waits for its end; returns what it printed and what `body` returned.
    ///
    /// `body` must not keep the ``RunningProcess``: it is valid only until `body` returns. A child
    /// that `body` runs (`pkill`, say) runs in this one's turn.
    public static func run<Result: Sendable>(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: Data? = nil,
        waitsForTurn: Bool = true,
        while body: (RunningProcess) async throws -> Result
    ) async throws -> (outcome: ProcessOutcome, result: Result) {
        try await inTurn(waitsForTurn) {
            try await spawn(executable, arguments, environment: environment, directory: directory, input: input, body)
        }
    }

    /// The sanitizers' options the suite runs with (scripts/test: leak detection off), kept in a
    /// child given a whole environment of its own: a sanitized command would otherwise report, at
    /// its exit, what the Swift runtime keeps until then, and fail a test of something else.
    private static let sanitizerOptions = ProcessInfo.processInfo.environment.filter {
        ["ASAN_OPTIONS", "TSAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"].contains($0.key)
    }

    /// What every child gets unless its environment says otherwise: no plain progress lines off a
    /// terminal (`RENDER_SESSION_PROGRESS_SECONDS`), which a sanitized or loaded run lasting past
    /// 10 s would add to the output a test reads line by line. The tests of those lines set it.
    private static let childDefaults = ["RENDER_SESSION_PROGRESS_SECONDS": "3600"]

    /// Runs the child, in whatever turn the caller has.
    private static func spawn<Result: Sendable>(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]?,
        directory: String?,
        input: Data?,
        _ body: (RunningProcess) async throws -> Result
    ) async throws -> (outcome: ProcessOutcome, result: Result) {
        let configuration = Configuration(
            executable: .path(FilePath(executable)),
            arguments: Arguments(arguments),
            // Keys made at run time: the key type offers no other public initializer.
            environment: environment.map { variables in
                .custom(
                    Dictionary(
                        uniqueKeysWithValues: variables.merging(sanitizerOptions) { given, _ in given }
                            .merging(childDefaults) { given, _ in given }.map {
                                (.init(stringLiteral: $0.key), $0.value)
                            }
                    )
                )
            }
                ?? .inherit.updating(
                    Dictionary(uniqueKeysWithValues: childDefaults.map { (.init(stringLiteral: $0.key), $0.value) })
                ),
            workingDirectory: directory.map { FilePath($0) }
        )
        // No limit: a limit would have the whole of it reserved up front, and `-o -` writes audio.
        let output = BytesOutput.bytes(limit: .max)
        let error = BytesOutput.bytes(limit: .max)
        let start = ContinuousClock.now
        if let input {
            let run = try await Subprocess.run(configuration, input: .inputWriter, output: output, error: error) {
                execution async throws -> Result in
                // Written beside `body`, so that a child that waits for its input before doing
                // what `body` waits for is not stuck; a child that exits without reading it all
                // makes the write fail, which is no error here (as a shell's pipe would not be).
                async let written: Void = {
                    _ = try? await execution.standardInputWriter.write(Array(input))
                    try? await execution.standardInputWriter.finish()
                }()
                let result = try await body(RunningProcess(execution))
                await written
                return result
            }
            return (ProcessOutcome(run, duration: .now - start), run.closureResult)
        }
        let run = try await Subprocess.run(configuration, input: .none, output: output, error: error) {
            execution async throws -> Result in
            try await body(RunningProcess(execution))
        }
        return (ProcessOutcome(run, duration: .now - start), run.closureResult)
    }

    /// Runs `executable` as ``run(_:_:environment:directory:input:)`` does, but gives up on it after
    /// `limit` (counted from its start, not from the wait for its turn): it is then killed, and
    /// the answer is `nil`, so that a hang fails a test instead of stopping the run.
    public static func run(
        _ executable: String,
        _ arguments: [String] = [],
        environment: [String: String]? = nil,
        directory: String? = nil,
        input: Data? = nil,
        timeLimit limit: Duration
    ) async throws -> ProcessOutcome? {
        try await inTurn(true) {
            try await withThrowingTaskGroup(of: ProcessOutcome?.self) { group in
                group.addTask {
                    // A cancelled run kills its child (swift-subprocess's teardown ends in SIGKILL).
                    try await spawn(
                        executable,
                        arguments,
                        environment: environment,
                        directory: directory,
                        input: input,
                        { _ in }
                    ).outcome
                }
                group.addTask {
                    try await Task.sleep(for: limit)
                    return nil
                }
                let first = try await group.next() ?? nil
                group.cancelAll()
                // The killed run may end with a cancellation error; its outcome is not wanted then.
                while (try? await group.next()) != nil {}
                return first
            }
        }
    }

    /// The turns: one per core.
    private static let turns = Turns(ProcessInfo.processInfo.activeProcessorCount)

    /// Whether this task runs inside a child's turn (in the body of its run), so that a child it
    /// runs takes no turn of its own: one it waited for could be held by tests waiting for it.
    @TaskLocal private static var hasTurn = false

    /// Runs `body` in a turn: at once if `waits` is false or this task has one, else when one is free.
    private static func inTurn<Value>(_ waits: Bool, _ body: () async throws -> Value) async throws -> Value {
        guard waits, !hasTurn else { return try await body() }
        await turns.take()
        do {
            let value = try await $hasTurn.withValue(true) { try await body() }
            await turns.give()
            return value
        } catch {
            await turns.give()
            throw error
        }
    }
}

/// A count of turns that tasks wait for, suspended, first come first served.
private actor Turns {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = max(count, 1) }

    func take() async {
        guard free == 0 else {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func give() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A running child process, inside the body of ``ChildProcess/run(_:_:environment:directory:input:while:)``.
public struct RunningProcess: Sendable {
    /// The child's process identifier (a `pid_t`).
    public let processIdentifier: Int32
    private let signal: @Sendable (Int32) throws -> Void

    fileprivate init<Input, Output, Error>(_ execution: Execution<Input, Output, Error>) {
        processIdentifier = execution.processIdentifier.value
        signal = { number in try execution.send(signal: Signal(rawValue: number)) }
    }

    /// Sends the child `signal` (`SIGINT`, `SIGKILL`, …). The corresponding call is `pidfd_send_signal`
    /// (`kill` where the kernel has no pidfd), so the signal cannot reach another process that
    /// took a reused identifier.
    public func send(_ signal: Int32) throws {
        try self.signal(signal)
    }
}

/// How a child process ended and what it printed.
public struct ProcessOutcome: Sendable {
    /// How it ended.
    public let termination: Termination
    /// Its standard output, byte for byte.
    public let standardOutput: [UInt8]
    /// Its standard error, byte for byte.
    public let standardError: [UInt8]
    /// From its start to its end and the end of its output: a test that times a child reads this,
    /// which leaves out the wait for its turn.
    public let duration: Duration

    /// The exit status, or 128 + the signal's number when a signal ended it (``Termination/status``).
    public var status: Int32 { termination.status }

    /// Standard output as UTF-8 text.
    public var standardOutputText: String { String(decoding: standardOutput, as: UTF8.self) }
    /// Standard error as UTF-8 text.
    public var standardErrorText: String { String(decoding: standardError, as: UTF8.self) }

    fileprivate init<Result>(_ run: borrowing ExecutionResult<Result, BytesOutput, BytesOutput>, duration: Duration) {
        switch run.terminationStatus {
        case .exited(let status): termination = .exited(status)
        case .signaled(let signal): termination = .signalled(signal)
        }
        standardOutput = run.standardOutput
        standardError = run.standardError
        self.duration = duration
    }
}

/// How a child process ended: with an exit status, or killed by a signal.
public enum Termination: Sendable, Hashable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The exit status, or 128 + the signal's number when a signal ended it, as a shell reports
    /// it. A test that sends a signal compares the termination itself, which tells the two apart.
    public var status: Int32 {
        switch self {
        case .exited(let status): status
        case .signalled(let signal): 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signalled(let signal): "killed by signal \(signal)"
        }
    }
}
