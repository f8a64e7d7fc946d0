#if canImport(Glibc)
import Glibc
#endif

/// What is at a path or behind a descriptor, as `stat` tells it.
package enum FileKind: Sendable, Equatable {
    /// A regular file.
    case regularFile
    /// A directory.
    case directory
    /// A symbolic link (seen only where links are not followed).
    case symbolicLink
    /// A FIFO, a character or block device, or a socket.
    case other

    /// The kind that `mode` (a `stat`'s `st_mode`) names.
    init(mode: mode_t) {
        switch mode & S_IFMT {
        case S_IFREG: self = .regularFile
        case S_IFDIR: self = .directory
        case S_IFLNK: self = .symbolicLink
        default: self = .other
        }
    }
}

/// The file system's calls on paths, each checked: a failure throws the ``SystemError`` the call
/// left, and a call a signal interrupts is made again.
package enum FileSystem {
    /// What is at `path`, without following a symbolic link there; `nil` if nothing is.
    /// The corresponding system call is `lstat(2)`.
    package static func kindOfItem(at path: String) throws(SystemError) -> FileKind? {
        var status = stat()
        do {
            _ = try valueOrSystemError { lstat(path, &status) }
        } catch {
            if error == .noSuchFileOrDirectory { return nil }
            throw error
        }
        return FileKind(mode: status.st_mode)
    }

    /// What the symbolic link at `path` holds, as written (a relative target is relative to the
    /// link's folder). The corresponding system call is `readlink(2)`.
    package static func symbolicLinkTarget(at path: String) throws(SystemError) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let capacity = buffer.count - 1
        let length = try valueOrSystemError { readlink(path, &buffer, capacity) }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `path` with every symbolic link resolved, made absolute; `nil` if it does not exist.
    /// The corresponding C function is `realpath(3)`.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether the resolved path `path` is under the resolved folder `root` (both as
    /// ``resolvedPath(_:)`` gives them).
    package static func isInside(_ path: String, _ root: String) -> Bool {
        root == "/" || path.hasPrefix(root.hasSuffix("/") ? root : root + "/")
    }

    /// Why the file open on `descriptor`, which was opened through `path`, is not a file inside
    /// `folder`; `nil` when it is.
    ///
    /// A name looked up in a folder (a sound library's) is checked before it is opened, and
    /// someone who can write into the folder could swap the checked file for a link leading out
    /// between the two. This check is made on the open file, so no such window is left: the path
    /// is resolved again, must lie inside the folder, and must still name the very file open on
    /// `descriptor` (the same device and inode). A file swapped before the open is not the one
    /// the path names now; one swapped after the open leaves a path leading out. A link inside
    /// the folder to another file inside it is followed, as the lookup follows it.
    /// The corresponding calls are `fstat(2)`, `realpath(3)` and `stat(2)`.
    package static func placeOutside(of descriptor: Int32, openedThrough path: String, folder: String) -> String? {
        var opened = stat()
        guard fstat(descriptor, &opened) == 0 else { return String(cString: strerror(errno)) }
        guard let root = resolvedPath(folder) else { return "the folder \(folder) it was found in is gone" }
        guard let resolved = resolvedPath(path) else { return "it was removed while it was being opened" }
        guard isInside(resolved, root) else { return "it leads to \(resolved), outside the folder \(folder)" }
        var named = stat()
        guard stat(resolved, &named) == 0, named.st_dev == opened.st_dev, named.st_ino == opened.st_ino else {
            return "it was replaced while it was being opened"
        }
        return nil
    }

    /// Throws unless this process may write into `path` (a folder, or a FIFO or device).
    /// The corresponding system call is `access(2)` with `W_OK`.
    package static func checkWritable(_ path: String) throws(SystemError) {
        _ = try valueOrSystemError { access(path, W_OK) }
    }

    /// Renames `source` to `destination` in one step, replacing a file (or an empty folder)
    /// there. The corresponding system call is `rename(2)`.
    package static func rename(_ source: String, to destination: String) throws(SystemError) {
        _ = try valueOrSystemError { Glibc.rename(source, destination) }
    }

    /// Makes `destination` a second name of the file `source`; fails with
    /// ``SystemError/fileExists`` rather than replace anything. The corresponding system call is
    /// `link(2)`.
    package static func link(_ source: String, to destination: String) throws(SystemError) {
        _ = try valueOrSystemError { Glibc.link(source, destination) }
    }

    /// Removes the file `path` (a link itself, not what it names); a folder is not removed but
    /// fails with ``SystemError/isDirectory``. The corresponding system call is `unlink(2)`.
    package static func removeFile(_ path: String) throws(SystemError) {
        _ = try valueOrSystemError { Glibc.unlink(path) }
    }

    /// Removes the empty folder `path`. The corresponding system call is `rmdir(2)`.
    package static func removeEmptyFolder(_ path: String) throws(SystemError) {
        _ = try valueOrSystemError { rmdir(path) }
    }

    /// Flushes the file at `path` (or a folder being built) to the disk.
    /// The corresponding system calls are `open(2)` and `fsync(2)`.
    package static func synchronize(fileAt path: String) throws(SystemError) {
        try FileDescriptor.open(path, .readOnly).synchronize()
    }

    /// Flushes the folder `path`'s entries to the disk, so that a rename in it lasts.
    /// The corresponding system calls are `open(2)` with `O_DIRECTORY` and `fsync(2)`.
    package static func synchronize(folderAt path: String) throws(SystemError) {
        try FileDescriptor.open(path, .readOnly, options: .directory).synchronize()
    }
}
