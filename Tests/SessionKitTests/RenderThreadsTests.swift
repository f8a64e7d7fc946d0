import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

@testable import SessionKit

/// Minutes of synchronous rendering run on threads of render-session's own, never on Swift
/// concurrency's shared ones (issue 23), and cancellation still reaches them.
@Suite("Rendering on threads of its own")
struct RenderThreadsTests {
    /// Whether each call came on one of the pool's threads.
    final class ThreadNames: @unchecked Sendable {
        // @unchecked: `names` is reached only while holding `lock`.
        private let lock = NSLock()
        private var names: Set<String> = []
        func add() {
            let name = RenderThreads.shared.isCurrentThread ? RenderThreads.threadName : "another thread"
            lock.withLock { _ = names.insert(name) }
        }
        var all: Set<String> { lock.withLock { names } }
    }

    /// Whether the calling thread is the pool's (`Thread.current` is for synchronous code).
    static func onPool() -> Bool { RenderThreads.shared.isCurrentThread }

    @Test("run renders on the pool's threads")
    func runRendersOffThePool() async throws {
        let folder = try TemporaryFolder()
        var pipeline = RenderTests.pipeline(audio: folder.path("s.wav"))
        let names = ThreadNames()
        pipeline.observer = PipelineObserver(rendering: { _, _, _ in names.add() })
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let timeline = try await pipeline.run(script)
        #expect(timeline.totalFrames == Frames(608 * 22_050))
        #expect(names.all == [RenderThreads.threadName])
    }

    @Test("Jobs that block run at once, each on a thread of the pool; a cancelled task sees it there")
    func concurrentAndCancellable() async throws {
        let started = ThreadNames()
        let gate = DispatchSemaphore(value: 0)
        // Two jobs that each wait for the other to start: they finish only if both run at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    await RenderThreads.shared.run {
                        started.add()
                        gate.signal()
                        #expect(gate.wait(timeout: .now() + 10) == .success, "the other job runs at the same time")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(started.all == [RenderThreads.threadName])
        let task = Task {
            try await RenderThreads.shared.run { () async throws -> Bool in
                while !Task.isCancelled { usleep(1_000) }
                return Self.onPool()
            }
        }
        task.cancel()
        #expect(try await task.value, "cancellation reached the task on the pool's thread")
    }
}

/// A `SessionError` keeps the error it wraps (issue 23): its line is the sentence it always was,
/// and the audio library's own error is there for a program to look at.
@Suite("Errors keep their cause")
struct ErrorCauseTests {
    @Test("A bell that cannot be decoded: one line naming it, and the AudioError underneath")
    func bellCause() async throws {
        let folder = try TemporaryFolder()
        let bad = Repository.fixtures.appendingPathComponent("bad/random-bytes.mp3").path
        let pipeline = RenderTests.pipeline(
            sound: SoundSettings(bell: bad, loudness: .off),
            audio: folder.path("s.wav")
        )
        let script = try ScriptFile.load(Repository.script("ten-minute-session").path)
        let error = await #expect(throws: SessionError.self) { try await pipeline.run(script) }
        #expect(error?.code == .unusableSound)
        #expect(error?.lines.count == 1 && error?.lines.first?.hasPrefix("Bell \"\(bad)\": ") == true)
        #expect(error?.underlyingError is AudioError, "\(String(describing: error?.underlyingError))")
    }
}
