import Foundation
import SessionAudio

/// A progress bar on standard error, drawn only on a terminal and only once work lasts long
/// enough to be worth watching; cleared when the work is done (an update reaching the total, or
/// ``finish()``), so the summary line after it stands alone. Safe to update from any thread.
final class ProgressLine: @unchecked Sendable {
    // @unchecked: `state` is read and written only while holding `lock`; the rest is immutable.
    private struct State {
        var total: Int64 = 0
        var lastDrawn: ContinuousClock.Instant?
        var drawn = false
        /// When the work this line counts began: its first update, not the line's making. A batch
        /// makes its sessions' line before synthesis, and an ETA must count only the rate of the
        /// work it measures (minutes of synthesis would make rendering look slow).
        var started: ContinuousClock.Instant?
    }

    /// Whether standard error is a terminal, where progress may be drawn.
    static var standardErrorIsTerminal: Bool { FileDescriptor.standardError.isTerminal }

    private let enabled = ProgressLine.standardErrorIsTerminal && Console.level.withLock { $0 } != .quiet
    private let lock = NSLock()
    private var state = State()
    private let describe: @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String

    init(describe: @escaping @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String) {
        self.describe = describe
    }

    func update(_ done: Int64, total newTotal: Int64? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        lock.lock()
        defer { lock.unlock() }
        if state.started == nil { state.started = now }
        let elapsed = now - (state.started ?? now)
        if let newTotal { state.total = newTotal }
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
        if state.drawn { Console.writeStandardError("\r\u{1B}[K") }
        state.drawn = false
    }
}
