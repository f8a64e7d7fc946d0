public import Foundation
internal import SessionAudio

#if canImport(Glibc)
import Glibc
#endif

/// Writing a file so that readers see either the old file or the complete new one, never a part.
///
/// The content goes to a temporary file beside the destination, named
/// `.NAME.PID-RANDOM.partial`; ``commit(_:)`` flushes it and renames it into place in one
/// step. A temporary left behind by a killed process is removed by ``removeStaleTemporaries(for:)``
/// once its process is gone. While a temporary exists it is registered, so that a process about to
/// exit at once (a second Ctrl-C, a stuck cancellation) can remove it with ``removeAllRegistered()``.
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
    public func commit() throws(SessionError) {
        let descriptor = open(temporaryPath, O_RDONLY)
        if descriptor >= 0 {
            fsync(descriptor)
            Glibc.close(descriptor)
        }
        guard rename(temporaryPath, destination) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw SessionError(
                .cannotWrite,
                "Cannot write \(destination): cannot move the finished file into place: \(reason)"
            )
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
    public static func write(_ data: Data, to destination: String) throws(SessionError) {
        try staged(data, for: destination, named: destination).commit()
    }

    /// Writes `data` to a temporary beside `destination` and returns it, to be committed (or
    /// discarded) with other outputs; `name` stands for the destination in errors.
    static func staged(_ data: Data, for destination: String, named name: String) throws(SessionError) -> AtomicFile {
        let file = AtomicFile(destination: destination)
        do {
            try data.write(to: URL(fileURLWithPath: file.temporaryPath))
        } catch {
            file.discard()
            throw SessionError(.cannotWrite, "Cannot write \(name): \(FileProblem.describe(error, path: destination))")
        }
        return file
    }

    /// Removes the temporary, leaving any earlier file at the destination untouched.
    public func discard() {
        Self.removeTemporary(temporaryPath)
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Removes every registered temporary; safe to call from any thread.
    public static func removeAllRegistered() {
        registered.withLock { paths in
            for path in paths { removeTemporary(path) }
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
                if removeTemporary((directory as NSString).appendingPathComponent(name)) { removed += 1 }
            }
        }
        return removed
    }

    /// Removes the temporary at `path`: a file, or a folder being built (a queue's) with all it holds.
    @discardableResult
    private static func removeTemporary(_ path: String) -> Bool {
        if unlink(path) == 0 { return true }
        guard errno == EISDIR else { return false }
        return (try? FileManager.default.removeItem(atPath: path)) != nil
    }

    private static let registered = Locked<Set<String>>([])
}
