import Foundation
import SessionTimeline
import Testing

@testable import SessionKit

@Suite("Sharding a batch")
struct BatchShardTests {
    @Test(
        "--shard I/N is 1-based, 1 ≤ I ≤ N ≤ 1000",
        arguments: [("1/3", 1, 3), ("3/3", 3, 3), ("1/1", 1, 1), ("1000/1000", 1_000, 1_000), ("07/10", 7, 10)]
    )
    func parse(text: String, index: Int, count: Int) throws {
        let shard = try BatchShard.parse(text)
        #expect(shard.index == index && shard.count == count)
        #expect(shard.description == "\(index)/\(count)")
    }

    @Test(
        "A shard out of range or not I/N is one line naming the rule",
        arguments: [
            ("0/3", "--shard 0/3: the shard is 1 to 3"),
            ("4/3", "--shard 4/3: the shard is 1 to 3"),
            ("1/0", "--shard 1/0: the number of shards is 1 to 1000"),
            ("1/1001", "--shard 1/1001: the number of shards is 1 to 1000"),
            ("2", "--shard 2: a shard is I/N, such as 2/3, or auto"),
            ("a/b", "--shard a/b: a shard is I/N, such as 2/3, or auto"),
            ("1/3/4", "--shard 1/3/4: a shard is I/N, such as 2/3, or auto"),
            ("/3", "--shard /3: a shard is I/N, such as 2/3, or auto"),
        ]
    )
    func parseErrors(text: String, message: String) {
        #expect(throws: SessionError.self) { try BatchShard.parse(text) }
        #expect(flagLines { () throws(SessionError) in try BatchShard.parse(text) } == [message])
    }

    @Test("--shard auto: JOB_COMPLETION_INDEX k is shard k + 1, of --shards, else of RENDER_SESSION_SHARDS")
    func environment() throws {
        #expect(
            try BatchShard.fromEnvironment(["JOB_COMPLETION_INDEX": "0", "RENDER_SESSION_SHARDS": "3"])
                == BatchShard(index: 1, count: 3)
        )
        #expect(
            try BatchShard.fromEnvironment(["JOB_COMPLETION_INDEX": "2"], count: 3) == BatchShard(index: 3, count: 3)
        )
        #expect(
            try BatchShard.fromEnvironment(["JOB_COMPLETION_INDEX": "3", "RENDER_SESSION_SHARDS": "3"], count: 5)
                == BatchShard(index: 4, count: 5),
            "--shards wins over the variable"
        )
    }

    @Test(
        "--shard auto without its variables, or with wrong ones, is one line naming the variable",
        arguments: [
            ([:], "--shard auto needs --shards N or RENDER_SESSION_SHARDS, which is not set"),
            (["RENDER_SESSION_SHARDS": "3"], "--shard auto needs JOB_COMPLETION_INDEX, which is not set"),
            (
                ["RENDER_SESSION_SHARDS": "0", "JOB_COMPLETION_INDEX": "0"],
                "RENDER_SESSION_SHARDS=0: the number of shards is 1 to 1000"
            ),
            (
                ["RENDER_SESSION_SHARDS": "three", "JOB_COMPLETION_INDEX": "0"],
                "RENDER_SESSION_SHARDS=three: the number of shards is 1 to 1000"
            ),
            (
                ["RENDER_SESSION_SHARDS": "3", "JOB_COMPLETION_INDEX": "3"],
                "JOB_COMPLETION_INDEX=3: the completion index is 0 to 2 for 3 shards"
            ),
            (
                ["RENDER_SESSION_SHARDS": "3", "JOB_COMPLETION_INDEX": "-1"],
                "JOB_COMPLETION_INDEX=-1: the completion index is 0 to 2 for 3 shards"
            ),
        ]
    )
    func environmentErrors(environment: [String: String], message: String) {
        #expect(throws: SessionError.self) { try BatchShard.fromEnvironment(environment) }
        #expect(flagLines { () throws(SessionError) in try BatchShard.fromEnvironment(environment) } == [message])
    }

    @Test("Jump consistent hash matches Lamping & Veach's reference code")
    func jumpHash() {
        // Expected values from the paper's C++ function, run as Python with 64-bit wrapping.
        let keys: [UInt64] = [0, 1, .max, 0x0123_4567_89ab_cdef]
        #expect(keys.map { BatchShard.jumpConsistentHash($0, buckets: 1_000) } == [0, 549, 313, 194])
        #expect(keys.map { BatchShard.jumpConsistentHash($0, buckets: 7) } == [0, 6, 2, 0])
        #expect(keys.map { BatchShard.jumpConsistentHash($0, buckets: 1) } == [0, 0, 0, 0])
    }

    @Test("The 14 Reactivity meditations split into 3 shards by their names' hashes")
    func reactivityShards() async throws {
        // Expected values from Python: jump hash of the big-endian first 8 bytes of hashlib.sha256(name).
        let names = (1...14).map { String(format: "reactivity-%02d", $0) }
        let shards = try (1...3).map { index in
            let shard = try #require(BatchShard(index: index, count: 3))
            return names.filter(shard.contains).map { String($0.suffix(2)) }
        }
        #expect(
            shards == [["02", "06", "09", "10", "14"], ["04", "05", "12", "13"], ["01", "03", "07", "08", "11"]]
        )
    }

    @Test("Every name is in exactly one shard; going from 3 to 4 shards moves only names into the new one")
    func stability() throws {
        let names = (0..<1_000).map { "s-\($0)" }
        let three = names.map { BatchShard.bucket(of: $0, count: 3) }
        let four = names.map { BatchShard.bucket(of: $0, count: 4) }
        for name in names.prefix(50) {
            #expect((1...3).filter { BatchShard(index: $0, count: 3)!.contains(name) }.count == 1)
        }
        #expect((0..<3).map { bucket in three.filter { $0 == bucket }.count } == [304, 342, 354])
        let moved = zip(three, four).filter { $0 != $1 }
        #expect(moved.count == 261, "about a quarter")
        #expect(moved.allSatisfy { $0.1 == 3 }, "every moved name went to the new shard")
    }
}

/// The lines of the `invalidSetting` error `body` throws, settings named by the command's flags
/// (the library names them in words; docs/cli.md lists the flags).
private func flagLines(_ body: () throws(SessionError) -> BatchShard) -> [String] {
    do {
        _ = try body()
        return []
    } catch {
        guard error.code == .invalidSetting else { return ["unexpected code \(error.code)"] }
        return error.lines { setting in setting == .shards ? "--shards N" : "--\(setting.rawValue)" }
    }
}
