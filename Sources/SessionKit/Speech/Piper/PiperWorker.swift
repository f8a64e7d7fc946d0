import Foundation
internal import SessionAudio
internal import SessionTimeline
import Subprocess
import SystemPackage

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
        /// The most frames an answer may announce (``ClipLengthLimit`` at the model's rate).
        let maximumFrames: Int
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

    /// Starts a worker for `model` on `python`, running `threads` onnxruntime threads; a process
    /// that has not said it is ready `loadingTime` after it started is killed.
    /// - Parameter started: told once, when the first process has loaded the model or failed to.
    init(
        python: String,
        model: PiperModel,
        threads: Int,
        loadingTime: Duration = PiperInstallation.defaultLoadingTime,
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
                loadingTime: loadingTime,
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
    /// An answer of more than `maximumFrames` frames is a broken protocol: the process is ended
    /// and the request fails, naming the worker, without being tried again.
    ///
    /// Cancelling the calling task ends the process speaking it (a long clip takes seconds, and
    /// nobody waits for it any more): Ctrl-C stops a batch at once. The worker then starts anew.
    func speak(_ request: PiperBridge.Request, maximumFrames: Int) async -> Answer {
        let cancelled = Locked(false)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { reply in
                let job = Job(request: request, maximumFrames: maximumFrames, reply: reply, cancelled: cancelled)
                if case .terminated = mailbox.yield(job) {
                    reply.resume(returning: .failure(SessionError(.providerFailed, "the Piper worker has stopped")))
                }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
            for pid in processIdentifiers.withLock({ $0 }) { ProcessControl.send(.terminate, to: pid) }
        }
    }

    /// Runs processes one after another until the mailbox closes.
    private static func serve(
        _ jobs: AsyncStream<Job>,
        python: String,
        model: PiperModel,
        threads: Int,
        loadingTime: Duration,
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
            var process: Int32 = 0
            let outcome: Result<TerminationStatus, any Error>
            let deadline = ProcessDeadline()
            do {
                let result = try await withThrowingTaskGroup { group in
                    group.addTask { try await deadline.watch() }
                    defer { group.cancelAll() }
                    return try await run(
                        .path(FilePath(python)),
                        arguments: Arguments(
                            PiperBridge.arguments(model: model, threads: threads, alignedCopy: model.alignedCopyPath())
                        ),
                        environment: .only(PiperBridge.environment),
                        workingDirectory: FilePath(PiperBridge.workingDirectory),
                        input: .inputWriter,
                        output: .sequence,
                        error: .discarded
                    ) { execution in
                        process = execution.processIdentifier.value
                        identifiers.withLock { $0 = [process] }
                        deadline.set(process, within: loadingTime)
                        var reader = WorkerOutputReader(
                            execution.standardOutput.makeAsyncIterator(),
                            process: process,
                            worker: "the Piper worker for \(model.name) (process \(process))",
                            maximumLineBytes: PiperBridge.maximumLineBytes
                        )
                        let greeting = try await reader.line(as: PiperBridge.Header.self)
                        guard greeting.ready == true, let hertz = greeting.sampleRate, let rate = SampleRate(hertz)
                        else {
                            throw WorkerFailure.said(greeting.error ?? "the Piper worker did not say it was ready")
                        }
                        deadline.clear()
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
                            _ = try await execution.standardInputWriter.write(Array(job.request.line))
                            let header = try await reader.line(as: PiperBridge.Header.self)
                            if let frames = header.frames {
                                let (byteCount, overflow) = frames.multipliedReportingOverflow(by: 2)
                                guard frames >= 0, frames <= job.maximumFrames, !overflow else {
                                    throw reader.broken(
                                        "it announced \(frames) frames, outside the 0…\(job.maximumFrames) a clip of this text may hold"
                                    )
                                }
                                let samples = try await reader.bytes(count: byteCount)
                                job.reply.resume(
                                    returning: .success(
                                        PiperAudio(
                                            littleEndianSamples: samples,
                                            sampleRate: rate,
                                            words: header.words,
                                            marksUnavailable: header.marksUnavailable
                                        )
                                    )
                                )
                            } else {
                                let reason = header.error ?? "the Piper worker answered neither audio nor an error"
                                job.reply.resume(returning: .failure(SessionError(.providerFailed, reason)))
                            }
                            held = nil
                        }
                        try await execution.standardInputWriter.finish()
                    }
                }
                outcome = .success(result.terminationStatus)
            } catch {
                outcome = .failure(error)
            }
            identifiers.withLock { $0 = [] }
            if mailboxClosed { return }
            let reason =
                deadline.hasPassed
                ? "the Piper worker did not load \(model.name) within \(loadingTime) and was stopped"
                : Self.describe(outcome)
            // What the process's closure threw, if it threw: every error made from it keeps it.
            let cause: (any Error)? = if case .failure(let error) = outcome { error } else { nil }
            // A broken protocol is the engine's fault, not the process's fate: trying again would
            // only repeat it (and load the model again), so the request it held fails at once.
            if case .failure(WorkerFailure.brokenProtocol) = outcome, loaded, let job = held {
                job.reply.resume(returning: .failure(SessionError(.providerFailed, reason, underlyingError: cause)))
                held = nil
            }
            if !loaded {
                failedStarts += 1
                if !reportedStart {
                    reportedStart = true
                    started(.failure(SessionError(.voiceUnavailable, reason, underlyingError: cause)))
                }
            }
            // The request the dead process held goes to the next one, unless it has had its tries
            // or its asker has gone.
            _ = droppedCancelled()
            if let job = held, job.attempts >= attemptsPerRequest || failedStarts >= startsInARow {
                let phrase =
                    failedStarts >= startsInARow
                    ? reason : "the Piper worker died \(job.attempts) times speaking it (\(reason))"
                job.reply.resume(returning: .failure(SessionError(.providerFailed, phrase, underlyingError: cause)))
                held = nil
            }
            if failedStarts >= startsInARow || (held == nil && stopped.withLock({ $0 })) {
                // The engine will not start, or nobody will ask again: answer what is left with why.
                while let job = await pending.next() {
                    job.reply.resume(returning: .failure(SessionError(.providerFailed, reason, underlyingError: cause)))
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
        case .failure(WorkerFailure.brokenProtocol(let worker, let detail)): "\(worker) broke its protocol: \(detail)"
        case .failure(WorkerFailure.ended): "the Piper worker ended its output early"
        case .failure(let error): "the Piper worker could not run: \(error)"
        }
    }
}

extension PiperInstallation {
    /// The version of the engine's `piper-tts` package (`1.2.0`), asked of its interpreter as a
    /// worker is started: isolated (`-I`), in `/`, with nothing of the user's environment; `nil`
    /// when the engine is not installed or does not answer within ``versionTime`` (an interpreter
    /// that hangs is killed, and the version is only missing from the report).
    package func engineVersion() async -> String? {
        guard engineInstalled else { return nil }
        let deadline = ProcessDeadline()
        let result = try? await withThrowingTaskGroup { group in
            group.addTask { try await deadline.watch() }
            defer { group.cancelAll() }
            return try await run(
                .path(FilePath(python)),
                arguments: ["-I", "-c", "import importlib.metadata as m; print(m.version('piper-tts'))"],
                environment: .only(PiperBridge.environment),
                workingDirectory: FilePath(PiperBridge.workingDirectory),
                input: .none,
                output: .sequence,
                error: .discarded
            ) { execution in
                deadline.set(execution.processIdentifier.value, within: Self.versionTime)
                var text: [UInt8] = []
                for try await chunk in execution.standardOutput where text.count < 200 {
                    var piece: [UInt8] = []
                    piece.append(contentsOf: chunk.bytes)
                    text += piece.prefix(200 - text.count)
                }
                return String(decoding: text, as: UTF8.self)
            }
        }
        guard let result, result.terminationStatus.isSuccess else { return nil }
        let version = result.closureResult.trimmingCharacters(in: .whitespacesAndNewlines)
        return version.isEmpty ? nil : printable(version, limit: 40)
    }

    /// How long the interpreter may take to say the engine's version: seconds, against about
    /// 0.1 s here.
    static let versionTime: Duration = .seconds(30)
}
