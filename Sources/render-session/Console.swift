import Foundation
import SessionKit

/// Where the command's words go: data on standard output, everything else on standard error.
enum Console {
    static func error(_ line: String) {
        writeStandardError("error: \(line)\n")
    }

    static func status(_ line: String) {
        writeStandardError("\(line)\n")
    }

    static func writeStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }

    static func writeStandardOutput(_ data: Data) {
        FileHandle.standardOutput.write(data)
    }

    /// `9:58.4` or `1:02:03.0`.
    static func duration(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        let (hours, minutes, rest) = (tenths / 36_000, tenths / 600 % 60, tenths % 600)
        let secondsText = String(format: "%04.1f", Double(rest) / 10)
        return hours > 0 ? String(format: "%d:%02d:", hours, minutes) + secondsText : "\(minutes):" + secondsText
    }

    static func seconds(_ duration: Duration) -> String {
        let (whole, attoseconds) = duration.components
        return String(format: "%.2f s", Double(whole) + Double(attoseconds) / 1e18)
    }
}

/// A progress bar on standard error, drawn only on a terminal and only once work lasts long
/// enough to be worth watching; cleared when the work is done.
final class ProgressLine {
    private let total: Int64
    private let sampleRate: Int
    private let enabled = Terminal.standardErrorIsTerminal
    private let clock = ContinuousClock()
    private let started: ContinuousClock.Instant
    private var lastDrawn: ContinuousClock.Instant?
    private var drawn = false

    init(total: Int64, sampleRate: Int) {
        self.total = max(total, 1)
        self.sampleRate = sampleRate
        started = clock.now
    }

    func update(_ done: Int64) {
        guard enabled else { return }
        let now = clock.now
        guard now - started > .milliseconds(300) else { return }
        if let lastDrawn, now - lastDrawn < .milliseconds(100) { return }
        lastDrawn = now
        drawn = true
        let fraction = Double(done) / Double(total)
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let position = Console.duration(Double(done) / Double(sampleRate))
        let length = Console.duration(Double(total) / Double(sampleRate))
        Console.writeStandardError("\r\(bar) \(Int(fraction * 100))% \(position) of \(length)\u{1B}[K")
    }

    func finish() {
        if drawn { Console.writeStandardError("\r\u{1B}[K") }
    }
}
