import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

@testable import SessionKit

/// Blocking work runs on a pool of a size the caller sets, which starts, drains and shuts down,
/// and which cancellation reaches (issue 38); never on Swift concurrency's shared threads.
@Suite("The pool for blocking work", .tags(.concurrent))
struct BlockingPoolTests {
    /// The largest number of bodies that ran at once, and on which threads.
    final class Occupancy: Sendable {
        private let state = Locked<(running: Int, most: Int, onPool: Bool)>((0, 0, true))

        func enter(_ pool: BlockingPool) {
            let onPool = pool.isCurrentThread
            state.withLock { state in
                state.running += 1
                state.most = max(state.most, state.running)
                state.onPool = state.onPool && onPool
            }
        }

        func leave() {
            state.withLock { $0.running -= 1 }
        }

        var most: Int { state.withLock { $0.most } }
        var allOnPool: Bool { state.withLock { $0.onPool } }
    }

    @Test("A render's planning and rendering run on the pipeline's pool, which a caller sizes and shuts down")
    func runRendersOnThePool() async throws {
        let folder = try TemporaryFolder()
        let pool = BlockingPool(threadCount: 1, name: "test.render")
        var pipeline = RenderTests.pipeline(audio: folder.path("s.wav"))
        pipeline.pool = pool
        let onPool = Locked(true)
        pipeline.observer = PipelineObserver(rendering: { _, _, _ in
            let here = pool.isCurrentThread
            onPool.withLock { $0 = $0 && here }
        })
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let outcome = try await pipeline.run(script)
        #expect(outcome.timeline.totalFrames == Frames(612 * 22_050))
        #expect(onPool.withLock { $0 }, "every block was rendered on the pool's thread")
        #expect(pool.liveThreadCount == 1)
        await pool.shutdownGracefully()
        #expect(pool.liveThreadCount == 0, "its thread ended")
    }

    @Test("No more bodies run at once than the pool has threads; each on one of them", arguments: [1, 3])
    func bounded(threads: Int) async throws {
        let pool = BlockingPool(threadCount: threads)
        let occupancy = Occupancy()
        // Twelve bodies that each block for a while: at most `threads` overlap.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    try await pool.run { () throws(SessionError) in
                        occupancy.enter(pool)
                        usleep(20_000)
                        occupancy.leave()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(occupancy.most == threads)
        #expect(occupancy.allOnPool)
        await pool.shutdownGracefully()
    }

    @Test("Child tasks a body starts run on the pool too, as many at once as it has threads")
    func childrenInherit() async throws {
        let pool = BlockingPool(threadCount: 2)
        let occupancy = Occupancy()
        try await pool.run { () async throws(SessionError) in
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask {
                        occupancy.enter(pool)
                        usleep(20_000)
                        occupancy.leave()
                    }
                }
            }
        }
        #expect(occupancy.most == 2 && occupancy.allOnPool)
        await pool.shutdownGracefully()
    }

    @Test("Shutting down lets running work finish, refuses new work as cancelled, and ends every thread")
    func drains() async throws {
        let pool = BlockingPool(threadCount: 2)
        // Waited for without blocking: the test's own thread is one of Swift's shared ones.
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        let running = Task {
            try await pool.run { () throws(SessionError) -> Int in
                start.yield()
                usleep(200_000)
                return 7
            }
        }
        for await _ in started { break }
        await pool.shutdownGracefully()
        #expect(try await running.value == 7, "the body that was running finished")
        #expect(pool.liveThreadCount == 0)
        await #expect(throws: SessionError.cancelled) {
            try await pool.run { () throws(SessionError) in Issue.record("ran on a stopped pool") }
        }
        // A pool that never started stops at once.
        let idle = BlockingPool(threadCount: 4)
        await idle.shutdownGracefully()
        #expect(idle.liveThreadCount == 0)
    }

    @Test("Cancellation reaches a body on the pool's thread, and a cancelled task's work never starts")
    func cancellation() async throws {
        let pool = BlockingPool(threadCount: 1)
        let (started, start) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await pool.run { () throws(SessionError) -> Bool in
                start.yield()
                while !Task.isCancelled { usleep(1_000) }
                return pool.isCurrentThread
            }
        }
        for await _ in started { break }
        task.cancel()
        #expect(try await task.value, "cancellation reached the task on the pool's thread")
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await pool.run { () throws(SessionError) in true }
        }
        await #expect(throws: SessionError.cancelled) { try await cancelled.value }
        await pool.shutdownGracefully()
    }

    @Test("The eSpeak voice synthesizes on the pool a command gives it, not on a shared thread")
    func embeddedVoiceOnThePool() async throws {
        let pool = BlockingPool(threadCount: 1)
        let folder = try TemporaryFolder()
        let onPool = Locked(false)
        struct Watching: SpeechProvider {
            let pool: BlockingPool
            let onPool: Locked<Bool>
            var name: String { "watching" }
            var defaultJobs: Int { 1 }
            func speak(_ request: SpeechRequest) async throws(SessionError) -> SpeechResult {
                let result = try await EmbeddedSpeechProvider().speak(request)
                let here = pool.isCurrentThread
                onPool.withLock { $0 = here }
                return result
            }
        }
        var pipeline = SessionPipeline(
            clips: ClipIdentity(cacheFolder: folder.path("cache")),
            source: .provider(Watching(pool: pool, onPool: onPool))
        )
        pipeline.pool = pool
        let prepared = try await pipeline.prepare(texts: ["Breathe in."])
        #expect(prepared.synthesized == 1)
        #expect(onPool.withLock { $0 })
        await pool.shutdownGracefully()
    }
}
