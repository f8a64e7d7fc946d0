import Foundation

/// A value that threads share, reached only while holding its lock.
///
/// Like swift-nio's `NIOLockedValueBox`, it is `Sendable` only because its value is: a value that
/// is not could escape the lock in what `withLock` returns, and be used by two threads at once.
/// The lock is an `NSLock`, a pthread mutex, which the thread sanitizer understands.
/// (`Synchronization.Mutex` locks with a bare futex on Linux, and the sanitizer reports every
/// access to the value it guards as a race.)
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `withLock`, under `lock`, and is itself
    // Sendable, so nothing `withLock` hands out is shared unsafely.
    private let lock = NSLock()
    private var value: Value

    /// Puts `value` behind a lock.
    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    package func withLock<Result, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
