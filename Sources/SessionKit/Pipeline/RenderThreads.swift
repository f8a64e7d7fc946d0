import Foundation

/// Threads of render-session's own for the long synchronous work of rendering, encoding and
/// verifying, so that minutes of it never sit on Swift concurrency's shared threads.
///
/// It is a `TaskExecutor`: ``run(_:)`` runs work in the calling task with a preference for it
/// (a task given the preference when it is made starts on the shared threads all the same, and
/// moves only at its first suspension), so `Task.isCancelled` and task-locals still hold while the
/// work blocks one of these threads, as swift-nio's `NIOThreadPool` serves blocking work behind an
/// `async` front. A job goes to an idle thread; when more jobs wait than threads, a new one starts,
/// so as many renders run at once as tasks ask for (a batch's `--jobs`). Threads then wait for
/// more work, and are named `session.render` for debuggers and tests.
package final class RenderThreads: TaskExecutor, @unchecked Sendable {
    // @unchecked: every stored property is reached only while holding `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var idle = 0
    /// The pool's threads, by identity.
    private var threads: Set<ObjectIdentifier> = []

    /// The threads every pipeline shares.
    package static let shared = RenderThreads()

    /// The name every thread of the pool carries.
    package static let threadName = "session.render"

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // More jobs waiting than threads waiting for them: one more thread, so that no job queues
        // behind a render that runs for minutes.
        if jobs.count > idle {
            Thread { [self] in
                // Named from inside: Linux gives a thread its creator's name until it names itself.
                Thread.current.name = Self.threadName
                condition.withLock { _ = threads.insert(ObjectIdentifier(Thread.current)) }
                work()
            }.start()
        }
        condition.signal()
        condition.unlock()
    }

    /// Runs `body` in the calling task on one of these threads, and returns what it returns.
    package func run<Result: Sendable, Failure: Error>(
        _ body: @Sendable () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await withTaskExecutorPreference(self) { () async throws(Failure) -> Result in
            // The preference takes effect when the task next enters a nonisolated async function.
            try await Self.call(body)
        }
    }

    private nonisolated static func call<Result: Sendable, Failure: Error>(
        _ body: @Sendable () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        try await body()
    }

    /// Whether the calling thread is one of the pool's (a thread's name is no proof on Linux).
    package var isCurrentThread: Bool {
        let current = ObjectIdentifier(Thread.current)
        return condition.withLock { threads.contains(current) }
    }

    /// A thread's loop: the next job, or a wait for one.
    private func work() {
        while true {
            condition.lock()
            idle += 1
            while jobs.isEmpty { condition.wait() }
            idle -= 1
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
