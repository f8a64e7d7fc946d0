import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// A script shaped like the 10-minute fixture, repeated `blocks` times: long enough to interrupt.
func longScript(blocks: Int, id: String, in folder: TemporaryFolder) throws -> String {
    let data = try Data(contentsOf: Repository.script("ten-minute-session"))
    var script = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let segments = try #require(script["segments"] as? [[String: Any]])
    let windows = try #require(script["interjections"] as? [[String: Any]])
    script["id"] = id
    script["durationSeconds"] = 600 * blocks
    script["segments"] = (0..<blocks).flatMap { block in
        segments.map { segment in
            segment.merging([
                "id": "\(segment["id"]!)-\(block)",
                "startSeconds": (segment["startSeconds"] as! Double) + Double(600 * block),
            ]) { $1 }
        }
    }
    script["interjections"] = (0..<blocks).flatMap { block in
        windows.map { window in
            window.merging([
                "windowStartSeconds": (window["windowStartSeconds"] as! Double) + Double(600 * block),
                "windowEndSeconds": (window["windowEndSeconds"] as! Double) + Double(600 * block),
            ]) { $1 }
        }
    }
    let path = folder.path("\(id).json")
    try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: path))
    return path
}

@Suite("Faults: kills, interrupts, full disks, concurrent batches", .serialized, .tags(.concurrent))
struct FaultTests {
    @Test("A render killed with SIGKILL leaves the previous output intact; the next run leaves no temporary file")
    func killed() async throws {
        let folder = try TemporaryFolder()
        let script = try longScript(blocks: 30, id: "five-hours", in: folder)
        try Data("previous".utf8).write(to: URL(fileURLWithPath: folder.path("out.wav")))
        // Loudness off: the speech anchor's measuring passes over five hours would come before
        // the temporary file this test waits for.
        let arguments = [
            "render", script, "-o", folder.path("out.wav"), "--cache", "Fixtures/cache", "--seed", "1", "--offline",
            "--loudness", "off",
        ]
        // The timeline goes to a FIFO nobody reads: its open waits, after the audio's temporary
        // is written and before anything is committed, so the kill always comes mid-render. (A
        // kill timed by the clock lost the race: five hours of WAV take a second to write, and a
        // test's sleep on two busy cores can take longer.)
        let timeline = folder.path("timeline.fifo")
        guard mkfifo(timeline, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        let (killed, _) = try await renderSession(arguments + ["--timeline", timeline]) { process in
            let deadline = Date().addingTimeInterval(120)
            while Date() < deadline, !(try folder.contents().contains { $0.hasSuffix(".partial") }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try process.send(SIGKILL)
        }
        #expect(killed.termination == .signalled(SIGKILL))
        try FileManager.default.removeItem(atPath: timeline)
        #expect(try String(contentsOfFile: folder.path("out.wav"), encoding: .utf8) == "previous")
        #expect(
            try folder.contents().contains { $0.hasPrefix(".out.wav.") && $0.hasSuffix(".partial") },
            "the kill left its temporary"
        )

        let again = try await renderSession(arguments)
        #expect(again.status == 0)
        #expect(
            try folder.contents() == ["five-hours.json", "out.wav", "out.wav.timeline.json"],
            "the stale temporary is gone"
        )
    }

    @Test("SIGINT stops a render, removes its temporary and exits 130")
    func interruptedRender() async throws {
        let folder = try TemporaryFolder()
        let script = try longScript(blocks: 30, id: "five-hours", in: folder)
        // FLAC: four times as long to encode as WAV is to write, so the interrupt comes mid-render
        // even when this test's sleeps run late on busy cores.
        let (interrupted, _) = try await renderSession([
            "render", script, "-o", folder.path("out.flac"), "--cache", "Fixtures/cache", "--offline", "--loudness",
            "off",
        ]) { process in
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, !(try folder.contents().contains { $0.hasSuffix(".partial") }) {
                try await Task.sleep(for: .milliseconds(20))
            }
            try process.send(SIGINT)
        }
        #expect(interrupted.termination == .exited(130))
        #expect(try folder.contents() == ["five-hours.json"])
    }

    @Test("SIGINT during a batch keeps every finished session and its manifest entry; the next run resumes")
    func interruptedBatch() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        let scriptsFolder = try TemporaryFolder()
        for index in 1...6 {
            let path = try longScript(blocks: 6, id: "long-\(index)", in: scriptsFolder)
            try FileManager.default.copyItem(atPath: path, toPath: folder.path("scripts/long-\(index).json"))
        }
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
            "--jobs", "1",
        ]
        let (interrupted, _) = try await renderSession(arguments) { process in
            // Generous: under ThreadSanitizer an hour-long leveled session takes most of a minute.
            let deadline = Date().addingTimeInterval(300)
            while Date() < deadline, !FileManager.default.fileExists(atPath: folder.path("out/long-2.wav")) {
                try await Task.sleep(for: .milliseconds(10))
            }
            try process.send(SIGINT)
        }
        #expect(interrupted.termination == .exited(130))
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path("out"))
        #expect(!left.contains { $0.hasSuffix(".partial") }, "no temporaries: \(left)")
        let finished = left.filter { $0.hasSuffix(".wav") }.count
        #expect((2...5).contains(finished))
        let manifest = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: URL(fileURLWithPath: folder.path("out/manifest.json")))
            ) as? [String: Any]
        )
        #expect((manifest["outputs"] as? [String: Any])?.count == finished, "every finished session is in the manifest")

        let resumed = try await renderSession(arguments)
        #expect(resumed.status == 0)
        #expect(resumed.standardError.contains("\(6 - finished) rendered, \(finished) up to date, 0 failed"))
    }

    @Test("Two batches over one folder at once: the second waits, and both end with every output correct")
    func concurrentBatches() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Repository.script("ten-minute-session").path,
            toPath: folder.path("scripts/a.json")
        )
        try FileManager.default.copyItem(
            atPath: Repository.script("edge-cases").path,
            toPath: folder.path("scripts/b.json")
        )
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
        ]
        async let first = Task { try await renderSession(arguments) }.value
        async let second = Task { try await renderSession(arguments) }.value
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.status == 0 })
        let summaries = results.map(\.standardError)
        // The lock makes one render everything and the other find it done, whichever starts first.
        #expect(summaries.filter { $0.contains("2 rendered, 0 up to date") }.count == 1, "\(summaries)")
        #expect(summaries.filter { $0.contains("0 rendered, 2 up to date") }.count == 1, "\(summaries)")
        for name in ["ten-minute-session", "edge-cases"] {
            let timeline = try JSONDecoder().decode(
                Timeline.self,
                from: Data(contentsOf: URL(fileURLWithPath: folder.path("out/\(name).wav.timeline.json")))
            )
            #expect(
                try AudioFileDecoder.measure(path: folder.path("out/\(name).wav")).frameCount == timeline.totalFrames
            )
        }
        #expect(
            !(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).contains {
                $0.hasSuffix(".partial")
            })
        )
    }

    @Test("A full disk is a clear error and leaves the previous output intact")
    func fullDisk() async throws {
        let folder = try TemporaryFolder()
        let mountPoint = folder.path("small")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try await ChildProcess.run("/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint])
        guard mount.termination == .exited(0) else {
            // Known only now: root is not always enough (a container may refuse mounts).
            let reason = mount.standardErrorText.trimmingCharacters(in: .whitespacesAndNewlines)
            try Test.cancel(
                "cannot mount a small tmpfs here (it needs root): \(reason.isEmpty ? "mount \(mount.termination)" : reason)"
            )
        }
        // Waited for in place: it takes milliseconds, and a `defer` cannot `await`.
        defer { _ = HostileFilesTests.system("umount", [mountPoint]) }
        try Data("previous".utf8).write(to: URL(fileURLWithPath: mountPoint + "/out.wav"))
        let result = try await renderSession([
            "render", Repository.script("ten-minute-session").path, "-o", mountPoint + "/out.wav",
            "--cache", "Fixtures/cache", "--seed", "1", "--offline",
        ])
        #expect(result.status == 74)
        #expect(
            result.standardError.hasPrefix("error: Cannot write \(mountPoint)/out.wav: "),
            "the path given, not the hidden temporary file"
        )
        #expect(result.standardError.contains("No space left on device"), "\(result.standardError)")
        #expect(result.standardError.split(separator: "\n").count == 1)
        #expect(try String(contentsOfFile: mountPoint + "/out.wav", encoding: .utf8) == "previous")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mountPoint) == ["out.wav"])
    }

    @Test("An unusable cache folder is reported before any request")
    func unusableCache() async throws {
        let server = try await TTSServer()
        let folder = try TemporaryFolder()
        try Data("a file".utf8).write(to: URL(fileURLWithPath: folder.path("file")))
        let result = try await renderSession([
            "prepare", "Fixtures/scripts/edge-cases.json", "--cache", folder.path("file/cache"),
            "--provider", "proxy", "--tts-url", server.baseURL.absoluteString,
        ])
        #expect(result.status == 74)
        #expect(result.standardError.hasPrefix("error: Cannot create the cache folder \(folder.path("file/cache")): "))
        #expect(try await server.stats().count == 0)
    }
}
