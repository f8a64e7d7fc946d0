internal import Crypto
internal import Foundation
internal import SessionTimeline

/// One of `count` shares of a batch, numbered from 1 like `jest --shard 2/3`: the sessions whose
/// output name hashes into it.
///
/// A session's share is the jump consistent hash (Lamping & Veach, 2014) of the first 8 bytes,
/// big-endian, of the SHA-256 of its output name (`reactivity-03-v2`) into `count` buckets. The
/// name alone decides, so every machine agrees without talking to the others, adding a script moves
/// no other session, and changing the count from N to N + 1 moves only about 1/(N + 1) of them.
package struct BatchShard: Sendable, Equatable, CustomStringConvertible {
    /// Which share, 1 through ``count``.
    package let index: Int
    /// How many shares the batch is cut into.
    package let count: Int

    /// The most shares a batch can be cut into.
    package static let maximumCount = 1_000

    /// The environment variable a Kubernetes Indexed Job sets to each pod's index, from 0.
    package static let indexVariable = "JOB_COMPLETION_INDEX"
    /// The environment variable that gives the number of shares when `--shards` does not.
    package static let countVariable = "RENDER_SESSION_SHARDS"

    /// The share `index` of `count`; `nil` unless 1 ≤ index ≤ count ≤ ``maximumCount``.
    package init?(index: Int, count: Int) {
        guard (1...Self.maximumCount).contains(count), (1...count).contains(index) else { return nil }
        self.index = index
        self.count = count
    }

    /// `2/3`.
    package var description: String { "\(index)/\(count)" }

    /// Reads `I/N` (`--shard 2/3`).
    /// - Throws: ``SessionError`` (`invalidSetting`) naming the rule the text breaks.
    package static func parse(_ text: String) throws(SessionError) -> BatchShard {
        switch read(text) {
        case .success(let shard): return shard
        case .failure(let rule):
            throw SessionError(.invalidSetting, "\(SettingReference.shard.marker) \(text): \(rule)")
        }
    }

    /// Reads `I/N`, or names the rule the text breaks: what a command line parses its argument with.
    package static func read(_ text: String) -> Result<BatchShard, Rule> {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            return .failure(Rule("a shard is I/N, such as 2/3, or auto"))
        }
        guard (1...maximumCount).contains(count) else {
            return .failure(Rule("the number of shards is 1 to \(maximumCount)"))
        }
        guard let shard = BatchShard(index: index, count: count) else {
            return .failure(Rule("the shard is 1 to \(count)"))
        }
        return .success(shard)
    }

    /// The rule a shard's text breaks, as a phrase: `the shard is 1 to 3`.
    package struct Rule: Error, Equatable, CustomStringConvertible {
        package let description: String
        init(_ description: String) { self.description = description }
    }

    /// The share a Kubernetes Indexed Job's pod renders: `JOB_COMPLETION_INDEX` k (from 0) is shard
    /// k + 1, of `count` shares, else of `RENDER_SESSION_SHARDS`.
    /// - Throws: ``SessionError`` (`invalidSetting`) naming the variable that is missing or wrong.
    package static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment,
        count: Int? = nil
    ) throws(SessionError) -> BatchShard {
        let shards: Int
        if let count {
            shards = count
        } else {
            guard let text = environment[countVariable] else {
                throw SessionError(
                    .invalidSetting,
                    "\(SettingReference.shard.marker) auto needs \(SettingReference.shards.marker) or \(countVariable), which is not set"
                )
            }
            guard let value = Int(text), (1...maximumCount).contains(value) else {
                throw SessionError(
                    .invalidSetting,
                    "\(countVariable)=\(text): the number of shards is 1 to \(maximumCount)"
                )
            }
            shards = value
        }
        guard let text = environment[indexVariable] else {
            throw SessionError(
                .invalidSetting,
                "\(SettingReference.shard.marker) auto needs \(indexVariable), which is not set"
            )
        }
        guard let value = Int(text), let shard = BatchShard(index: value + 1, count: shards) else {
            throw SessionError(
                .invalidSetting,
                "\(indexVariable)=\(text): the completion index is 0 to \(shards - 1) for \(shards) shards"
            )
        }
        return shard
    }

    /// Whether the session whose output is named `name` belongs to this share.
    package func contains(_ name: String) -> Bool {
        Self.bucket(of: name, count: count) == index - 1
    }

    /// The bucket, 0 to `count − 1`, that `name` hashes into.
    static func bucket(of name: String, count: Int) -> Int {
        let digest = Array(SHA256.hash(data: Data(name.utf8)))
        let key = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return jumpConsistentHash(key, buckets: count)
    }

    /// Lamping & Veach's jump consistent hash: `key` into one of `buckets` buckets, such that going
    /// from n to n + 1 buckets moves a key only into the new bucket, with probability 1/(n + 1).
    static func jumpConsistentHash(_ key: UInt64, buckets: Int) -> Int {
        var key = key
        var bucket: Int64 = -1
        var next: Int64 = 0
        while next < Int64(buckets) {
            bucket = next
            key = key &* 2_862_933_555_777_941_757 &+ 1
            next = Int64(Double(bucket + 1) * (Double(Int64(1) << 31) / Double((key >> 33) + 1)))
        }
        return Int(bucket)
    }
}
