package import Foundation
internal import SessionAudio

/// Writing a file so that readers see either the old file or the complete new one, never a part.
///
/// The content goes to a temporary file beside the destination, named
/// `.NAME.PID-RANDOM-HOST.partial` (HOST: 8 hex digits of this host's name); ``commit(_:)`` flushes
/// it and renames it into place in one step. A temporary left behind by a killed process is removed
/// by ``removeStaleTemporaries(for:)`` once its process is gone. A process on another host sharing
/// the folder (NFS) cannot be asked whether it runs, so its temporaries are removed only after a day. While a temporary exists it is registered, so that a process about to
/// exit at once (a second Ctrl-C, a stuck cancellation) can remove it with ``removeAllRegistered()``.
package struct AtomicFile: Sendable {
    /// Where the finished file goes.
    package let destination: String
    /// Where it is written until then.
    package let temporaryPath: String

    /// Prepares to write `destination`, first removing stale temporaries that earlier, killed
    /// runs left for it (pass `false` when a caller cleans the whole folder itself).
    package init(destination: String, removingStaleTemporaries: Bool = true) {
        self.destination = destination
        let url = URL(fileURLWithPath: destination)
        let name =
            ".\(url.lastPathComponent).\(ProcessControl.identifier)-\(UInt32.random(in: 0...UInt32.max))-\(Self.hostTag).partial"
        temporaryPath = url.deletingLastPathComponent().appendingPathComponent(name).path
        if removingStaleTemporaries { Self.removeStaleTemporaries(for: destination) }
        Self.registered.withLock { _ = $0.insert(temporaryPath) }
    }

    /// Flushes the temporary to disk and renames it over the destination.
    package func commit() throws(SessionError) {
        flushTemporary()
        do {
            try FileSystem.rename(temporaryPath, to: destination)
        } catch {
            let reason = error.reason(folder: (destination as NSString).deletingLastPathComponent)
            discard()
            throw SessionError(
                .cannotWrite,
                "Cannot write \(destination): cannot move the finished file into place: \(reason)",
                underlyingError: error
            )
        }
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
        flushDirectory()
    }

    /// Flushes the temporary to disk and puts it in place only if the destination does not exist:
    /// a file another process put there first stays as it is (a content-addressed cache's entry,
    /// whose size and modification time others have already seen).
    ///
    /// The temporary is hard-linked to the destination (`link(2)` fails with `EEXIST` rather than
    /// replace, on NFS too), then removed. On a file system without hard links, the destination is
    /// checked, then the temporary renamed: there, two writers at the same instant can still replace.
    /// - Returns: `true` if this file is now the destination; `false` if the destination already
    ///   existed, in which case the temporary is left for the caller to ``discard()`` or ``commit()``.
    package func commitUnlessExists() throws(SessionError) -> Bool {
        flushTemporary()
        do {
            try FileSystem.link(temporaryPath, to: destination)
        } catch {
            if error == .fileExists { return false }
            if FileManager.default.fileExists(atPath: destination) { return false }
            try commit()
            return true
        }
        discard()
        flushDirectory()
        return true
    }

    /// Flushes the temporary to disk; a failure shows when it is renamed, or not at all.
    private func flushTemporary() {
        try? FileSystem.synchronize(fileAt: temporaryPath)
    }

    /// Flushes the destination's folder, so that the rename lasts.
    private func flushDirectory() {
        try? FileSystem.synchronize(folderAt: URL(fileURLWithPath: destination).deletingLastPathComponent().path)
    }

    /// Writes `data` to `destination` atomically.
    package static func write(_ data: Data, to destination: String) throws(SessionError) {
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
            throw SessionError(
                .cannotWrite,
                "Cannot write \(name): \(FileProblem.describe(error, path: destination))",
                underlyingError: error
            )
        }
        return file
    }

    /// Removes the temporary, leaving any earlier file at the destination untouched.
    package func discard() {
        Self.removeTemporary(temporaryPath)
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Stops tracking the temporary and leaves it where it is (a moved-aside folder that holds
    /// something render-session did not write, which must not be removed with it).
    func forget() {
        Self.registered.withLock { _ = $0.remove(temporaryPath) }
    }

    /// Removes every registered temporary; safe to call from any thread.
    package static func removeAllRegistered() {
        registered.withLock { paths in
            for path in paths { removeTemporary(path) }
            paths.removeAll()
        }
    }

    /// Removes temporaries for `destination` whose writing process no longer runs.
    package static func removeStaleTemporaries(for destination: String) {
        let url = URL(fileURLWithPath: destination)
        removeStaleTemporaries(in: url.deletingLastPathComponent().path, prefix: ".\(url.lastPathComponent).")
    }

    /// Removes every temporary in `directory` whose writing process no longer runs; returns how many.
    @discardableResult
    package static func removeStaleTemporaries(in directory: String, prefix: String = ".") -> Int {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return 0 }
        var removed = 0
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".partial") {
            // .NAME.PID-RANDOM-HOST.partial (HOST absent before shared folders): the process id
            // follows the last dot but one.
            let parts = name.dropLast(".partial".count).split(separator: ".")
            guard let fields = parts.last?.split(separator: "-"), let pid = Int32(fields[0]) else { continue }
            let path = (directory as NSString).appendingPathComponent(name)
            let stale: Bool
            if fields.count > 2, fields[2] != Self.hostTag {
                let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
                stale = modified.map { Date().timeIntervalSince($0) > 86_400 } ?? false
            } else {
                stale = pid != ProcessControl.identifier && ProcessControl.hasEnded(pid)
            }
            if stale, removeTemporary(path) { removed += 1 }
        }
        return removed
    }

    /// Removes the temporary at `path`: a file, or a folder being built (a queue's) with all it holds.
    @discardableResult
    private static func removeTemporary(_ path: String) -> Bool {
        do {
            try FileSystem.removeFile(path)
            return true
        } catch {
            guard error == .isDirectory else { return false }
            return (try? FileManager.default.removeItem(atPath: path)) != nil
        }
    }

    private static let registered = Locked<Set<String>>([])

    /// This host's mark in temporaries' names: the FNV-1a hash of its name, 8 hex digits.
    static let hostTag: String = {
        var hash: UInt32 = 2_166_136_261
        for byte in ProcessControl.hostName { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
        return String(format: "%08x", hash)
    }()
}
