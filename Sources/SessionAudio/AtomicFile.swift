public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writing a file so that readers see either the old file or the complete new one, never a part.
///
/// The content goes to a temporary file beside the destination, named
/// `.NAME.PID-RANDOM.partial`; ``commit(_:)`` flushes it and renames it into place in one
/// step. A temporary left behind by a killed process is removed by ``removeStaleTemporaries(for:)``
/// once its process is gone. While a temporary exists it is registered, so that a signal
/// handler can remove it with ``removeAllRegistered()`` before the process exits.
public struct AtomicFile: Sendable {
    /// Where the finished file goes.
    public let destination: String
    /// Where it is written until then.
    public let temporaryPath: String

    /// Prepares to write `destination`, first removing stale temporaries that earlier, killed
    /// runs left for it (pass `false` when a caller cleans the whole folder itself).
    public init(destination: String, removingStaleTemporaries: Bool = true) {
        self.destination = destination
        let url = URL(fileURLWithPath: destination)
        let name = ".\(url.lastPathComponent).\(getpid())-\(UInt32.random(in: 0...UInt32.max)).partial"
        temporaryPath = url.deletingLastPathComponent().appendingPathComponent(name).path
        if removingStaleTemporaries { Self.removeStaleTemporaries(for: destination) }
        Self.registered.withLock { _ = $0.insert(temporaryPath) }
    }

    /// Flushes the temporary to disk and renames it over the destination.
    public func commit() throws(AudioError) {
        let descriptor = open(temporaryPath, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            Glibc.close(descriptor)
        }
        guard rename(temporaryPath, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw AudioError(.cannotWrite, path: destination, reason: "cannot move the finished file into place: \(reason)")
        }
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
        let directory = URL(fileURLWithPath: destination).deletingLastPathComponent().path
        let directoryDescriptor = open(directory, O_RDONLY | O_DIRECTORY)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            Glibc.close(directoryDescriptor)
        }
    }

    /// Writes `data` to `destination` atomically.
    public static func write(_ data: Data, to destination: String) throws(AudioError) {
        let file = AtomicFile(destination: destination)
        do {
            try data.write(to: URL(fileURLWithPath: file.temporaryPath))
        } catch {
            file.discard()
            throw AudioError(.cannotWrite, path: destination, reason: (error as NSError).localizedDescription)
        }
        try file.commit()
    }

    /// Removes the temporary, leaving any earlier file at the destination untouched.
    public func discard() {
        unlink(temporaryPath)
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Removes every registered temporary; safe to call from a signal handler's queue.
    public static func removeAllRegistered() {
        registered.withLock { paths in
            for path in paths { unlink(path) }
            paths.removeAll()
        }
    }

    /// Removes temporaries for `destination` whose writing process no longer runs.
    public static func removeStaleTemporaries(for destination: String) {
        let url = URL(fileURLWithPath: destination)
        removeStaleTemporaries(in: url.deletingLastPathComponent().path, prefix: ".\(url.lastPathComponent).")
    }

    /// Removes every temporary in `directory` whose writing process no longer runs; returns how many.
    @discardableResult
    public static func removeStaleTemporaries(in directory: String, prefix: String = ".") -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".partial") {
            // .NAME.PID-RANDOM.partial: the process id follows the last dot but one.
            let parts = name.dropLast(".partial".count).split(separator: ".")
            guard let owner = parts.last?.split(separator: "-").first, let pid = Int32(owner) else { continue }
            if pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH {
                if unlink((directory as NSString).appendingPathComponent(name)) == 0 { removed += 1 }
            }
        }
        return removed
    }

    private static let registered = Locked<Set<String>>([])
}

/// Facts about the terminal the process runs in.
public enum Terminal {
    /// Whether standard error is a terminal, where progress may be drawn.
    public static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }
}

/// What happens when the process is interrupted (SIGINT, SIGTERM).
///
/// Work stops cooperatively: the signal sets ``isRequested``, long loops (rendering, synthesis,
/// batches) check it between blocks and unwind through their normal error paths, which remove
/// their temporary files; the command then exits with 128 + the signal's number. Should the work
/// not stop within three seconds, every registered temporary is removed and the process exits.
public enum Interruption {
    /// Installs the handlers. Call once, at the start of a command.
    public static func removeTemporaryFilesOnExit() {
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                received.store(signalNumber, ordering: .relaxed)
                DispatchQueue.global().asyncAfter(deadline: .now() + 3) {
                    AtomicFile.removeAllRegistered()
                    _exit(128 + signalNumber)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Whether SIGINT or SIGTERM has arrived.
    public static var isRequested: Bool { received.load(ordering: .relaxed) != 0 }

    /// The exit status a shell reports for the signal that arrived: 130 for SIGINT, 143 for SIGTERM.
    public static var exitStatus: Int32 { 128 + received.load(ordering: .relaxed) }

    private static let received = Atomic<Int32>(0)

    /// Keeps the signal sources alive. Only `removeTemporaryFilesOnExit()` touches it, once, at
    /// the start of a command, before any other thread runs.
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []
}

/// An exclusive lock on a folder, held by one process at a time (`flock` on a lock file in it),
/// released when the value is released or the process ends, however it ends.
public final class FolderLock {
    private let descriptor: Int32

    /// Takes the lock on `folder`, first calling `waiting` if another process holds it, then waiting.
    public init(folder: String, waiting: () -> Void) throws(AudioError) {
        let path = (folder as NSString).appendingPathComponent(".render-session.lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            throw AudioError(.cannotWrite, path: path, reason: String(cString: strerror(errno)))
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
