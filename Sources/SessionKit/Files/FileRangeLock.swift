internal import Foundation
internal import SessionAudio

/// An exclusive lock on a byte range of a lock file, which processes and, on NFSv4 and other POSIX
/// shared file systems that forward locks to the server, processes on other hosts respect.
///
/// It is an open-file-description lock (``FileDescriptor/lock(start:length:waiting:)``): it belongs
/// to this open file, not to the process, so two values in one process exclude each other like two
/// processes do, and the kernel drops it when the file is closed or the process ends, however it
/// ends. Byte ranges let one lock file carry independent locks: a lock file's bytes need not exist
/// to be locked.
///
/// It is `Sendable`: both its properties are constants, and the kernel orders lock calls on the
/// one descriptor from any thread.
final class FileRangeLock: Sendable {
    /// A byte range of the lock file; a `length` of 0 reaches past the end, however far.
    struct Range: Sendable, Equatable {
        let start: Int64
        let length: Int64
    }

    private let file: FileDescriptor
    /// The lock file, for errors.
    let path: String

    /// Opens (creating if needed) the lock file at `path`: a regular file, never a link followed
    /// (one planted there is an error, not a file created elsewhere) nor a FIFO waited on.
    init(path: String) throws(SessionError) {
        self.path = path
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(
                path,
                .readWrite,
                options: [.create, .noFollow, .nonBlocking],
                permissions: 0o666
            )
        } catch {
            let reason =
                error == .tooManySymbolicLinkLevels
                ? "it is a symbolic link, which render-session never follows for its lock file; remove it"
                : error.reason(folder: (path as NSString).deletingLastPathComponent)
            throw SessionError(.cannotWrite, "Cannot lock \(path): \(reason)", underlyingError: error)
        }
        guard (try? file.kind()) == .regularFile else {
            throw SessionError(.cannotWrite, "Cannot lock \(path): it is not a regular file; remove it")
        }
        self.file = file
    }

    /// Takes the lock on `range`, first calling `waiting` if another holder has it, then waiting.
    func lock(_ range: Range, waiting: () -> Void = {}) throws(SessionError) {
        if try control(range, waiting: false) { return }
        waiting()
        while !(try control(range, waiting: true)) {}
    }

    /// Releases the lock on `range`.
    func unlock(_ range: Range) {
        try? file.unlock(start: range.start, length: range.length)
    }

    /// Runs `body` while holding the lock on `range`.
    func withLock<Result>(_ range: Range, _ body: () throws(SessionError) -> Result) throws(SessionError) -> Result {
        try lock(range)
        defer { unlock(range) }
        return try body()
    }

    /// One lock call; `false` if the range is held elsewhere.
    private func control(_ range: Range, waiting: Bool) throws(SessionError) -> Bool {
        do {
            return try file.lock(start: range.start, length: range.length, waiting: waiting)
        } catch {
            throw SessionError(.cannotWrite, "Cannot lock \(path): \(error.reason())", underlyingError: error)
        }
    }
}
