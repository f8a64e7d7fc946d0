import Foundation
internal import SessionAudio

/// A fixed number of threads for the work that blocks: every C call (decoding, resampling,
/// mixing, encoding, eSpeak NG), file and folder I/O, and waiting on locks and child processes.
///
/// Minutes of rendering must never sit on Swift concurrency's shared threads, of which there is
/// one per core: swift-nio's `NIOThreadPool` serves blocking work the same way, behind an
/// `async` front, from threads of its own. Its size is set when it is made (``threadCount``),
/// so a server decides how many renders run at once however many requests come; work beyond it
/// waits its turn.
///
/// It is a `TaskExecutor`: its `run` runs a body *in the calling task* on one of the
/// pool's threads, so cancelling the task reaches the body (`Task.isCancelled`), task-locals
/// hold, and child tasks the body starts (a batch's sessions, a prepare's clips) run on the pool
/// too, as many at once as it has threads. A command runs its whole work there
/// (`Task(executorPreference:)`), and nothing it does blocks a shared thread.
///
/// Its lifecycle is a start (on first use, or ``run()``), then ``shutdownGracefully()``: work already
/// running finishes, new work is refused with ``SessionError/Code/cancelled``, and the threads
/// end. ``run()`` does both for a service group (swift-service-lifecycle's `Service` shape).
public final class BlockingPool: TaskExecutor, Sendable {
    /// How many threads run work at once.
    public let threadCount: Int
    /// What the threads are named, for debuggers and tests: `session.pool 1`, `session.pool 2`, …
    package let threadName: String

    private enum Phase: Sendable {
        /// Made, no thread started yet.
        case idle
        /// Taking work; its threads are running.
        case running
        /// Refusing new work, finishing what it has.
        case draining
        /// Every thread has ended.
        case stopped
    }

    private struct State: Sendable {
        var phase = Phase.idle
        /// Jobs (parts of tasks) waiting for a thread.
        var jobs: [UnownedJob] = []
        /// ``run(_:)`` calls whose bodies have not returned: draining waits for them, since each
        /// may still have jobs to enqueue.
        var running = 0
        /// Threads that have not ended.
        var threads = 0
        /// The pool's threads, by identity.
        var identities: Set<ObjectIdentifier> = []
        /// Who waits for the pool to stop.
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
    }

    // An NSCondition guards `State`: the thread sanitizer understands its pthread mutex, and the
    // threads wait on it for work.
    private let condition = NSCondition()
    private nonisolated(unsafe) var state = State()

    /// The pool the library uses when a caller names none: one thread per core, at least two,
    /// started on first use and never shut down (a command makes and shuts down its own).
    public static let shared = BlockingPool(threadCount: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// The pool the running task's blocking work goes to: the one whose ``run(_:)`` it is in, so
    /// that a provider called from a pipeline synthesizes on the pipeline's pool; `nil` outside.
    @TaskLocal package static var current: BlockingPool?

    /// ``current``, or ``shared`` outside any pool's work.
    package static var currentOrShared: BlockingPool { current ?? shared }

    /// A pool of `threadCount` threads (at least 1), not yet started.
    public init(threadCount: Int, name: String = "session.pool") {
        self.threadCount = max(1, threadCount)
        self.threadName = name
    }

    /// Starts the threads, if they are not running yet. ``run(_:)`` starts them too.
    package func start() {
        let count: Int? = withState { state in
            guard state.phase == .idle else { return nil }
            state.phase = .running
            state.threads = threadCount
            return threadCount
        }
        guard let count else { return }
        for number in 1...count {
            let thread = Thread { [self] in work() }
            thread.name = "\(threadName) \(number)"
            thread.start()
        }
    }

    /// Runs `body` in the calling task on one of the pool's threads, and returns what it returns.
    ///
    /// - Throws: what `body` throws, or ``SessionError`` (`cancelled`) without running it when the
    ///   pool is shutting down or stopped, or the task is already cancelled.
    package func run<Result: Sendable>(
        _ body: () async throws(SessionError) -> Result
    ) async throws(SessionError) -> Result {
        try await run(SessionError.self, body)
    }

    /// ``run(_:)`` for a body that throws `Failure`: ``SessionError``, or any error (a command's
    /// work), which is what the refusal is thrown as.
    package func run<Result: Sendable, Failure: Error>(
        _ failure: Failure.Type,
        _ body: () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        start()
        let admitted: Bool = withState { state in
            guard state.phase == .running else { return false }
            state.running += 1
            return true
        }
        guard admitted, !Task.isCancelled else {
            if admitted { finishedRun() }
            if let refusal = SessionError.cancelled as? Failure { throw refusal }
            preconditionFailure("a pool that is shutting down refuses work; \(Failure.self) cannot say so")
        }
        defer { finishedRun() }
        // The outcome crosses `withValue` as a value: its closure rethrows untyped.
        let outcome = await Self.$current.withValue(self) { () async -> Swift.Result<Result, Failure> in
            await withTaskExecutorPreference(self) { () async -> Swift.Result<Result, Failure> in
                // The preference takes effect when the task next enters a nonisolated async function.
                await Self.call(body)
            }
        }
        return try outcome.get()
    }

    private nonisolated static func call<Result: Sendable, Failure: Error>(
        _ body: () async throws(Failure) -> Result
    ) async -> Swift.Result<Result, Failure> {
        do {
            return .success(try await body())
        } catch {
            return .failure(error)
        }
    }

    /// Refuses new work, lets what is running finish, and returns once every thread has ended.
    /// A pool that never started stops at once.
    public func shutdownGracefully() async {
        let done: Bool = withState { state in
            switch state.phase {
            case .idle:
                state.phase = .stopped
            case .running:
                state.phase = .draining
            case .draining, .stopped:
                break
            }
            condition.broadcast()
            return state.phase == .stopped
        }
        if done { return }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let stopped: Bool = withState { state in
                if state.phase == .stopped { return true }
                state.stopWaiters.append(waiter)
                return false
            }
            if stopped { waiter.resume() }
        }
    }

    /// Runs the pool until the calling task is cancelled, then shuts it down gracefully: the
    /// shape of swift-service-lifecycle's `Service`, so that a server's service group starts
    /// and stops it with the others.
    public func run() async {
        start()
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(86_400)) }
        await shutdownGracefully()
    }

    /// Whether the calling thread is one of the pool's (a thread's name is no proof on Linux).
    package var isCurrentThread: Bool {
        let current = ObjectIdentifier(Thread.current)
        return withState { $0.identities.contains(current) }
    }

    /// How many threads have not ended: ``threadCount`` while running, 0 once stopped.
    package var liveThreadCount: Int { withState { $0.threads } }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        withState { state in
            // A job is part of a task already running here: it is taken while draining, and a
            // stopped pool can hold none (it stops only once every run has returned).
            precondition(state.phase != .stopped, "a job was given to a stopped pool")
            state.jobs.append(job)
            condition.signal()
        }
    }

    private func finishedRun() {
        withState { state in
            state.running -= 1
            condition.broadcast()
        }
    }

    /// A thread's loop: the next job, or a wait for one, until the pool drains.
    private func work() {
        withState { _ = $0.identities.insert(ObjectIdentifier(Thread.current)) }
        while true {
            condition.lock()
            while state.jobs.isEmpty && !(state.phase == .draining && state.running == 0) { condition.wait() }
            if state.jobs.isEmpty {
                // Draining and nothing left to run: this thread ends; the last one stops the pool.
                state.threads -= 1
                state.identities.remove(ObjectIdentifier(Thread.current))
                var waiters: [CheckedContinuation<Void, Never>] = []
                if state.threads == 0 {
                    state.phase = .stopped
                    swap(&waiters, &state.stopWaiters)
                }
                condition.unlock()
                for waiter in waiters { waiter.resume() }
                return
            }
            let job = state.jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body(&state)
    }
}
