internal import CSndFile

#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor that a streamed WAV goes to, front to back, never seeking: standard
/// output, a pipe, a FIFO, a character device, or a socket.
///
/// Every write goes through ``write(_:)``, which loops until each byte is out: a write that
/// `EINTR` interrupts is retried, a partial write continues where it stopped, and a descriptor
/// in non-blocking mode is waited for with `poll`. The first failure's `errno` is kept (libsndfile's
/// virtual I/O can only report a short count) and nothing more is written after it.
///
/// A write to a pipe whose reader has gone raises SIGPIPE, whose default action ends the process
/// before `write` can return `EPIPE`. So SIGPIPE is blocked on the writing thread for the length
/// of each write, and a SIGPIPE that write raised is taken off the thread's pending set before
/// the mask is restored: the process's disposition is left alone, and the caller sees `EPIPE`.
///
/// Does not own the descriptor: whoever opened it closes it.
final class DescriptorOutput {
    /// The descriptor written to.
    let descriptor: Int32
    /// Bytes written so far.
    private(set) var byteCount: Int64 = 0
    /// The `errno` of the first failed write, or 0.
    private(set) var errorNumber: Int32 = 0
    /// How many times a `write` returned `EINTR` and was retried; tests read it.
    private(set) var interruptionCount = 0
    /// Bytes written through libsndfile's virtual I/O, which counts from where its samples start.
    private var libraryByteCount: Int64 = 0

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// The first failure as a phrase, such as `Broken pipe`, or `nil`.
    var failure: String? {
        errorNumber == 0 ? nil : String(cString: strerror(errorNumber))
    }

    /// Writes all of `buffer`; `false` when some of it could not be written (see ``errorNumber``).
    /// The corresponding system calls are `write` and, for a non-blocking descriptor, `poll`.
    func write(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard errorNumber == 0 else { return false }
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return true }
        return SIGPIPEBlock.during(
            discardingPendingIf: { errorNumber == EPIPE },
            body: {
                var offset = 0
                while offset < buffer.count {
                    let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                    if written > 0 {
                        offset += written
                        byteCount += Int64(written)
                        continue
                    }
                    let error = written < 0 ? errno : EIO
                    switch error {
                    case EINTR:
                        interruptionCount += 1
                        continue
                    case EAGAIN:  // also EWOULDBLOCK on Linux
                        guard waitUntilWritable() else { return false }
                    default:
                        errorNumber = error
                        return false
                    }
                }
                return true
            }
        )
    }

    /// Writes `bytes`; `false` on failure.
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Waits for a non-blocking descriptor to take more; `false` (with ``errorNumber`` set) if `poll` fails.
    private func waitUntilWritable() -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
        while poll(&entry, 1, -1) < 0 {
            guard errno == EINTR else {
                errorNumber = errno
                return false
            }
        }
        return true
    }

    /// libsndfile's virtual I/O onto this output, for a `SF_FORMAT_RAW` handle that converts and
    /// writes the samples. libsndfile sees a file that starts where the samples do; it writes
    /// forward only, and a seek to anywhere but the current position fails.
    /// Pass `Unmanaged.passUnretained(output).toOpaque()` as the user data; the output must
    /// outlive the handle.
    static let virtualIO = SF_VIRTUAL_IO(
        get_filelen: { userData in
            DescriptorOutput.from(userData).libraryByteCount
        },
        seek: { offset, whence, userData in
            let output = DescriptorOutput.from(userData)
            let current = output.libraryByteCount
            let stays = (whence == SEEK_SET && offset == current) || (whence != SEEK_SET && offset == 0)
            return stays ? current : -1
        },
        read: { _, _, _ in
            0
        },
        write: { pointer, count, userData in
            let output = DescriptorOutput.from(userData)
            guard let pointer, count > 0 else { return 0 }
            let before = output.byteCount
            _ = output.write(UnsafeRawBufferPointer(start: pointer, count: Int(count)))
            let written = output.byteCount - before
            output.libraryByteCount += written
            return written
        },
        tell: { userData in
            DescriptorOutput.from(userData).libraryByteCount
        }
    )

    private static func from(_ userData: UnsafeMutableRawPointer?) -> DescriptorOutput {
        Unmanaged<DescriptorOutput>.fromOpaque(userData!).takeUnretainedValue()
    }
}

/// Blocking SIGPIPE on the calling thread while a write runs (see ``DescriptorOutput``).
private enum SIGPIPEBlock {
    /// Runs `body` with SIGPIPE blocked on this thread, then, when `raised` says that `body` hit a
    /// closed pipe, discards the SIGPIPE that left pending (unless SIGPIPE was already blocked: a
    /// caller's own mask is its business), and restores the mask. The corresponding calls are
    /// `pthread_sigmask`, `sigpending` and `sigtimedwait`.
    static func during<Result>(discardingPendingIf raised: () -> Bool, body: () -> Result) -> Result {
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        guard pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous) == 0 else { return body() }
        let result = body()
        if raised(), sigismember(&previous, SIGPIPE) == 0 {
            var pending = sigset_t()
            if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
                var noWait = timespec(tv_sec: 0, tv_nsec: 0)
                while sigtimedwait(&pipeOnly, nil, &noWait) < 0 && errno == EINTR {}
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
    }
}

/// A destination that cannot be renamed into (standard output, a FIFO, a device), open for
/// writing straight through, its bytes written in full by ``DescriptorOutput`` just as a streamed
/// WAV is: `EINTR` retried, a closed reader an error (`Broken pipe`) rather than death by SIGPIPE.
///
/// Owns the descriptor it opened and closes it with ``close()`` or when it ends; standard output
/// stays open.
package final class DescriptorStream {
    /// The open descriptor, for a ``SoundFileWriter`` streaming to it: valid until ``close()``.
    package let descriptor: Int32
    /// What the destination is called in errors: `standard output`, or the FIFO's path.
    package let name: String
    /// The descriptor while it is open.
    private var file: FileDescriptor?

    private init(_ file: consuming FileDescriptor, name: String) {
        descriptor = file.rawValue
        self.name = name
        self.file = .some(file)
    }

    /// Standard output; `name` stands for it in errors.
    package static func standardOutput(name: String) -> DescriptorStream {
        DescriptorStream(.standardOutput, name: name)
    }

    /// Opens `path` for writing straight through; `name` stands for it in errors.
    /// The corresponding system call is `open`.
    package convenience init(opening path: String, name: String) throws(AudioError) {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .writeOnly)
        } catch {
            throw AudioError(.cannotWrite, path: name, reason: error.description)
        }
        self.init(file, name: name)
    }

    /// Writes all of `bytes`.
    package func write(_ bytes: [UInt8]) throws(AudioError) {
        let output = DescriptorOutput(descriptor: descriptor)
        guard output.write(bytes) else {
            throw AudioError(.cannotWrite, path: name, reason: output.failure ?? "the write failed")
        }
    }

    /// Copies the file at `path` (a spooled output) here, a megabyte at a time.
    /// The corresponding system calls are `open` and `read`.
    package func copy(fileAt path: String) throws(AudioError) {
        let unreadable = AudioError(.cannotWrite, path: name, reason: "cannot read back the spooled file \(path)")
        let input: FileDescriptor
        do {
            input = try FileDescriptor.open(path, .readOnly)
        } catch {
            throw unreadable
        }
        do {
            try input.forEachBlock(size: 1 << 20) { (block) throws(AudioError) in try write(Array(block)) }
        } catch {
            switch error {
            case .reading: throw unreadable
            case .handling(let error): throw error
            }
        }
    }

    /// Closes the descriptor, unless it is standard output; nothing is written after.
    /// The corresponding system call is `close`.
    package func close() {
        file = nil
    }
}
