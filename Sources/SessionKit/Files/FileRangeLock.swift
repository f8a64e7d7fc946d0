internal import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a byte range of a lock file, which processes and, on NFSv4 and other POSIX
/// shared file systems that forward locks to the server, processes on other hosts respect.
///
/// It is an open-file-description lock (`fcntl` with `F_OFD_SETLKW`): it belongs to this open file,
/// not to the process, so two values in one process exclude each other like two processes do, and
/// the kernel drops it when the file is closed or the process ends, however it ends. Byte ranges let
/// one lock file carry independent locks: a lock file's bytes need not exist to be locked.
final class FileRangeLock {
    /// A byte range of the lock file; a `length` of 0 reaches past the end, however far.
    struct Range: Sendable, Equatable {
        let start: Int64
        let length: Int64
    }

    // Linux's numbers on every architecture (asm-generic/fcntl.h); Glibc hides them behind _GNU_SOURCE.
    private static let setLock: Int32 = 37
    private static let setLockWaiting: Int32 = 38

    private let descriptor: Int32
    /// The lock file, for errors.
    let path: String

    /// Opens (creating if needed) the lock file at `path`: a regular file, never a link followed
    /// (one planted there is an error, not a file created elsewhere) nor a FIFO waited on.
    init(path: String) throws(SessionError) {
        self.path = path
        let descriptor = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            let reason =
                errno == ELOOP
                ? "it is a symbolic link, which render-session never follows for its lock file; remove it"
                : FileProblem.reason(errno: errno, folder: (path as NSString).deletingLastPathComponent)
            throw SessionError(.cannotWrite, "Cannot lock \(path): \(reason)")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw SessionError(.cannotWrite, "Cannot lock \(path): it is not a regular file; remove it")
        }
        self.descriptor = descriptor
    }

    /// Takes the lock on `range`, first calling `waiting` if another holder has it, then waiting.
    func lock(_ range: Range, waiting: () -> Void = {}) throws(SessionError) {
        if try control(Self.setLock, type: F_WRLCK, range) { return }
        waiting()
        while !(try control(Self.setLockWaiting, type: F_WRLCK, range)) {}
    }

    /// Releases the lock on `range`.
    func unlock(_ range: Range) {
        _ = try? control(Self.setLock, type: F_UNLCK, range)
    }

    /// Runs `body` while holding the lock on `range`.
    func withLock<Result>(_ range: Range, _ body: () throws(SessionError) -> Result) throws(SessionError) -> Result {
        try lock(range)
        defer { unlock(range) }
        return try body()
    }

    /// One `fcntl` lock call; `false` if the range is held elsewhere (or a wait was interrupted).
    private func control(_ command: Int32, type: Int32, _ range: Range) throws(SessionError) -> Bool {
        var request = flock()
        request.l_type = Int16(type)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(range.start)
        request.l_len = off_t(range.length)
        request.l_pid = 0
        if fcntl(descriptor, command, &request) == 0 { return true }
        if errno == EAGAIN || errno == EACCES || errno == EINTR { return false }
        throw SessionError(.cannotWrite, "Cannot lock \(path): \(FileProblem.reason(errno: errno))")
    }

    deinit {
        Glibc.close(descriptor)
    }
}
