import Foundation
internal import SessionAudio
package import SessionTimeline
import Subprocess
import SystemPackage

/// A word the recognizer heard, in frames of the span it was heard in, from the span's start.
package struct HeardWord: Sendable, Equatable {
    package var text: String
    package var startFrame: Frames
    package var endFrame: Frames

    package init(text: String, startFrame: Frames, endFrame: Frames) {
        self.text = text
        self.startFrame = startFrame
        self.endFrame = endFrame
    }
}

/// A span of an audio file to transcribe: `frameCount` frames from `startFrame`, at the file's `sampleRate`.
package struct RecognizerSpan: Sendable, Equatable {
    package var path: String
    package var startFrame: Frames
    package var frameCount: Frames
    package var sampleRate: SampleRate

    package init(path: String, startFrame: Frames = .zero, frameCount: Frames, sampleRate: SampleRate) {
        self.path = path
        self.startFrame = startFrame
        self.frameCount = frameCount
        self.sampleRate = sampleRate
    }
}

/// The speech check's recognizer: one faster-whisper process (``RecognizerBridge``) that loads
/// its model once and transcribes spans one after another.
///
/// The process runs isolated (`-I`, in `/`, with an environment of its own) and within deadlines:
/// two minutes to load its model, and for each span 30 s plus twice the span's length (tiny.en
/// hears a second of speech in 0.07 s on two cores; a model ten times slower still fits). A
/// process past its deadline is killed, and the spans it had not answered fail, saying so.
package struct SpeechRecognizer: Sendable {
    package let installation: RecognizerInstallation
    /// The model it hears with: the installation's ``RecognizerInstallation/model``, or its
    /// confirming model.
    package let model: String
    /// The threads CTranslate2 runs on.
    package let threads: Int

    package init(installation: RecognizerInstallation, model: String? = nil, threads: Int = 2) {
        self.installation = installation
        self.model = model ?? installation.model
        self.threads = max(1, threads)
    }

    static let loadingTime = Duration.seconds(120)

    /// The time one span may take: 30 s plus twice its length.
    static func time(for span: RecognizerSpan) -> Duration {
        .seconds(30) + .milliseconds(Int64(2_000 * span.sampleRate.seconds(of: span.frameCount)))
    }

    /// Each span's words, or why it has none, in the order given.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the recognizer is not installed,
    ///   does not load its model, or ends before answering any span; ``SessionError/cancelled``.
    package func transcribe(_ spans: [RecognizerSpan]) async throws(SessionError) -> [Result<[HeardWord], SessionError>]
    {
        try installation.check()
        guard !spans.isEmpty else { return [] }
        let deadline = ProcessDeadline()
        var answers: [Result<[HeardWord], SessionError>] = []
        var loaded = false
        let outcome: Result<TerminationStatus, any Error>
        do {
            outcome = .success(
                try await withThrowingTaskGroup { group in
                    group.addTask { try await deadline.watch() }
                    defer { group.cancelAll() }
                    return try await run(
                        .path(FilePath(installation.python)),
                        arguments: Arguments(RecognizerBridge.arguments(model: model, threads: threads)),
                        environment: .only(RecognizerBridge.environment),
                        workingDirectory: FilePath("/"),
                        input: .inputWriter,
                        output: .sequence,
                        error: .discarded
                    ) { execution in
                        let process = execution.processIdentifier.value
                        deadline.set(process, within: Self.loadingTime)
                        var reader = WorkerOutputReader(
                            execution.standardOutput.makeAsyncIterator(),
                            process: process,
                            worker: "the speech recognizer (process \(process))",
                            maximumLineBytes: RecognizerBridge.maximumLineBytes
                        )
                        let greeting = try await reader.line(as: RecognizerBridge.Answer.self)
                        guard greeting.ready == true else {
                            throw WorkerFailure.said(greeting.error ?? "the speech recognizer did not say it was ready")
                        }
                        loaded = true
                        for span in spans {
                            try Task.checkCancellation()
                            deadline.set(process, within: Self.time(for: span))
                            let heard = RecognizerBridge.sampleRate
                            let start = heard.frames(converting: span.startFrame, from: span.sampleRate)
                            let end = heard.frames(converting: span.startFrame + span.frameCount, from: span.sampleRate)
                            let request = RecognizerBridge.Request(path: span.path, start: start.count, end: end.count)
                            do {
                                _ = try await execution.standardInputWriter.write(Array(request.line))
                            } catch {
                                // Its input closed: it died, as when its output ends.
                                throw WorkerFailure.ended
                            }
                            let answer = try await reader.line(as: RecognizerBridge.Answer.self)
                            if let words = answer.words {
                                answers.append(.success(Self.words(words, in: span, heardAt: heard)))
                            } else {
                                let reason = answer.error ?? "the speech recognizer answered neither words nor an error"
                                answers.append(.failure(SessionError(.unreadableAudio, printable(reason))))
                            }
                        }
                        deadline.clear()
                        try await execution.standardInputWriter.finish()
                    }.terminationStatus
                }
            )
        } catch is CancellationError {
            throw .cancelled
        } catch {
            outcome = .failure(error)
        }
        if Task.isCancelled { throw .cancelled }
        guard answers.count < spans.count else { return answers }
        // The process ended before answering them all: why, for the rest.
        var reason = Self.describe(outcome)
        if deadline.hasPassed {
            reason =
                loaded
                ? "the speech recognizer took longer than \(Self.time(for: spans[answers.count])) on \(spans[answers.count].path) and was stopped"
                : "the speech recognizer did not load its model within \(Self.loadingTime) and was stopped"
        }
        let cause: (any Error)? = if case .failure(let error) = outcome { error } else { nil }
        guard loaded else { throw SessionError(.recognizerUnavailable, reason, underlyingError: cause) }
        while answers.count < spans.count {
            answers.append(.failure(SessionError(.recognizerUnavailable, reason, underlyingError: cause)))
        }
        return answers
    }

    /// The words of an answer in `span`'s frames, each within the span.
    static func words(
        _ lines: [RecognizerBridge.HeardWordLine],
        in span: RecognizerSpan,
        heardAt heard: SampleRate
    ) -> [HeardWord] {
        lines.map { line in
            let clamp = { (frames: Int64) in
                min(span.frameCount, span.sampleRate.frames(converting: Frames(max(0, frames)), from: heard))
            }
            let start = clamp(line.start)
            return HeardWord(
                text: printable(line.text, limit: 100),
                startFrame: start,
                endFrame: max(start, clamp(line.end))
            )
        }
    }

    /// Why the process ended, as a phrase.
    private static func describe(_ outcome: Result<TerminationStatus, any Error>) -> String {
        switch outcome {
        case .success(.exited(let code)): "the speech recognizer exited with status \(code)"
        case .success(.signaled(let signal)): "the speech recognizer was killed by signal \(signal)"
        case .failure(WorkerFailure.said(let reason)): printable(reason)
        case .failure(WorkerFailure.brokenProtocol(let worker, let detail)): "\(worker) broke its protocol: \(detail)"
        case .failure(WorkerFailure.ended): "the speech recognizer ended before answering"
        case .failure(let error): "the speech recognizer could not run: \(error)"
        }
    }
}
