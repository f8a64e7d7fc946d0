import ArgumentParser
import Foundation
import SessionAudio
import SessionKit
import SessionTimeline

/// Where the command's words go: data on standard output, everything else on standard error.
///
/// Every line passes through ``printable(_:limit:)``: a message may quote a script's text, a file
/// name or a server's words, and none of them may reach the terminal as a control sequence or
/// break the one-line-per-problem rule with a newline.
enum Console {
    /// The longest line printed: a server that answers 5 MB of error text still gives one line.
    static let maximumLineLength = 2_000

    /// How much is said besides errors: `-q` (nothing), the default (warnings, progress and a
    /// summary), `-v` (each stage too, with its time).
    enum Level: Sendable {
        case quiet, normal, verbose
    }

    /// The level the command was given; set once, before it runs.
    static let level = Locked(Level.normal)

    /// How standard error is written: lines for a person (`text`), or one JSON object per line
    /// for a log collector (`json`, ``LogRecord``).
    enum LogFormat: String, Sendable, CaseIterable {
        case text, json
    }

    /// The format the command line or `$RENDER_SESSION_LOG_FORMAT` asks for; set once, before the
    /// command is parsed, so that even a usage error is written in it.
    static let logFormat = Locked(LogFormat.text)

    /// Whether standard error carries JSON records.
    static var logsJSON: Bool { logFormat.withLock { $0 } == .json }

    /// Whether the command line asks for `--json`: then a run that fails without printing its
    /// JSON prints ``failureJSON(exitStatus:extra:)`` instead, so that `… --json | jq` always
    /// reads an object. Set once, before the command is parsed.
    static let wantsJSON = Locked(false)
    /// Whether JSON was printed on standard output.
    private static let printedJSON = Locked(false)
    /// Every error line printed, in order: what the failure's JSON lists.
    /// Kept up to ``maximumKeptErrors``, then only counted: a batch of 100,000 failing sessions
    /// must not hold every line until the end.
    private static let errorLines = Locked((kept: [String](), dropped: 0))
    /// How many error lines the failure's JSON lists before it says how many more there were.
    static let maximumKeptErrors = 1_000

    static func error(_ line: String) {
        let line = printable(line, limit: maximumLineLength)
        errorLines.withLock {
            if $0.kept.count < maximumKeptErrors { $0.kept.append(line) } else { $0.dropped += 1 }
        }
        emit(line, after: "error: ", level: .error, event: "error")
    }

    /// Marks that JSON was printed on standard output (``printJSON(_:)`` does).
    static func notePrintedJSON() {
        printedJSON.withLock { $0 = true }
    }

    /// Under `--json`, when the command ends with `exitStatus` (not 0) and printed no JSON:
    /// `{"errors": [...], "exitStatus": N}` on standard output, one line, keys sorted, with every
    /// error line printed and `extra` (a usage error's message), each without its `error: `.
    static func failureJSON(exitStatus: Int32, extra: [String] = []) {
        guard wantsJSON.withLock({ $0 }), exitStatus != 0, !printedJSON.withLock({ $0 }) else { return }
        struct Failure: Encodable {
            var errors: [String]
            var exitStatus: Int32
        }
        let (kept, dropped) = errorLines.withLock { $0 }
        let more = dropped > 0 ? ["… and \(dropped) more error lines (standard error has them all)"] : []
        let errors = kept + more + extra.map { $0.hasPrefix("error: ") ? String($0.dropFirst(7)) : $0 }
        printJSON(Failure(errors: errors, exitStatus: exitStatus))
    }

    @Sendable static func warning(_ line: String) {
        warning(line, event: "warning")
    }

    /// A warning, which a JSON log names `event` with `fields` beside its message.
    static func warning(_ line: String, event: String, fields: (any Encodable & Sendable)? = nil) {
        guard level.withLock({ $0 }) != .quiet else { return }
        let line = printable(line, limit: maximumLineLength)
        emit(line, after: "warning: ", level: .warning, event: event, fields: fields)
    }

    /// A line of what is happening, which a JSON log names `event` with `fields` beside it.
    static func status(_ line: String, event: String = "status", fields: (any Encodable & Sendable)? = nil) {
        guard level.withLock({ $0 }) != .quiet else { return }
        let line = printable(line, limit: maximumLineLength)
        emit(line, after: "", level: .info, event: event, fields: fields)
    }

    /// A command's summary, its lines as they are printed; in a JSON log one `summary` record,
    /// its lines joined by `; ` and `fields` (what `--json` prints) beside them.
    static func summary(_ lines: [String], fields: any Encodable & Sendable) {
        guard logsJSON else {
            for line in lines { status(line) }
            return
        }
        let message = lines.map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "; ")
        status(message, event: "summary", fields: fields)
    }

    /// An event only a JSON log records (a clip made, the command's start): a person's log has
    /// the progress line and the summary for it.
    static func record(
        _ line: String,
        event: String,
        level recordLevel: LogRecord.Level = .info,
        fields: (any Encodable & Sendable)? = nil
    ) {
        guard logsJSON, level.withLock({ $0 }) != .quiet else { return }
        let line = printable(line, limit: maximumLineLength)
        writeRecord(LogRecord(level: recordLevel, event: event, message: line, fields: fields))
    }

    /// A request tried again, as it happens: a warning, a `retry` record in a JSON log.
    @Sendable static func retried(_ notice: RetryNotice) {
        struct Retry: Encodable, Sendable {
            var attempt: Int
            var attempts: Int
            var delaySeconds: Double
        }
        warning(
            notice.description,
            event: "retry",
            fields: Retry(
                attempt: notice.nextAttempt,
                attempts: notice.maximumAttempts,
                delaySeconds: notice.delaySeconds
            )
        )
    }

    /// A clip synthesized, or not: a `clipMade` or `clipFailed` record in a JSON log (a person's
    /// log counts them on the progress line, and lists the failures once at the end).
    @Sendable static func madeClip(_ clip: MadeClip) {
        struct Clip: Encodable, Sendable {
            var key: String
            var text: String
            var seconds: Double
        }
        let fields = Clip(key: clip.key, text: clip.text, seconds: clip.elapsed.roundedSeconds)
        let quoted = "\"\(printable(clip.text, limit: 60))\""
        if let failure = clip.failure {
            record(
                "clip \(clip.key) (\(quoted)) failed: \(failure)",
                event: "clipFailed",
                level: .warning,
                fields: fields
            )
        } else {
            record("made clip \(clip.key) (\(quoted)) in \(seconds(clip.elapsed))", event: "clipMade", fields: fields)
        }
    }

    /// The command has been parsed and starts: a JSON log's first record, naming the command,
    /// the tool's version and the process.
    static func started(_ command: String) {
        struct Start: Encodable, Sendable {
            var command: String
            var version: String
            var pid: Int32
        }
        let version = SessionKitVersion.current
        record(
            "render-session \(version) \(command) started",
            event: "start",
            fields: Start(command: command, version: version, pid: ProcessInfo.processInfo.processIdentifier)
        )
    }

    /// A stage that ended, with its time, under `-v`: `stage prepare: 0.02 s`.
    @Sendable static func stage(_ name: String, _ elapsed: Duration) {
        stage(name, of: nil, elapsed)
    }

    /// A stage of one session of a batch that ended, with its time, under `-v`:
    /// `stage render (reactivity-01): 1.20 s`.
    @Sendable static func stage(_ name: String, of session: String?, _ elapsed: Duration) {
        guard level.withLock({ $0 }) == .verbose else { return }
        struct Stage: Encodable, Sendable {
            var stage: String
            var session: String?
            var seconds: Double
        }
        let which = session.map { "\(name) (\($0))" } ?? name
        status(
            "stage \(which): \(seconds(elapsed))",
            event: "stage",
            fields: Stage(stage: name, session: session, seconds: elapsed.roundedSeconds)
        )
    }

    /// Writes `line` on standard error: after `prefix` as a person reads it, or as one JSON record
    /// of `level` and `event` with `fields` beside it when the log is JSON.
    private static func emit(
        _ line: String,
        after prefix: String,
        level recordLevel: LogRecord.Level,
        event: String,
        fields: (any Encodable & Sendable)? = nil
    ) {
        if logsJSON {
            writeRecord(LogRecord(level: recordLevel, event: event, message: line, fields: fields))
        } else {
            writeStandardError("\(lineStart)\(prefix)\(line)\n")
        }
    }

    /// Writes `record` as one line of JSON on standard error.
    static func writeRecord(_ record: LogRecord) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(record) else { return }
        writeStandardError(String(decoding: printableJSON(data), as: UTF8.self) + "\n")
    }

    /// What starts a message: on a terminal, a return and erase-line, so that a message (Ctrl-C's
    /// above all) never lands on a progress bar's line; nothing in a pipe or a file.
    private static let lineStart = ProgressLine.drawsOnTerminal ? "\r\u{1B}[K" : ""

    /// Writes to standard error; a closed pipe (`render-session … 2>&1 | head`) is not an error.
    static func writeStandardError(_ text: String) {
        try? FileDescriptor.standardError.write(Data(text.utf8))
    }

    /// Writes to standard output; a reader that stopped early ends the command quietly.
    static func writeStandardOutput(_ data: Data) {
        do {
            try FileDescriptor.standardOutput.write(data)
        } catch {
            ProcessControl.exit(status: 0)
        }
    }

    /// Refuses `-` for audio when standard output is a terminal, as zstd and gzip do: binary
    /// bytes on a screen are never what was meant, and can leave the terminal in a strange state.
    static func refuseTerminal(_ output: String, option: String = "-o") throws {
        guard output == "-", FileDescriptor.standardOutput.isTerminal else { return }
        throw ValidationError(
            "\(option) -: standard output is a terminal, not a place for audio; redirect it (> out.wav) or pipe it"
        )
    }

    /// Prints `paths` on standard output, one a line, unless standard output carries data.
    static func printWritten(_ destinations: [OutputDestination?]) {
        let written = destinations.compactMap { $0 }
        guard !written.contains(.standardOutput) else { return }
        printLines(written.compactMap { if case .path(let path) = $0 { path } else { nil } })
    }

    /// Writes `lines` to standard output, each through ``printable(_:limit:)`` (uncut): the one way
    /// a command's text data reaches the terminal, so that a name, a kind or a text from a file
    /// cannot carry a control sequence, a bidirectional override or a line break into it.
    static func printLines(_ lines: some Sequence<String>) {
        writeStandardOutput(Data(lines.map { printable($0, limit: .max) + "\n" }.joined().utf8))
    }

    /// Writes tab-separated `rows` to standard output, each field through ``printable(_:limit:)``,
    /// so that a tab or a line break inside a name cannot shift a column or start a row.
    static func printRows(_ rows: [[String]]) {
        let lines = rows.map { $0.map { printable($0, limit: .max) }.joined(separator: "\t") + "\n" }
        writeStandardOutput(Data(lines.joined().utf8))
    }

    /// Writes `text` (lines ended by line feeds) to standard output, each line as ``printLines(_:)`` does.
    static func printText(_ text: String) {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        printLines(lines)
    }

    /// JSON for standard output with every control character and hidden character that JSON
    /// lets through raw (DEL, the C1 controls, bidirectional controls, noncharacters: JSON
    /// escapes only C0) written as a `\uXXXX` escape instead: the same strings to a parser, nothing
    /// a terminal acts on. They can only be inside strings, where the escape means the same.
    static func printableJSON(_ data: Data) -> Data {
        let text = String(decoding: data, as: UTF8.self)
        guard text.unicodeScalars.contains(where: { $0.isControlCharacter || $0.isHiddenWhenPrinted }) else {
            return data
        }
        var escaped = ""
        for scalar in text.unicodeScalars {
            guard scalar.value >= 0x20, scalar.isControlCharacter || scalar.isHiddenWhenPrinted else {
                escaped.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 { escaped += String(format: "\\u%04x", unit) }
        }
        return Data(escaped.utf8)
    }

    /// `9:58.4` or `1:02:03.0`.
    static func duration(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        let (hours, minutes, rest) = (tenths / 36_000, tenths / 600 % 60, tenths % 600)
        let secondsText = String(format: "%04.1f", Double(rest) / 10)
        return hours > 0 ? String(format: "%d:%02d:", hours, minutes) + secondsText : "\(minutes):" + secondsText
    }

    static func seconds(_ duration: Duration) -> String {
        String(format: "%.2f s", duration.seconds)
    }

    /// A pipeline observer for a person: warnings as lines, progress bars on a terminal, and a
    /// summary of the cache filling when it did anything.
    static var observer: PipelineObserver { observer(summarizingCache: true) }

    /// ``observer``, saying how the cache was filled only if `summarizingCache`.
    static func observer(summarizingCache: Bool) -> PipelineObserver {
        let clips = ProgressLine(counting: "clips") { done, total, elapsed in
            let rate = Double(done) / max(elapsed, 0.001)
            let eta = rate > 0 ? duration(Double(total - done) / rate) : "?"
            return "\(done)/\(total) clips to make, \(String(format: "%.1f", rate)) clips/s, ETA \(eta)"
        }
        let audio = ProgressLine(counting: "audioMilliseconds") { done, total, elapsed in
            // done and total are milliseconds of audio.
            let eta = done > 0 ? duration(elapsed / Double(done) * Double(total - done)) : "?"
            return "\(duration(Double(done) / 1_000)) of \(duration(Double(total) / 1_000)), ETA \(eta)"
        }
        var observer = PipelineObserver(
            warning: warning,
            finishedStage: stage,
            // Counted over the clips to make: those found in the cache take no time, and counting
            // them would make the rate, and so the ETA, a lie.
            preparing: {
                clips.update(Int64($0.done - $0.alreadyCached), total: Int64($0.needed - $0.alreadyCached))
            },
            prepared: { result in
                clips.finish()
                if summarizingCache && (result.synthesized > 0 || result.replaced > 0 || result.failed > 0) {
                    status("Filled the clip cache, \(result.summary)")
                }
            },
            rendering: { written, total, rate in
                audio.update(Int64(rate.seconds(of: written) * 1_000), total: Int64(rate.seconds(of: total) * 1_000))
            }
        )
        observer.settingName = { PipelineOptions.flag($0) }
        observer.madeClip = madeClip
        observer.finishedSessionStage = { session, stage, elapsed in Console.stage(stage, of: session, elapsed) }
        return observer
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
    /// ``seconds`` to the millisecond, as JSON and log lines give a time taken.
    var roundedSeconds: Double { (seconds * 1_000).rounded() / 1_000 }
}

/// Runs a command's work as a task that SIGINT and SIGTERM cancel, on a pool of its own for
/// everything that blocks (`threads` threads, at least one per core), and turns its outcome into
/// what a shell expects: a ``SessionError`` is printed as one `error:` line per problem and exits
/// with its kind's status (``SessionError/exitStatus``); a signal exits with 128 + its number
/// after the work has unwound. The pool is shut down before it returns: its threads end.
func runCommand(
    threads: Int? = nil,
    _ work: sending @escaping (BlockingPool) async throws -> Void
) async throws {
    let pool = BlockingPool(threadCount: max(BlockingPool.shared.threadCount, threads ?? 0))
    let outcome = await Interruption.cancellingOnSignals {
        // The whole command runs on the pool: nothing it does blocks one of Swift's shared threads.
        try await pool.run((any Error).self) { () async throws in try await work(pool) }
    }
    await pool.shutdownGracefully()
    if let signal = outcome.signal {
        Console.status(SessionError.cancelled.description)
        throw ExitCode(128 + signal)
    }
    do {
        try outcome.result.get()
    } catch let error as SessionError {
        for line in error.flagLines { Console.error(line) }
        throw error.exitStatus
    }
}

/// The exit statuses every command uses, one per kind of outcome (numbered as sysexits.h does),
/// listed in `--help` and docs/cli.md.
enum ExitStatus {
    /// What `--help` says about them.
    static let summary = """
        Exit statuses: 0 done; 1 the work failed (a clip could not be had, speech later than \
        --max-late, problems found by verify, some sessions of a batch failed); 64 a usage error \
        (an unknown option, a value out of range, an output whose extension names another \
        format); 65 an input is wrong or cannot be read (a script, timeline, audio file to \
        verify, sound library or header file; a voice or sound that names nothing); 74 an output \
        cannot be written; 130 or 143 interrupted by SIGINT or SIGTERM. Nothing half-written is \
        left in any case.
        """
}

extension SessionError {
    /// 65 when an input is wrong or cannot be read, 74 when an output cannot be written, else 1.
    var exitStatus: ExitCode {
        let input: [Code] = [
            .unreadableScript, .invalidScript, .noScripts, .missingSound, .invalidSoundLibrary, .unknownVoice,
            .unreadableAudio, .unreadableTimeline, .positionOutOfRange, .invalidSetting,
        ]
        if input.contains(code) { return ExitCode(65) }
        if code == .cannotWrite { return ExitCode(74) }
        if code == .recognizerUnavailable { return ExitCode(69) }
        return .failure
    }
}
