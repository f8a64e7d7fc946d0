import Foundation
import SessionAudio

/// A progress bar on standard error, drawn only on a terminal and only once work lasts long
/// enough to be worth watching; cleared when the work is done (an update reaching the total, or
/// ``finish()``), so the summary line after it stands alone. Safe to update from any thread.
///
/// Off a terminal (CI, `kubectl logs`, a log file) a bar would be noise, and nothing would read as
/// a hang: there a plain line, `progress: 12/126 clips to make, 0.3 clips/s, ETA 8:10`, is
/// written every ``plainInterval`` while the work lasts, whether or not it moved (a clip that
/// takes a minute to make must not leave the log silent for a minute), and none once it is done.
/// With `--log-format json` that line is a `progress` record, its counts as fields.
final class ProgressLine: @unchecked Sendable {
    // @unchecked: `state` is read and written only while holding `lock`; the rest is immutable.
    private struct State {
        var total: Int64 = 0
        var done: Int64 = 0
        var lastDrawn: ContinuousClock.Instant?
        var drawn = false
        /// When the work this line counts began: its first update, not the line's making. A batch
        /// makes its sessions' line before synthesis, and an ETA must count only the rate of the
        /// work it measures (minutes of synthesis would make rendering look slow).
        var started: ContinuousClock.Instant?
        /// Off a terminal, what writes a plain line every ``plainInterval``; `nil` before the
        /// first update and once the work is done.
        var timer: (any DispatchSourceTimer)?
        var finished = false
    }

    /// Whether standard error is a terminal, where progress may be drawn.
    static var standardErrorIsTerminal: Bool { FileDescriptor.standardError.isTerminal }

    /// Whether progress is drawn as a bar: on a terminal, unless the log is JSON.
    static var drawsOnTerminal: Bool { standardErrorIsTerminal && !Console.logsJSON }

    /// How often a plain progress line is written off a terminal: 10 s, or
    /// `$RENDER_SESSION_PROGRESS_SECONDS` (0.1 to 3,600; the tests use less).
    static let plainInterval: Duration = {
        let given = ProcessInfo.processInfo.environment["RENDER_SESSION_PROGRESS_SECONDS"].flatMap(Double.init)
        guard let given, given.isFinite, (0.1...3_600).contains(given) else { return .seconds(10) }
        return .milliseconds(Int64((given * 1_000).rounded()))
    }()

    private let onTerminal = ProgressLine.drawsOnTerminal
    private let enabled = Console.level.withLock { $0 } != .quiet
    private let lock = NSLock()
    private var state = State()
    private let describe: @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String
    /// What is counted (`clips`, `sessions`, `milliseconds`): a JSON record's `unit`.
    private let unit: String

    init(
        counting unit: String,
        describe: @escaping @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String
    ) {
        self.unit = unit
        self.describe = describe
    }

    deinit {
        state.timer?.cancel()
    }

    func update(_ done: Int64, total newTotal: Int64? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        lock.lock()
        defer { lock.unlock() }
        guard !state.finished else { return }
        if state.started == nil { state.started = now }
        let elapsed = now - (state.started ?? now)
        if let newTotal { state.total = newTotal }
        state.done = done
        guard onTerminal else {
            if done >= state.total && state.total > 0 {
                stopPlainLines()
            } else if state.timer == nil, state.total > 0 {
                startPlainLines()
            }
            return
        }
        if done >= state.total && state.total > 0 {
            if state.drawn { Console.writeStandardError("\r\u{1B}[K") }
            state.drawn = false
            return
        }
        guard elapsed > .milliseconds(300), state.total > 0 else { return }
        if let last = state.lastDrawn, now - last < .milliseconds(100), done < state.total { return }
        state.lastDrawn = now
        state.drawn = true
        let fraction = min(1, Double(done) / Double(state.total))
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        Console.writeStandardError(
            "\r\(bar) \(Int(fraction * 100))% \(describe(done, state.total, elapsed.seconds))\u{1B}[K"
        )
    }

    func finish() {
        lock.lock()
        defer { lock.unlock() }
        state.finished = true
        stopPlainLines()
        if state.drawn { Console.writeStandardError("\r\u{1B}[K") }
        state.drawn = false
    }

    /// Starts writing a plain line every ``plainInterval``. Called holding `lock`.
    private func startPlainLines() {
        let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
        let interval = Self.plainInterval
        let nanoseconds =
            Int(interval.components.seconds) * 1_000_000_000
            + Int(interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [weak self] in self?.writePlainLine() }
        state.timer = timer
        timer.resume()
    }

    /// Stops the plain lines. Called holding `lock`.
    private func stopPlainLines() {
        state.timer?.cancel()
        state.timer = nil
    }

    /// Writes where the work is, as one line.
    private func writePlainLine() {
        lock.lock()
        defer { lock.unlock() }
        guard state.timer != nil, let started = state.started, state.total > 0 else { return }
        let elapsed = ContinuousClock.now - started
        let line = describe(state.done, state.total, elapsed.seconds)
        guard !Console.logsJSON else {
            struct Progress: Encodable, Sendable {
                var unit: String
                var done: Int64
                var total: Int64
                var elapsedSeconds: Double
            }
            let fields = Progress(
                unit: unit,
                done: state.done,
                total: state.total,
                elapsedSeconds: elapsed.roundedSeconds
            )
            Console.writeRecord(LogRecord(level: .info, event: "progress", message: line, fields: fields))
            return
        }
        Console.writeStandardError("progress: \(line)\n")
    }
}
