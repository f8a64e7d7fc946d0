import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Piper's workers for one model: processes started when clips are first needed, each loading
/// the model once and then speaking clip after clip.
///
/// How the cores are split: `n` clips at once get `n` workers of `cores / n` onnxruntime threads
/// each (at least one). Piper speaks one sentence at a time and a thread count beyond one speeds
/// a single request up by far less than it adds cores (measured in docs/performance.md), so a
/// batch runs one single-threaded worker per core, and a lone clip one worker with every core.
actor PiperWorkerPool {
    let installation: PiperInstallation
    let model: PiperModel
    private var workers: [PiperWorker] = []
    private var idle: [PiperWorker] = []
    private var waiting: [CheckedContinuation<PiperWorker, Never>] = []
    /// The first worker's start: every caller waits for the same one.
    private var firstStart: Task<Result<SampleRate, SessionError>, Never>?

    init(installation: PiperInstallation, model: PiperModel) {
        self.installation = installation
        self.model = model
    }

    /// The onnxruntime threads for each of `workers` workers on `cores` cores.
    static func threads(workers: Int, cores: Int = ProcessInfo.processInfo.activeProcessorCount) -> Int {
        max(1, cores / max(1, workers))
    }

    /// Makes sure `count` workers are running, and waits for the first of them to load the model.
    /// - Returns: the model's sample rate.
    /// - Throws: ``SessionError`` (`voiceUnavailable`) when the first worker cannot load the model.
    func start(count: Int) async throws(SessionError) -> SampleRate {
        let adding = max(0, count - workers.count)
        let threads = Self.threads(workers: count)
        let (started, reportStart) = AsyncStream.makeStream(of: Result<SampleRate, SessionError>.self)
        for _ in 0..<adding {
            let first = workers.isEmpty
            let worker = PiperWorker(
                python: installation.python,
                model: model,
                threads: threads,
                loadingTime: installation.loadingTime
            ) { outcome in
                guard first else { return }
                reportStart.yield(outcome)
                reportStart.finish()
            }
            workers.append(worker)
            release(worker)
        }
        if firstStart == nil {
            firstStart = Task {
                var outcomes = started.makeAsyncIterator()
                return await outcomes.next() ?? .failure(.cancelled)
            }
        }
        guard let firstStart else { preconditionFailure("the first start was just made") }
        switch await firstStart.value {
        case .success(let rate):
            return rate
        case .failure(let error):
            // Dropping the workers ends them; the next call tries anew.
            workers.removeAll()
            idle.removeAll()
            self.firstStart = nil
            throw SessionError(
                .voiceUnavailable,
                "Piper voice \(model.name) unavailable (\(error.lines[0]))",
                underlyingError: error
            )
        }
    }

    /// Speaks `request` on the first free worker; an answer of more than `maximumFrames` frames is refused.
    func speak(_ request: PiperBridge.Request, maximumFrames: Int) async -> PiperWorker.Answer {
        let worker = await acquire()
        defer { release(worker) }
        return await worker.speak(request, maximumFrames: maximumFrames)
    }

    /// The process ids of the workers' current processes (for tests that kill one).
    var processIdentifiers: [Int32] { workers.flatMap { $0.processIdentifiers.withLock { $0 } } }

    private func acquire() async -> PiperWorker {
        if let worker = idle.popLast() { return worker }
        return await withCheckedContinuation { waiting.append($0) }
    }

    private func release(_ worker: PiperWorker) {
        if waiting.isEmpty {
            idle.append(worker)
        } else {
            waiting.removeFirst().resume(returning: worker)
        }
    }
}
