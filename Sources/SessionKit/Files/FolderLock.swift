internal import Foundation

/// An exclusive lock on a folder, or on one part of it, held by one process at a time and released
/// when the value is released or the process ends, however it ends.
///
/// The locks are byte ranges of `.render-session.lock` in the folder (``FileRangeLock``, which
/// hosts sharing the folder over NFSv4 respect too): byte 0 guards short read–modify–writes of a
/// shared file (the batch manifest); the whole folder is bytes 1 onwards, and each shard of a batch
/// owns one byte among them. So two batches of the same shard take turns, an unsharded batch takes
/// turns with every shard, and different shards run at once.
package final class FolderLock {
    /// What a lock covers.
    package enum Part: Sendable, Equatable {
        /// The whole folder.
        case whole
        /// One shard's share of a batch into the folder.
        case shard(BatchShard)
        /// A short read–modify–write of a shared file in the folder.
        case update

        var range: FileRangeLock.Range {
            switch self {
            case .update: FileRangeLock.Range(start: 0, length: 1)
            case .whole: FileRangeLock.Range(start: 1, length: 0)
            case .shard(let shard):
                // A byte of its own for every (index, count): index ≤ maximumCount < 1024.
                FileRangeLock.Range(start: 1 + Int64(shard.count) * 1_024 + Int64(shard.index), length: 1)
            }
        }
    }

    /// The lock file's name in the folder.
    static let fileName = ".render-session.lock"

    private let file: FileRangeLock

    /// Takes the lock on `part` of `folder`, first calling `waiting` if another process holds it,
    /// then waiting.
    package init(folder: String, part: Part = .whole, waiting: () -> Void) throws(SessionError) {
        file = try FileRangeLock(path: (folder as NSString).appendingPathComponent(Self.fileName))
        try file.lock(part.range, waiting: waiting)
    }
}
