internal import Crypto
internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// `manifest.json` in a batch's output folder: per output, by its audio file's name (`x.mp3`),
/// the inputs hash and seed it was rendered with, and the size and SHA-256 of each file written.
/// Keyed by file, not by session, so that batches of one session in two formats into one folder
/// (`x.mp3` and `x.m4a`, each with its own timeline) keep a record each and are up to date each.
///
/// Several processes may record into one manifest at once (the shards of a batch, on one host or
/// several sharing the folder). Each record is a read–modify–write under the folder's update lock
/// (``FolderLock/Part/update``), held only for that: the manifest is read again from disk, the
/// record merged in, and the whole written atomically. So no process loses another's records, and
/// the file is always complete. Keys are sorted, so the same records are the same bytes, whichever
/// process wrote them in whichever order.
final class BatchManifest: Sendable {
    struct Record: Codable, Equatable {
        let inputsHash: String
        let seed: UInt64
        /// The audio file's name and format (`mp3`); absent in manifests written before formats.
        var file: String?
        var format: String?
        /// Each output file (audio, timeline) by name, as written; absent in manifests written
        /// before they were checked, whose sessions are then rendered again.
        var files: [String: Stamp]?
        /// How many of the session's clips start after their planned start, and the latest, in
        /// seconds; absent in manifests written before lateness was recorded.
        var lateClips: Int?
        var worstLateSeconds: Double?
    }

    /// An output file's size and SHA-256, taken when it was written.
    /// A file's size and SHA-256, as a timeline records the file its render wrote.
    typealias Stamp = AudioFileStamp

    private struct File: Codable {
        var version = 1
        var outputs: [String: Record] = [:]
        /// Each session's row of the preview index, by name, from the last run that made previews
        /// of it: what every shard's index is built from, so that the index lists the sessions
        /// of every shard, not only the last one's. Absent when no previews were made.
        var previews: [String: BatchPreview.Row]?
    }

    private let path: String
    /// What this process knows of the manifest; the lock file is used only while `file` is held.
    private let file: Locked<File>
    private let lock: Locked<FileRangeLock?>

    init(folder: String, warn: @Sendable (String) -> Void) {
        path = (folder as NSString).appendingPathComponent("manifest.json")
        var loaded = File()
        if FileManager.default.fileExists(atPath: path) {
            if let decoded = Self.read(path) {
                loaded = decoded
            } else {
                warn("\(path) is not a manifest this version reads; every session will be rendered")
            }
        }
        file = Locked(loaded)
        // Without a lock file (a folder that cannot be written) records fail to be written anyway.
        lock = Locked(try? FileRangeLock(path: (folder as NSString).appendingPathComponent(FolderLock.fileName)))
    }

    /// The largest manifest read: a session's record is about 300 bytes, so 64 MiB holds some
    /// 200,000 sessions. A larger file (a planted sparse one) is not read.
    static let maximumBytes = 64 << 20

    /// The manifest at `path`, if it is a regular file of at most ``maximumBytes`` this version
    /// reads (a FIFO is not waited on).
    private static func read(_ path: String) -> File? {
        guard let data = try? AudioFileDecoder.contentsOfRegularFile(path, noun: "a manifest", limit: maximumBytes),
            var decoded = try? JSONDecoder().decode(File.self, from: data), decoded.version == 1
        else { return nil }
        // Manifests written before records were keyed by file kept one a session, by its name:
        // each is moved under the file it names, so those outputs stay up to date.
        for (key, record) in decoded.outputs {
            guard let file = record.file, file != key, decoded.outputs[file] == nil else { continue }
            decoded.outputs[key] = nil
            decoded.outputs[file] = record
        }
        return decoded
    }

    /// The inputs hash recorded for the output whose audio file is named `name` (`x.mp3`).
    func hash(for name: String) -> String? {
        file.withLock { $0.outputs[name]?.inputsHash }
    }

    /// The lateness recorded for the output `name` when it was rendered; `nil` when none was recorded.
    func lateness(of name: String) -> BatchLateness? {
        file.withLock { file in
            file.outputs[name].flatMap { record in
                record.lateClips.map { BatchLateness(lateClips: $0, worstSeconds: record.worstLateSeconds) }
            }
        }
    }

    /// What has become of the files of the output `name` (`outputs`, their paths) since they were
    /// recorded, in a few words, or `nil` if each is still the file written: the same size and SHA-256.
    func change(of name: String, outputs: [String]) -> String? {
        guard let recorded = file.withLock({ $0.outputs[name]?.files }) else {
            return "the manifest records no size and digest of its files"
        }
        for path in outputs {
            let fileName = (path as NSString).lastPathComponent
            guard let expected = recorded[fileName] else { return "the manifest records no digest of \(fileName)" }
            switch Self.stamp(path) {
            case .failure(let problem): return "\(path): \(problem.reason)"
            case .success(let found) where found.bytes != expected.bytes:
                return "\(path) is \(found.bytes) bytes, not the \(expected.bytes) written"
            case .success(let found) where found.sha256 != expected.sha256:
                return "\(path) is not the file written (its SHA-256 differs)"
            case .success: continue
            }
        }
        return nil
    }

    /// Why a stamp could not be taken; printed as its reason (`no such file`), never as a Swift value.
    struct Unreadable: Error, CustomStringConvertible {
        let reason: String

        var description: String { reason }
    }

    /// The size and SHA-256 of the regular file at `path`, read without waiting on a FIFO, and
    /// unless `followingLinks`, without following a link; with `inside`, only of a file that lies
    /// inside that folder once open (``FileDescriptor/placeOutside(openedThrough:folder:)``).
    static func stamp(
        _ path: String,
        followingLinks: Bool = false,
        inside folder: String? = nil
    ) -> Result<Stamp, Unreadable> {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(
                path,
                .readOnly,
                options: followingLinks ? .nonBlocking : [.nonBlocking, .noFollow]
            )
        } catch {
            return .failure(
                Unreadable(reason: error == .tooManySymbolicLinkLevels ? "it is a symbolic link" : error.reason())
            )
        }
        let kind: FileKind
        do {
            kind = try file.kind()
        } catch {
            return .failure(Unreadable(reason: error.reason()))
        }
        guard kind == .regularFile else {
            return .failure(Unreadable(reason: "it is not a regular file"))
        }
        if let folder, let problem = file.placeOutside(openedThrough: path, folder: folder) {
            return .failure(Unreadable(reason: problem))
        }
        var hasher = SHA256()
        var total: Int64 = 0
        do {
            try file.forEachBlock(size: 1 << 20) { (block) throws(Never) in
                total += Int64(block.count)
                hasher.update(data: block)
            }
        } catch {
            switch error {
            case .reading(let error): return .failure(Unreadable(reason: error.reason()))
            }
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return .success(Stamp(bytes: total, sha256: digest))
    }

    /// Merges `rows` (this run's sessions' preview rows) into the manifest's, under the update
    /// lock, and hands every row the manifest now holds to `write` while the lock is still held:
    /// so an index written there lists every session any shard made a preview of, and two shards
    /// finishing at once do not write over each other's rows. Without a lock file (a folder that
    /// cannot be written), `write` gets `rows` alone.
    func recordPreviews(
        _ rows: [BatchPreview.Row],
        then write: ([String: BatchPreview.Row]) throws(SessionError) -> Void
    ) throws(SessionError) {
        let mine = Dictionary(rows.map { ($0.name, $0) }) { $1 }
        try file.withLock { (file) throws(SessionError) in
            try lock.withLock { (lock) throws(SessionError) in
                guard let lock else { return try write(mine) }
                try lock.withLock(FolderLock.Part.update.range) { () throws(SessionError) in
                    if let current = Self.read(path) { file = current }
                    file.previews = (file.previews ?? [:]).merging(mine) { $1 }
                    // A manifest that cannot be written only costs the other shards' rows next time.
                    try? AtomicFile.write(CanonicalJSON.encode(file), to: path)
                    try write(file.previews ?? mine)
                }
            }
        }
    }

    /// Records an output, by its audio file's name `audioFile`: merges it into the manifest on
    /// disk, under the update lock, atomically, with the size and SHA-256 of each of its files
    /// (`outputs`, their paths) as they are now. `known` are stamps already taken, by path: the
    /// render stamps its audio file for the timeline (``Timeline/audioFile``), and a batch of long
    /// sessions should not read and hash each one a second time.
    func record(
        hash: String,
        seed: UInt64,
        file audioFile: String,
        format: AudioFileFormat,
        outputs: [String],
        known: [String: Stamp] = [:],
        lateness: BatchLateness
    ) {
        var files: [String: Stamp] = [:]
        for path in outputs {
            if let stamp = known[path] {
                files[(path as NSString).lastPathComponent] = stamp
                continue
            }
            // A file that cannot be read back is not recorded: the next run renders the session again.
            guard case .success(let stamp) = Self.stamp(path) else { return }
            files[(path as NSString).lastPathComponent] = stamp
        }
        let record = Record(
            inputsHash: hash,
            seed: seed,
            file: audioFile,
            format: format.rawValue,
            files: files,
            lateClips: lateness.lateClips,
            worstLateSeconds: lateness.worstSeconds
        )
        file.withLock { file in
            lock.withLock { lock in
                // A manifest that cannot be written only costs re-rendering next time.
                try? lock?.withLock(FolderLock.Part.update.range) { () throws(SessionError) in
                    if let current = Self.read(path) { file = current }
                    file.outputs[audioFile] = record
                    try AtomicFile.write(CanonicalJSON.encode(file), to: path)
                }
            }
        }
    }
}
