import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

@Suite("Batches in shards, and a cache shared by processes", .serialized)
struct ShardCommandTests {
    /// Six 20-second scripts made from the edge-case fixture, `calm-1` … `calm-6`, in `scripts/`.
    /// Fixtures/cache has every clip, so nothing is synthesized. With 3 shards, shard 1 takes calm-1,
    /// calm-3 and calm-4, shard 2 calm-2, shard 3 calm-5 and calm-6.
    static func library() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        let template = try String(contentsOf: Repository.script("edge-cases"), encoding: .utf8)
        for index in 1...6 {
            let text = template.replacingOccurrences(of: "\"edge-cases\"", with: "\"calm-\(index)\"")
            try Data(text.utf8).write(to: URL(fileURLWithPath: folder.path("scripts/calm-\(index).json")))
        }
        return folder
    }

    static func batch(_ folder: TemporaryFolder, into output: String, _ extra: [String] = []) -> [String] {
        ["batch", folder.path("scripts"), "-o", folder.path(output), "--cache", "Fixtures/cache", "--offline"] + extra
    }

    /// Every file in `path` (the outputs are flat), by name, with its bytes.
    static func files(in path: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: path).appendingPathComponent(name))
        }
        return files
    }

    /// Expects the folders to hold the same names and, under each, the same bytes.
    static func expectSame(
        _ path: String,
        as reference: String,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        throws
    {
        let (made, expected) = (try files(in: path), try files(in: reference))
        #expect(made.keys.sorted() == expected.keys.sorted(), sourceLocation: sourceLocation)
        for (name, bytes) in expected where made[name] != bytes {
            Issue.record("\(name) differs from the unsharded batch's", sourceLocation: sourceLocation)
        }
    }

    /// The names of the sessions shard `index` of 3 takes, as the library assigns them.
    static func names(ofShard index: Int) -> [String] {
        (1...6).map { "calm-\($0)" }.filter { BatchShard(index: index, count: 3)!.contains($0) }
    }

    @Test("Three `batch --shard i/3` processes started together make the folder one batch makes, byte for byte")
    func threeShardsAtOnce() async throws {
        let folder = try Self.library()
        #expect(
            (1...3).map(Self.names(ofShard:)) == [["calm-1", "calm-3", "calm-4"], ["calm-2"], ["calm-5", "calm-6"]]
        )
        let single = try await renderSession(Self.batch(folder, into: "single"))
        #expect(single.status == 0, "\(single.standardError)")

        // The three shards run at once, as three machines would, whatever else is running.
        async let first = renderSession(Self.batch(folder, into: "sharded", ["--shard", "1/3"]), waitsForTurn: false)
        async let second = renderSession(Self.batch(folder, into: "sharded", ["--shard", "2/3"]), waitsForTurn: false)
        async let third = renderSession(Self.batch(folder, into: "sharded", ["--shard", "3/3"]), waitsForTurn: false)
        let results = try await [first, second, third]
        for (index, result) in results.enumerated() {
            let count = Self.names(ofShard: index + 1).count
            #expect(result.status == 0)
            #expect(result.standardOutput.isEmpty)
            // A line per session as it ends, of this shard's sessions only, then the summary.
            let lines = result.standardError.split(separator: "\n").map(String.init)
            #expect(
                lines.dropLast().map { String($0.prefix { $0 != ":" }) }.sorted()
                    == Self.names(ofShard: index + 1).sorted()
                    && lines.dropLast().allSatisfy { $0.contains(": rendered ") && $0.hasSuffix("/\(count))") },
                "\(lines)"
            )
            #expect(
                lines.last?.hasPrefix(
                    "Batch of \(count) of 6 sessions (shard \(index + 1)/3) into \(folder.path("sharded")): \(count) rendered, 0 up to date, 0 failed"
                ) == true,
                "\(result.standardError)"
            )
        }
        try Self.expectSame(folder.path("sharded"), as: folder.path("single"))

        let again = try await renderSession(Self.batch(folder, into: "sharded", ["--shard", "1/3"]))
        #expect(
            again.lastErrorLine.hasPrefix(
                "Batch of 3 of 6 sessions (shard 1/3) into \(folder.path("sharded")): 0 rendered, 3 up to date, 0 failed"
            )
        )
        let whole = try await renderSession(Self.batch(folder, into: "sharded"))
        #expect(
            whole.lastErrorLine.hasPrefix(
                "Batch of 6 sessions into \(folder.path("sharded")): 0 rendered, 6 up to date, 0 failed"
            ),
            "the merged manifest serves an unsharded batch"
        )
    }

    @Test("Shards with --preview end with the index one batch makes: every shard's sessions listed, byte for byte")
    func shardedPreviews() async throws {
        let folder = try Self.library()
        let single = try await renderSession(Self.batch(folder, into: "single", ["--preview"]))
        #expect(single.status == 0, "\(single.standardError)")
        for shard in ["2/3", "3/3", "1/3"] {
            let result = try await renderSession(Self.batch(folder, into: "sharded", ["--shard", shard, "--preview"]))
            #expect(result.status == 0, "\(shard): \(result.standardError)")
        }
        let index = try String(contentsOfFile: folder.path("sharded/index.html"), encoding: .utf8)
        for index in 1...6 {
            #expect(
                try String(contentsOfFile: folder.path("sharded/index.html"), encoding: .utf8)
                    .contains("data-session=\"calm-\(index)\""),
                "calm-\(index) is listed"
            )
        }
        #expect(index.components(separatedBy: "<tr class=").count - 1 == 6)
        try Self.expectSame(folder.path("sharded"), as: folder.path("single"))
    }

    @Test("A shard killed with SIGKILL and run again completes the set, with no temporary left")
    func killedShard() async throws {
        // Shard 1 renders its 3 sessions one at a time; the kill lands after the first.
        let folder = try Self.library()
        let single = try await renderSession(Self.batch(folder, into: "single"))
        #expect(single.status == 0, "\(single.standardError)")

        let arguments = Self.batch(folder, into: "sharded", ["--shard", "1/3", "--jobs", "1"])
        let manifest = folder.path("sharded/manifest.json")
        let (killed, _) = try await renderSession(arguments) { process in
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline, !FileManager.default.fileExists(atPath: manifest) {
                try await Task.sleep(for: .milliseconds(5))
            }
            try process.send(SIGKILL)
        }
        #expect(killed.termination == .signalled(SIGKILL))
        let recorded = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [String: Any]
        )
        let done = (recorded["outputs"] as? [String: Any])?.count ?? 0
        #expect((1...2).contains(done), "killed after \(done) of its 3 sessions")

        for shard in ["2/3", "3/3"] {
            #expect(try await renderSession(Self.batch(folder, into: "sharded", ["--shard", shard])).status == 0)
        }
        let rerun = try await renderSession(arguments)
        #expect(rerun.status == 0)
        // A line per session (as many up to date as were done before the kill), then the summary.
        let lines = rerun.standardError.split(separator: "\n").map(String.init)
        #expect(lines.count { $0.contains(": up to date (") } == done, "\(lines)")
        #expect(lines.count { $0.contains(": rendered ") } == 3 - done, "\(lines)")
        #expect(
            lines.last?.hasPrefix(
                "Batch of 3 of 6 sessions (shard 1/3) into \(folder.path("sharded")): \(3 - done) rendered, \(done) up to date, 0 failed"
            ) == true,
            "\(rerun.standardError)"
        )
        try Self.expectSame(folder.path("sharded"), as: folder.path("single"))
    }

    @Test("--shard out of range is a usage error; --shard auto reads JOB_COMPLETION_INDEX, or names what is missing")
    func shardArguments() async throws {
        let folder = try Self.library()
        let wrong = try await renderSession(Self.batch(folder, into: "out", ["--shard", "4/3"]))
        #expect(wrong.status == 64)
        // Parsed into a share when the arguments are, so worded as every option's bad value is.
        #expect(
            wrong.standardError.hasPrefix(
                "error: The value '4/3' is invalid for '--shard <I/N|auto>': the shard is 1 to 3\n"
            ),
            "\(wrong.standardError)"
        )
        let notAShard = try await renderSession(Self.batch(folder, into: "out", ["--shard", "two"]))
        #expect(notAShard.status == 64)
        #expect(
            notAShard.standardError.hasPrefix(
                "error: The value 'two' is invalid for '--shard <I/N|auto>': a shard is I/N, such as 2/3, or auto\n"
            ),
            "\(notAShard.standardError)"
        )
        let named = try await renderSession(Self.batch(folder, into: "out", ["--shard", "1/3", "--shards", "3"]))
        #expect(named.status == 64)
        #expect(
            named.standardError.hasPrefix("error: --shards goes with --shard auto; --shard 1/3 names its count\n"),
            "\(named.standardError)"
        )
        let stray = try await renderSession(Self.batch(folder, into: "out", ["--shards", "3"]))
        #expect(stray.status == 64)
        #expect(stray.standardError.hasPrefix("error: --shards goes with --shard auto\n"), "\(stray.standardError)")

        var environment = ProcessInfo.processInfo.environment
        environment[BatchShard.indexVariable] = nil
        environment[BatchShard.countVariable] = nil
        let missing = try await renderSession(
            Self.batch(folder, into: "out", ["--shard", "auto"]),
            environment: environment
        )
        #expect(missing.status == 65)
        #expect(
            missing.standardError
                == "error: --shard auto needs --shards N or RENDER_SESSION_SHARDS, which is not set\n"
        )
        environment[BatchShard.indexVariable] = "1"
        let auto = try await renderSession(
            Self.batch(folder, into: "out", ["--shard", "auto", "--shards", "3"]),
            environment: environment
        )
        #expect(auto.status == 0)
        #expect(
            auto.lastErrorLine.hasPrefix(
                "Batch of 1 of 6 sessions (shard 2/3) into \(folder.path("out")): 1 rendered, "
            )
        )
        environment[BatchShard.countVariable] = "3"
        environment[BatchShard.indexVariable] = "2"
        let fromVariables = try await renderSession(
            Self.batch(folder, into: "out", ["--shard", "auto"]),
            environment: environment
        )
        #expect(
            fromVariables.lastErrorLine.hasPrefix(
                "Batch of 2 of 6 sessions (shard 3/3) into \(folder.path("out")): 2 rendered, "
            )
        )
    }

    @Test("Several `prepare` processes at once into one empty cache leave every entry whole, as one process does")
    func concurrentPrepare() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        let texts = ["Breathe in.", "Breathe out.", "Rest here.", "Let the shoulders drop.", "Notice the feet."]
        let script: [String: Any] = [
            "id": "short", "category": "tests", "title": "Short", "subtitle": "Five clips", "orderIndex": 0,
            "durationSeconds": 30,
            "segments": texts.enumerated().map { index, text in
                ["id": "s\(index)", "startSeconds": index * 5, "phase": "opening", "text": text] as [String: Any]
            },
            "interjections": [] as [Any],
        ]
        try JSONSerialization.data(withJSONObject: script).write(
            to: URL(fileURLWithPath: folder.path("scripts/short.json"))
        )
        let one = try await renderSession(["prepare", folder.path("scripts"), "--cache", folder.path("one")])
        #expect(one.status == 0, "\(one.standardError)")

        let arguments = ["prepare", folder.path("scripts"), "--cache", folder.path("shared"), "--jobs", "1"]
        // Three processes at once on one cache, whatever else is running.
        async let a = renderSession(arguments, waitsForTurn: false)
        async let b = renderSession(arguments, waitsForTurn: false)
        async let c = renderSession(arguments, waitsForTurn: false)
        let results = try await [a, b, c]
        #expect(results.allSatisfy { $0.status == 0 }, "\(results.map(\.standardError))")
        let shared = try Self.files(in: folder.path("shared"))
        #expect(shared.keys.filter { $0.hasSuffix(".mp3") }.count == texts.count)
        #expect(!shared.keys.contains { $0.hasSuffix(".partial") }, "no temporary left: \(shared.keys.sorted())")
        #expect(shared.keys.sorted() == (try Self.files(in: folder.path("one"))).keys.sorted(), "the same entries")
        // Whole: every clip decodes, and its loudness sidecar describes its size and frames.
        // (Not byte for byte the one process's: eSpeak NG's output for a text depends on what the
        // process spoke before it, so three processes that split the texts differently can make a
        // clip a few samples longer or shorter. Each is whole either way.)
        for name in shared.keys where name.hasSuffix(".mp3") {
            let bytes = try #require(shared[name])
            let measured = try AudioFileDecoder.measure(path: folder.path("shared/\(name)"))
            #expect(measured.frameCount > .zero)
            let sidecarName = String(name.dropLast(".mp3".count)) + ".loudness.json"
            let sidecarData = try #require(shared[sidecarName], "\(name) has its sidecar")
            let sidecar = try #require(try JSONSerialization.jsonObject(with: sidecarData) as? [String: Any])
            #expect((sidecar["bytes"] as? NSNumber)?.intValue == bytes.count, "\(sidecarName)")
            #expect((sidecar["frames"] as? NSNumber)?.int64Value == measured.frameCount.count, "\(sidecarName)")
        }
    }
}
