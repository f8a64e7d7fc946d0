#if canImport(Glibc)
import Glibc
#endif

/// A system call's failure: the error number (`errno`) it left.
///
/// Its ``description`` is the system's own message (`strerror`, `Broken pipe`); ``reason(folder:)``
/// gives ``FileProblem``'s plainer words (`the disk holding /out is full`). The causes callers tell
/// apart have names, as swift-system's `Errno` names them.
package struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The error number.
    package let code: Int32

    /// The error with number `code`, such as one SwiftNIO reports for a connection.
    package init(code: Int32) {
        self.code = code
    }

    /// The error the calling thread's last failed system call left.
    static var current: SystemError { SystemError(code: errno) }

    /// The system's message for it, such as `Connection reset by peer`.
    /// The corresponding C function is `strerror`.
    package var description: String {
        String(cString: strerror(code))
    }

    /// Why a file operation failed, in ``FileProblem``'s words; `folder` is where the file lives,
    /// named when the cause is its disk (full, over quota, read-only).
    package func reason(folder: String? = nil) -> String {
        FileProblem.reason(errno: code, folder: folder)
    }

    /// Nothing is at the path (`ENOENT`).
    package static let noSuchFileOrDirectory = SystemError(code: ENOENT)
    /// Something is already at the path (`EEXIST`).
    package static let fileExists = SystemError(code: EEXIST)
    /// The path is a directory (`EISDIR`).
    package static let isDirectory = SystemError(code: EISDIR)
    /// The directory is not empty (`ENOTEMPTY`).
    package static let directoryNotEmpty = SystemError(code: ENOTEMPTY)
    /// A symbolic link where none may be followed, or a loop of them (`ELOOP`).
    package static let tooManySymbolicLinkLevels = SystemError(code: ELOOP)
    /// No process has the id (`ESRCH`).
    package static let noSuchProcess = SystemError(code: ESRCH)
    /// The other end reset the connection (`ECONNRESET`).
    package static let connectionReset = SystemError(code: ECONNRESET)
    /// The reader of a pipe or socket has gone (`EPIPE`).
    package static let brokenPipe = SystemError(code: EPIPE)
    /// A signal interrupted the call, which is then retried (`EINTR`).
    static let interrupted = SystemError(code: EINTR)
    /// The call would have had to wait (`EAGAIN`).
    static let resourceTemporarilyUnavailable = SystemError(code: EAGAIN)
    /// Permission denied (`EACCES`); also what a lock held elsewhere may answer.
    static let permissionDenied = SystemError(code: EACCES)
    /// An input/output error (`EIO`); also a write that wrote nothing.
    static let ioError = SystemError(code: EIO)
}

/// The result of a system call that returns -1 and sets `errno` on failure, retried while a
/// signal interrupts it (`EINTR`), as swift-system's `valueOrErrno(retryOnInterrupt:)` does.
func valueOrSystemError<Value: FixedWidthInteger>(_ call: () -> Value) throws(SystemError) -> Value {
    while true {
        let value = call()
        if value != -1 { return value }
        let error = SystemError.current
        if error != .interrupted { throw error }
    }
}
