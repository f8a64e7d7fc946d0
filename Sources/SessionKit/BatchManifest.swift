internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// `manifest.json` in a batch's output folder: per output name, the inputs hash and seed it was
/// rendered with.
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
    }

    private struct File: Codable {
        var version = 1
        var outputs: [String: Record] = [:]
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

    /// The manifest at `path`, if it is one this version reads.
    private static func read(_ path: String) -> File? {
        guard let data = FileManager.default.contents(atPath: path),
            let decoded = try? JSONDecoder().decode(File.self, from: data), decoded.version == 1
        else { return nil }
        return decoded
    }

    func hash(for name: String) -> String? {
        file.withLock { $0.outputs[name]?.inputsHash }
    }

    /// Records an output: merges it into the manifest on disk, under the update lock, atomically.
    func record(_ name: String, hash: String, seed: UInt64, file audioFile: String, format: AudioFileFormat) {
        let record = Record(inputsHash: hash, seed: seed, file: audioFile, format: format.rawValue)
        file.withLock { file in
            lock.withLock { lock in
                // A manifest that cannot be written only costs re-rendering next time.
                try? lock?.withLock(FolderLock.Part.update.range) { () throws(SessionError) in
                    if let current = Self.read(path) { file = current }
                    file.outputs[name] = record
                    try AtomicFile.write(CanonicalJSON.encode(file), to: path)
                }
            }
        }
    }
}
