internal import SessionAudio

/// A deadline for a child process, and the watchdog that kills it once it is past it: a worker
/// that hangs (a model that never loads, an engine stuck on a clip) ends, and whoever waited on
/// it is told why rather than waiting forever.
///
/// Run ``watch()`` in a task beside the process, and cancel it when the process is done.
final class ProcessDeadline: Sendable {
    private let deadline = Locked<(process: Int32, at: ContinuousClock.Instant)?>(nil)

    /// Kills `process` if it still runs `duration` from now, in place of any deadline before.
    func set(_ process: Int32, within duration: Duration) {
        deadline.withLock { $0 = (process, .now + duration) }
    }

    /// Takes the deadline away: the process may take as long as it likes.
    func clear() {
        deadline.withLock { $0 = nil }
    }

    /// Whether the process is past its deadline (and so was, or is about to be, killed for it).
    var hasPassed: Bool {
        deadline.withLock { $0 }.map { ContinuousClock.now > $0.at } ?? false
    }

    /// Looks every 100 ms, until cancelled, and kills the process once it is past its deadline.
    func watch() async throws {
        while true {
            try await Task.sleep(for: .milliseconds(100))
            if let (process, at) = deadline.withLock({ $0 }), ContinuousClock.now > at {
                ProcessControl.send(.kill, to: process)
            }
        }
    }
}
