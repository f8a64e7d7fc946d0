public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive lock on a folder, held by one process at a time (`flock` on a lock file in it),
/// released when the value is released or the process ends, however it ends.
public final class FolderLock {
    private let descriptor: Int32

    /// Takes the lock on `folder`, first calling `waiting` if another process holds it, then waiting.
    public init(folder: String, waiting: () -> Void) throws(SessionError) {
        let path = (folder as NSString).appendingPathComponent(".render-session.lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw SessionError(.cannotWrite, "Cannot lock \(folder): \(path): \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            waiting()
            while flock(descriptor, LOCK_EX) != 0 && errno == EINTR {}
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        Glibc.close(descriptor)
    }
}
