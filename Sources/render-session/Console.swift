import Foundation
import SessionKit

/// Where the command's words go: data on standard output, everything else on standard error.
enum Console {
    static func error(_ line: String) {
        writeStandardError("error: \(line)\n")
    }

    @Sendable static func warning(_ line: String) {
        writeStandardError("warning: \(line)\n")
    }

    static func status(_ line: String) {
        writeStandardError("\(line)\n")
    }

    /// Writes to standard error; a closed pipe (`render-session … 2>&1 | head`) is not an error.
    static func writeStandardError(_ text: String) {
        try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
    }

    /// Writes to standard output; a reader that stopped early ends the command quietly.
    static func writeStandardOutput(_ data: Data) {
        do {
            try FileHandle.standardOutput.write(contentsOf: data)
        } catch {
            exit(0)
        }
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
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// A progress bar on standard error, drawn only on a terminal and only once work lasts long
/// enough to be worth watching; cleared when the work is done. Safe to update from any thread.
final class ProgressLine: Sendable {
    private struct State {
        var total: Int64
        var lastDrawn: ContinuousClock.Instant?
        var drawn = false
    }

    private let enabled = Terminal.standardErrorIsTerminal
    private let started = ContinuousClock.now
    private let state: Locked<State>
    private let describe: @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String

    init(total: Int64, describe: @escaping @Sendable (_ done: Int64, _ total: Int64, _ elapsedSeconds: Double) -> String) {
        state = Locked(State(total: total))
        self.describe = describe
    }

    func update(_ done: Int64, total newTotal: Int64? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let elapsed = now - started
        state.withLock { state in
            if let newTotal { state.total = newTotal }
            guard elapsed > .milliseconds(300), state.total > 0 else { return }
            if let last = state.lastDrawn, now - last < .milliseconds(100), done < state.total { return }
            state.lastDrawn = now
            state.drawn = true
            let fraction = min(1, Double(done) / Double(state.total))
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let text = describe(done, state.total, elapsed.seconds)
            Console.writeStandardError("\r\(bar) \(Int(fraction * 100))% \(text)\u{1B}[K")
        }
    }

    func finish() {
        state.withLock { state in
            if state.drawn { Console.writeStandardError("\r\u{1B}[K") }
            state.drawn = false
        }
    }
}
