import Dispatch
import SessionAudio
import SessionKit
import Synchronization

/// SIGINT and SIGTERM cancel the running work instead of killing the process.
///
/// The work runs as a task; a signal cancels it, and cancellation unwinds it through its normal
/// error paths (long loops check `Task.isCancelled` between blocks and clips), which remove their
/// temporary files and keep finished cache entries. Should the work not have stopped three
/// seconds later, every temporary still registered is removed and the process exits at once.
enum Interruption {
    /// What became of work run by ``cancellingOnSignals(_:)``.
    struct Outcome {
        /// The work's result.
        let result: Result<Void, any Error>
        /// The signal that cancelled it, if one did.
        let signal: Int32?
    }

    static func cancellingOnSignals(_ work: sending @escaping () async throws -> Void) async -> Outcome {
        let received = Atomic<Int32>(0)
        let task = Task { try await work() }
        var sources: [any DispatchSourceSignal] = []
        for stop in [ProcessSignal.interrupt, .terminate] {
            stop.ignore()
            let source = DispatchSource.makeSignalSource(signal: stop.number, queue: .global())
            source.setEventHandler {
                received.store(stop.number, ordering: .relaxed)
                task.cancel()
                DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
                    AtomicFile.removeAllRegistered()
                    ProcessControl.exitImmediately(status: 128 + stop.number)
                }
            }
            source.resume()
            sources.append(source)
        }
        let result = await task.result
        for source in sources { source.cancel() }
        let signalNumber = received.load(ordering: .relaxed)
        return Outcome(result: result, signal: signalNumber == 0 ? nil : signalNumber)
    }
}
