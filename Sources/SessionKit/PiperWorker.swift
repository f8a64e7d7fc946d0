import Foundation
internal import SessionAudio
internal import SessionTimeline
import Subprocess
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// One Piper process with its model loaded, speaking one request at a time.
///
/// The process lives inside a task of its own (swift-subprocess's `run` keeps a process for the
/// length of one closure): requests come in through a mailbox, answers go back through each
/// request's continuation. When the process dies (killed, out of memory, a crash in onnxruntime),
/// the task starts another and gives it the request the dead one held, up to
/// ``attemptsPerRequest`` times, so a batch goes on; what the dead process had written is
/// dropped, never stored. Dropping the worker closes the mailbox, the process reads the end of
/// its input and exits; cancelling the task ends it the way swift-subprocess's teardown does.
final class PiperWorker: Sendable {
    /// How often one request is given to a process before it fails with the last process's fate.
    static let attemptsPerRequest = 3
    /// How often in a row a process may fail to start before requests fail without trying.
    static let startsInARow = 3

    /// What a worker answers: the audio at the model's rate, or why not.
    typealias Answer = Result<PiperAudio, SessionError>

    private struct Job: Sendable {
        let request: PiperBridge.Request
        let reply: CheckedContinuation<Answer, Never>
        /// Set when the task that asked is cancelled: the job is answered `cancelled`, never retried.
        let cancelled: Locked<Bool>
        var attempts = 0

        var isCancelled: Bool { cancelled.withLock { $0 } }
    }

    private let mailbox: AsyncStream<Job>.Continuation
    private let task: Task<Void, Never>
    /// Set when the worker is dropped: a process that dies then is not started again.
    private let stopped = Locked(false)
    /// The process ids of the worker's current process, for tests that kill one.
    let processIdentifiers: Locked<[Int32]>

    /// Starts a worker for `model` on `python`, running `threads` onnxruntime threads.
    /// - Parameter started: told once, when the first process has loaded the model or failed to.
    init(
        python: String,
        model: PiperModel,
        threads: Int,
        started: @escaping @Sendable (Result<SampleRate, SessionError>) -> Void
    ) {
        let (jobs, mailbox) = AsyncStream.makeStream(of: Job.self)
        let identifiers = Locked<[Int32]>([])
        let stopped = stopped
        self.mailbox = mailbox
        self.processIdentifiers = identifiers
        self.task = Task {
            await Self.serve(
                jobs,
                python: python,
                model: model,
                threads: threads,
                identifiers: identifiers,
                stopped: stopped,
                started: started
            )
        }
    }

    deinit {
        stopped.withLock { $0 = true }
        mailbox.finish()
    }

    /// Speaks `request`, waiting for the worker's process to be free.
    ///
    /// Cancelling the calling task ends the process speaking it (a long clip takes seconds, and
    /// nobody waits for it any more): Ctrl-C stops a batch at once. The worker then starts anew.
    func speak(_ request: PiperBridge.Request) async -> Answer {
        let cancelled = Locked(false)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { reply in
                if case .terminated = mailbox.yield(Job(request: request, reply: reply, cancelled: cancelled)) {
                    reply.resume(returning: .failure(SessionError(.providerFailed, "the Piper worker has stopped")))
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            for pid in processIdentifiers.withLock({ $0 }) { kill(pid, SIGTERM) }
        }
    }

    /// Runs processes one after another until the mailbox closes.
    private static func serve(
        _ jobs: AsyncStream<Job>,
        python: String,
        model: PiperModel,
        threads: Int,
        identifiers: Locked<[Int32]>,
        stopped: Locked<Bool>,
        started: @escaping @Sendable (Result<SampleRate, SessionError>) -> Void
    ) async {
        var pending = jobs.makeAsyncIterator()
        var held: Job?
        var reportedStart = false
        var failedStarts = 0
        var launched = false
        /// Answers the held job `cancelled` if its asker has gone, and says whether it did.
        func droppedCancelled() -> Bool {
            guard let job = held, job.isCancelled else { return false }
            job.reply.resume(returning: .failure(.cancelled))
            held = nil
            return true
        }
        while !Task.isCancelled {
            // The first process starts at once, to load the model while the clips are lined up; a
            // later one only when there is a clip for it, so a worker whose process ended idle (or
            // was ended by a cancellation) costs nothing until it is wanted.
            if launched && held == nil {
                guard let next = await pending.next(isolation: #isolation) else { return }
                held = next
            }
            if droppedCancelled() { continue }
            launched = true
            var mailboxClosed = false
            var loaded = false
            let outcome: Result<TerminationStatus, any Error>
            do {
                let result = try await run(
                    .path(FilePath(python)),
                    arguments: Arguments(PiperBridge.arguments(model: model, threads: threads)),
                    input: .inputWriter,
                    output: .sequence,
                    error: .discarded
                ) { execution in
                    identifiers.withLock { $0 = [execution.processIdentifier.value] }
                    var reader = BridgeReader(execution.standardOutput.makeAsyncIterator())
                    let greeting = try await reader.header()
                    guard greeting.ready == true, let hertz = greeting.sampleRate, let rate = SampleRate(hertz) else {
                        throw WorkerFailure.said(greeting.error ?? "the Piper worker did not say it was ready")
                    }
                    loaded = true
                    failedStarts = 0
                    if !reportedStart {
                        reportedStart = true
                        started(.success(rate))
                    }
                    while true {
                        if held == nil {
                            guard let next = await pending.next(isolation: #isolation) else {
                                mailboxClosed = true
                                break
                            }
                            held = next
                        }
                        if droppedCancelled() { continue }
                        guard var job = held else { break }
                        job.attempts += 1
                        held = job
                        try await execution.standardInputWriter.write(Array(job.request.line))
                        let header = try await reader.header()
                        if let frames = header.frames {
                            guard frames >= 0 else {
                                throw WorkerFailure.said("the Piper worker announced \(frames) frames")
                            }
                            let samples = try await reader.bytes(count: frames * 2)
                            job.reply.resume(
                                returning: .success(PiperAudio(littleEndianSamples: samples, sampleRate: rate))
                            )
                        } else {
                            let reason = header.error ?? "the Piper worker answered neither audio nor an error"
                            job.reply.resume(returning: .failure(SessionError(.providerFailed, reason)))
                        }
                        held = nil
                    }
                    try await execution.standardInputWriter.finish()
                }
                outcome = .success(result.terminationStatus)
            } catch {
                outcome = .failure(error)
            }
            identifiers.withLock { $0 = [] }
            if mailboxClosed { return }
            let reason = Self.describe(outcome)
            if !loaded {
                failedStarts += 1
                if !reportedStart {
                    reportedStart = true
                    started(.failure(SessionError(.voiceUnavailable, reason)))
                }
            }
            // The request the dead process held goes to the next one, unless it has had its tries
            // or its asker has gone.
            _ = droppedCancelled()
            if let job = held, job.attempts >= attemptsPerRequest || failedStarts >= startsInARow {
                let phrase =
                    failedStarts >= startsInARow
                    ? reason : "the Piper worker died \(job.attempts) times speaking it (\(reason))"
                job.reply.resume(returning: .failure(SessionError(.providerFailed, phrase)))
                held = nil
            }
            if failedStarts >= startsInARow || (held == nil && stopped.withLock({ $0 })) {
                // The engine will not start, or nobody will ask again: answer what is left with why.
                while let job = await pending.next() {
                    job.reply.resume(returning: .failure(SessionError(.providerFailed, reason)))
                }
                return
            }
        }
        held?.reply.resume(returning: .failure(.cancelled))
        while let job = await pending.next() { job.reply.resume(returning: .failure(.cancelled)) }
    }

    /// Why a process ended, as a phrase.
    private static func describe(_ outcome: Result<TerminationStatus, any Error>) -> String {
        switch outcome {
        case .success(.exited(let code)): "the Piper worker exited with status \(code)"
        case .success(.signaled(let signal)): "the Piper worker was killed by signal \(signal)"
        case .failure(WorkerFailure.said(let reason)): reason
        case .failure(WorkerFailure.ended): "the Piper worker ended its output early"
        case .failure(let error): "the Piper worker could not run: \(error)"
        }
    }
}

/// How a worker's process failed, inside its closure.
private enum WorkerFailure: Error {
    /// It said why it cannot go on (no Piper package, a model that does not load), or broke its protocol.
    case said(String)
    /// Its output ended in the middle of an answer, or before one.
    case ended
}

/// Reads the bridge's answers from a process's standard output: lines of JSON, and runs of bytes.
private struct BridgeReader {
    private var chunks: SubprocessOutputSequence.Iterator
    private var buffer = Data()

    init(_ chunks: SubprocessOutputSequence.Iterator) {
        self.chunks = chunks
    }

    /// The next line, decoded.
    mutating func header() async throws -> PiperBridge.Header {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = buffer[buffer.startIndex..<newline]
                buffer = Data(buffer[(newline + 1)...])
                guard let header = try? JSONDecoder().decode(PiperBridge.Header.self, from: line) else {
                    throw WorkerFailure.said(
                        "the Piper worker wrote something that is not its protocol: \(String(decoding: line.prefix(200), as: UTF8.self))"
                    )
                }
                return header
            }
            try await fill()
        }
    }

    /// The next `count` bytes.
    mutating func bytes(count: Int) async throws -> Data {
        while buffer.count < count { try await fill() }
        let taken = Data(buffer.prefix(count))
        buffer = Data(buffer.dropFirst(count))
        return taken
    }

    private mutating func fill() async throws {
        guard let chunk = try await chunks.next() else { throw WorkerFailure.ended }
        buffer.append(Data(buffer: chunk))
    }
}
