package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An open file descriptor, owned by this one value: it is closed when the value ends (or by
/// ``close()``), never twice, and never when it is one of the standard streams.
///
/// Every call is checked: a failure throws the ``SystemError`` it left, and a call a signal
/// interrupts (`EINTR`) is made again. Descriptors are opened close-on-exec, so no child process
/// (a Piper worker) inherits one. As swift-system's `FileDescriptor`, but non-copyable, as
/// swift-subprocess's `IODescriptor` is.
///
/// It is `Sendable`, as swift-system's is: the value is the kernel's number for the open file, and
/// the kernel orders calls made on it from several threads (a lock taken on one thread and released
/// on another, say); being non-copyable, it is still closed exactly once.
package struct FileDescriptor: ~Copyable, Sendable {
    /// What a descriptor is opened for.
    package enum Access: Sendable {
        /// Reading only (`O_RDONLY`).
        case readOnly
        /// Writing only (`O_WRONLY`).
        case writeOnly
        /// Reading and writing (`O_RDWR`).
        case readWrite

        var flags: Int32 {
            switch self {
            case .readOnly: O_RDONLY
            case .writeOnly: O_WRONLY
            case .readWrite: O_RDWR
            }
        }
    }

    /// How opening behaves.
    package struct Options: OptionSet, Sendable {
        package let rawValue: Int32

        package init(rawValue: Int32) {
            self.rawValue = rawValue
        }

        /// Creates the file if nothing is at the path (`O_CREAT`).
        package static let create = Options(rawValue: O_CREAT)
        /// With ``create``, fails with ``SystemError/fileExists`` if anything is at the path, a
        /// link included (`O_EXCL`).
        package static let exclusiveCreate = Options(rawValue: O_EXCL)
        /// Empties a file that is there (`O_TRUNC`).
        package static let truncate = Options(rawValue: O_TRUNC)
        /// Fails with ``SystemError/tooManySymbolicLinkLevels`` rather than follow a symbolic
        /// link at the path (`O_NOFOLLOW`).
        package static let noFollow = Options(rawValue: O_NOFOLLOW)
        /// Never waits: a FIFO without a writer opens at once, and reads do not block
        /// (`O_NONBLOCK`).
        package static let nonBlocking = Options(rawValue: O_NONBLOCK)
        /// Fails unless the path is a directory (`O_DIRECTORY`).
        package static let directory = Options(rawValue: O_DIRECTORY)
    }

    /// The descriptor's number.
    let rawValue: Int32
    /// Whether ending this value closes the descriptor: not for the standard streams.
    private let closesWhenDone: Bool

    private init(rawValue: Int32, closesWhenDone: Bool) {
        self.rawValue = rawValue
        self.closesWhenDone = closesWhenDone
    }

    /// Opens `path` for `access`; `permissions` are those of a file ``Options/create`` creates.
    /// The corresponding system call is `open(2)`, with `O_CLOEXEC`.
    package static func open(
        _ path: String,
        _ access: Access,
        options: Options = [],
        permissions: UInt32 = 0o644
    ) throws(SystemError) -> FileDescriptor {
        let flags = access.flags | options.rawValue | O_CLOEXEC
        let descriptor = try valueOrSystemError { Glibc.open(path, flags, mode_t(permissions)) }
        return FileDescriptor(rawValue: descriptor, closesWhenDone: true)
    }

    /// Opens a new file with no name in the folder at `path`, for reading and writing: it is
    /// gone, space and all, when the descriptor closes, however the process ends, and no other
    /// process can open it. The corresponding system call is `open(2)` with `O_TMPFILE`, which
    /// Glibc's Swift overlay does not import: its Linux value is `__O_TMPFILE | O_DIRECTORY`.
    /// - Throws: ``SystemError`` (`EOPNOTSUPP` where the folder's file system cannot).
    package static func anonymousFile(inFolder path: String) throws(SystemError) -> FileDescriptor {
        let temporaryFile: Int32 = 0o20_000_000 | O_DIRECTORY
        let descriptor = try valueOrSystemError { Glibc.open(path, temporaryFile | O_RDWR | O_CLOEXEC, mode_t(0o600)) }
        return FileDescriptor(rawValue: descriptor, closesWhenDone: true)
    }

    /// The process's standard input, which ending this value leaves open.
    package static var standardInput: FileDescriptor {
        FileDescriptor(rawValue: STDIN_FILENO, closesWhenDone: false)
    }

    /// The process's standard output, which ending this value leaves open.
    package static var standardOutput: FileDescriptor {
        FileDescriptor(rawValue: STDOUT_FILENO, closesWhenDone: false)
    }

    /// The process's standard error, which ending this value leaves open.
    package static var standardError: FileDescriptor {
        FileDescriptor(rawValue: STDERR_FILENO, closesWhenDone: false)
    }

    /// What the descriptor is open on. The corresponding system call is `fstat(2)`.
    package borrowing func kind() throws(SystemError) -> FileKind {
        var status = stat()
        let descriptor = rawValue
        _ = try valueOrSystemError { fstat(descriptor, &status) }
        return FileKind(mode: status.st_mode)
    }

    /// How many bytes the file holds. The corresponding system call is `fstat(2)`.
    package borrowing func byteCount() throws(SystemError) -> Int64 {
        var status = stat()
        let descriptor = rawValue
        _ = try valueOrSystemError { fstat(descriptor, &status) }
        return Int64(status.st_size)
    }

    /// Why the file open here, opened through `path`, is not a file inside `folder`; `nil` when
    /// it is (``FileSystem/placeOutside(of:openedThrough:folder:)``).
    package borrowing func placeOutside(openedThrough path: String, folder: String) -> String? {
        FileSystem.placeOutside(of: rawValue, openedThrough: path, folder: folder)
    }

    /// Whether the descriptor is a terminal. The corresponding C function is `isatty(3)`.
    package var isTerminal: Bool {
        isatty(rawValue) == 1
    }

    /// The width of the terminal the descriptor is, in columns; `nil` for anything else (or a
    /// terminal that does not say). The corresponding system call is `ioctl(2)`, `TIOCGWINSZ`.
    package var terminalColumns: Int? {
        var size = winsize()
        guard ioctl(rawValue, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return nil }
        return Int(size.ws_col)
    }

    /// Reads into the start of `buffer`, as much as it holds or as is there; returns how many
    /// bytes came, 0 at the end. The corresponding system call is `read(2)`.
    package borrowing func read(into buffer: inout [UInt8]) throws(SystemError) -> Int {
        let descriptor = rawValue
        return try valueOrSystemError {
            buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        }
    }

    /// Reads exactly `count` bytes from byte `offset` into the start of `buffer` (grown if it is
    /// smaller), without moving the descriptor's offset; a file that ends first fails with `EIO`.
    /// The corresponding system call is `pread(2)`.
    package borrowing func read(into buffer: inout [UInt8], count: Int, at offset: Int64) throws(SystemError) {
        if buffer.count < count { buffer += [UInt8](repeating: 0, count: count - buffer.count) }
        let descriptor = rawValue
        var done = 0
        while done < count {
            let read = try valueOrSystemError {
                buffer.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                }
            }
            guard read > 0 else { throw .ioError }
            done += read
        }
    }

    /// Reads to the end in blocks of at most `size` bytes, handing each to `body` as it comes: the
    /// one read loop of copying, hashing and reading whole inputs.
    /// The corresponding system call is `read(2)`.
    package borrowing func forEachBlock<Failure: Error>(
        size: Int,
        _ body: (ArraySlice<UInt8>) throws(Failure) -> Void
    ) throws(BlockReadError<Failure>) {
        var block = [UInt8](repeating: 0, count: size)
        while true {
            let count: Int
            do {
                count = try read(into: &block)
            } catch {
                throw .reading(error)
            }
            if count == 0 { return }
            do {
                try body(block[..<count])
            } catch {
                throw .handling(error)
            }
        }
    }

    /// Writes everything left to read to `output`, a block of at most `blockSize` bytes at a time;
    /// a failed write is ``BlockReadError/handling(_:)``. The system calls are `read(2)`, `write(2)`.
    package borrowing func copy(
        to output: borrowing FileDescriptor,
        blockSize: Int
    ) throws(BlockReadError<SystemError>) {
        // Written through the descriptor's number: a closure cannot borrow the non-copyable
        // `output` (the 6.3 compiler reports a copy of it).
        let destination = output.rawValue
        try forEachBlock(size: blockSize) { (block) throws(SystemError) in
            try block.withUnsafeBytes { Self.write($0, to: destination, at: nil) }.get()
        }
    }

    /// Everything left to read, in pieces: a file, a pipe, a FIFO or a terminal alike, to its end.
    /// The corresponding system call is `read(2)`.
    package borrowing func readToEnd() throws(SystemError) -> Data {
        do {
            return try readToEnd(limit: .max)
        } catch {
            switch error {
            case .failed(let error): throw error
            case .tooLarge: preconditionFailure("no input is longer than Int.max bytes")
            }
        }
    }

    /// Everything left to read, as ``readToEnd()``, unless more than `limit` bytes come: then it
    /// stops at once with ``BoundedReadError/tooLarge(limit:)``, so a huge or endless input costs
    /// at most `limit` bytes (and a piece) of memory.
    package borrowing func readToEnd(limit: Int) throws(BoundedReadError) -> Data {
        var data = Data()
        do {
            try forEachBlock(size: 1 << 16) { (piece) throws(BoundedReadError) in
                data.append(contentsOf: piece)
                if data.count > limit { throw .tooLarge(limit: limit) }
            }
        } catch {
            switch error {
            case .reading(let error): throw .failed(error)
            case .handling(let error): throw error
            }
        }
        return data
    }

    /// Writes all of `bytes`, continuing after a partial write; a write that writes nothing
    /// fails with `EIO`. The corresponding system call is `write(2)`.
    package borrowing func write(_ bytes: some ContiguousBytes) throws(SystemError) {
        let descriptor = rawValue
        try bytes.withUnsafeBytes { Self.write($0, to: descriptor, at: nil) }.get()
    }

    /// Writes all of `bytes` at `offset`, leaving the file's position where it was; a write that
    /// writes nothing fails with `EIO`. The corresponding system call is `pwrite(2)`.
    package borrowing func write(_ bytes: some ContiguousBytes, at offset: Int64) throws(SystemError) {
        let descriptor = rawValue
        try bytes.withUnsafeBytes { Self.write($0, to: descriptor, at: offset) }.get()
    }

    /// Writes all of `buffer` to `descriptor`: at its position with `write(2)` when `offset` is
    /// nil, else at `offset` with `pwrite(2)`, continuing after a partial write either way.
    private static func write(
        _ buffer: UnsafeRawBufferPointer,
        to descriptor: Int32,
        at offset: Int64?
    ) -> Result<Void, SystemError> {
        var done = 0
        while done < buffer.count {
            do {
                let start = buffer.baseAddress! + done
                let written = try valueOrSystemError {
                    if let offset {
                        pwrite(descriptor, start, buffer.count - done, off_t(offset) + off_t(done))
                    } else {
                        Glibc.write(descriptor, start, buffer.count - done)
                    }
                }
                guard written > 0 else { return .failure(.ioError) }
                done += written
            } catch {
                return .failure(error)
            }
        }
        return .success(())
    }

    /// Flushes what was written to the disk. The corresponding system call is `fsync(2)`.
    package borrowing func synchronize() throws(SystemError) {
        let descriptor = rawValue
        _ = try valueOrSystemError { fsync(descriptor) }
    }

    /// Takes an exclusive lock on `length` bytes from `start` (a `length` of 0 reaches past the
    /// end, however far), held by this open file: two descriptors exclude each other even in one
    /// process, and closing the descriptor or ending the process, however it ends, releases it.
    /// With `waiting`, waits for another holder to release the range.
    /// - Returns: `false` if another holder has the range and `waiting` is false.
    /// The corresponding system call is `fcntl(2)` with `F_OFD_SETLK` or `F_OFD_SETLKW`.
    package borrowing func lock(start: Int64, length: Int64, waiting: Bool) throws(SystemError) -> Bool {
        do {
            try control(waiting ? Self.setLockWaiting : Self.setLock, type: F_WRLCK, start: start, length: length)
            return true
        } catch {
            if error == .resourceTemporarilyUnavailable || error == .permissionDenied { return false }
            throw error
        }
    }

    /// Releases this open file's lock on `length` bytes from `start`.
    /// The corresponding system call is `fcntl(2)` with `F_OFD_SETLK`.
    package borrowing func unlock(start: Int64, length: Int64) throws(SystemError) {
        try control(Self.setLock, type: F_UNLCK, start: start, length: length)
    }

    // Linux's numbers on every architecture (asm-generic/fcntl.h); Glibc hides them behind _GNU_SOURCE.
    private static let setLock: Int32 = 37
    private static let setLockWaiting: Int32 = 38

    /// One open-file-description lock call.
    private borrowing func control(_ command: Int32, type: Int32, start: Int64, length: Int64) throws(SystemError) {
        var request = flock()
        request.l_type = Int16(type)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(start)
        request.l_len = off_t(length)
        request.l_pid = 0
        let descriptor = rawValue
        _ = try valueOrSystemError { fcntl(descriptor, command, &request) }
    }

    /// Closes the descriptor now (unless it is a standard stream).
    /// The corresponding system call is `close(2)`, never retried.
    package consuming func close() throws(SystemError) {
        let descriptor = rawValue
        let closes = closesWhenDone
        discard self
        if closes, Glibc.close(descriptor) != 0 { throw SystemError.current }
    }

    deinit {
        if closesWhenDone { _ = Glibc.close(rawValue) }
    }
}

/// Why a bounded read (``FileDescriptor/readToEnd(limit:)``) gave no contents.
package enum BoundedReadError: Error {
    /// More than `limit` bytes came.
    case tooLarge(limit: Int)
    /// A read failed.
    case failed(SystemError)
}

/// What stopped a read handing its pieces over (``FileDescriptor/forEachBlock(size:_:)``'s blocks,
/// a kept span's packets): reading, or what was done with a piece.
package enum BlockReadError<Failure: Error>: Error {
    /// A read failed.
    case reading(SystemError)
    /// The block's handler failed.
    case handling(Failure)
}
