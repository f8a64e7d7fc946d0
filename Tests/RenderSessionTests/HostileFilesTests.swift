import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 22, the file-system part: what a hostile folder, link, FIFO or full disk can make the
/// command do. Nothing of the user's is lost, nothing is written through a planted link, nothing
/// hangs, and each error names its real cause.
@Suite("Hostile files", .serialized)
struct HostileFilesTests {
    static let script = "Fixtures/scripts/ten-minute-session.json"
    static let queueArguments = ["--cache", "Fixtures/cache", "--offline", "--seed", "7"]

    /// The outcome of running the built `render-session`, or `nil` if it had not ended by
    /// `deadline` (it is then killed, so a regression fails the test rather than hanging it).
    func renderSession(_ arguments: [String], deadline seconds: Double) async throws -> CommandResult? {
        try await ChildProcess.run(
            Repository.binary.path,
            arguments,
            directory: Repository.root.path,
            timeLimit: .seconds(seconds)
        ).map(CommandResult.init)
    }

    /// Every entry under `path` with its kind and bytes, for comparing a folder before and after.
    func snapshot(_ path: String) throws -> [String: String] {
        var entries: [String: String] = [:]
        let manager = FileManager.default
        for name in try manager.subpathsOfDirectory(atPath: path) {
            let full = (path as NSString).appendingPathComponent(name)
            let attributes = try manager.attributesOfItem(atPath: full)
            switch attributes[.type] as? FileAttributeType {
            case .typeSymbolicLink?: entries[name] = "link to " + (try manager.destinationOfSymbolicLink(atPath: full))
            case .typeDirectory?: entries[name] = "folder"
            default: entries[name] = try Data(contentsOf: URL(fileURLWithPath: full)).base64EncodedString()
            }
        }
        return entries
    }

    // MARK: - Item 3: queue -o never deletes the user's files

    enum Planted: String, CaseIterable, Sendable {
        case dotEntriesOnly
        case queuePlusForeignFile
        case queuePlusLink
        case queuePlusSubfolder
        case existingQueueWithNoOverwrite
    }

    @Test(
        "queue -o refuses a folder that is not exactly an export; -n refuses any existing folder",
        arguments: Planted.allCases
    )
    func queueKeepsTheUsersFiles(planted: Planted) async throws {
        let folder = try TemporaryFolder()
        let destination = folder.path("dest")
        let manager = FileManager.default
        if planted == .dotEntriesOnly {
            try manager.createDirectory(atPath: destination + "/.git", withIntermediateDirectories: true)
            try Data("HEAD".utf8).write(to: URL(fileURLWithPath: destination + "/.git/HEAD"))
            try Data("SECRET=1".utf8).write(to: URL(fileURLWithPath: destination + "/.env"))
        } else {
            let made = try await renderSession(
                ["queue", Self.script, "-o", destination] + Self.queueArguments,
                deadline: 120
            )
            #expect(made?.status == 0, "\(made?.standardError ?? "timed out")")
            switch planted {
            case .queuePlusForeignFile:
                try Data("mine".utf8).write(to: URL(fileURLWithPath: destination + "/notes.txt"))
            case .queuePlusLink:
                try Data("outside".utf8).write(to: URL(fileURLWithPath: folder.path("outside.txt")))
                try manager.createSymbolicLink(
                    atPath: destination + "/extra.mp3",
                    withDestinationPath: folder.path("outside.txt")
                )
            case .queuePlusSubfolder:
                try manager.createDirectory(atPath: destination + "/photos", withIntermediateDirectories: true)
                try Data("jpeg".utf8).write(to: URL(fileURLWithPath: destination + "/photos/a.jpg"))
            default: break
            }
        }
        let before = try snapshot(destination)
        let noOverwrite = planted == .existingQueueWithNoOverwrite ? ["-n"] : []
        let result = try #require(
            try await renderSession(
                ["queue", Self.script, "-o", destination] + Self.queueArguments + noOverwrite,
                deadline: 120
            )
        )
        #expect(result.status == (planted == .existingQueueWithNoOverwrite ? 1 : 74), "\(result.standardError)")
        let expected =
            switch planted {
            case .dotEntriesOnly:
                "error: Cannot write the queue to \(destination): it holds .env, which a queue does not; name a new or empty folder\n"
            case .queuePlusForeignFile:
                "error: Cannot write the queue to \(destination): it holds notes.txt, which its queue.json does not list; name a new or empty folder\n"
            case .queuePlusLink:
                "error: Cannot write the queue to \(destination): extra.mp3 is a symbolic link, which a queue does not hold; name a new or empty folder\n"
            case .queuePlusSubfolder:
                "error: Cannot write the queue to \(destination): it holds the folder photos, which a queue does not; name a new or empty folder\n"
            case .existingQueueWithNoOverwrite:
                "error: \(destination) exists; not replacing it (-n/--no-overwrite was given)\n"
            }
        #expect(result.standardError == expected)
        #expect(try snapshot(destination) == before, "every planted file survives, byte for byte")
        #expect(try folder.contents().allSatisfy { !$0.hasSuffix(".partial") }, "no temporary is left beside it")
    }

    @Test("queue -n refuses even an empty existing folder; without -n an empty one is filled")
    func queueIntoEmptyFolder() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("empty"), withIntermediateDirectories: true)
        let refused = try #require(
            try await renderSession(
                ["queue", Self.script, "-o", folder.path("empty"), "-n"] + Self.queueArguments,
                deadline: 120
            )
        )
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("exists; not replacing it (-n/--no-overwrite was given)"))
        let written = try #require(
            try await renderSession(
                ["queue", Self.script, "-o", folder.path("empty")] + Self.queueArguments,
                deadline: 120
            )
        )
        #expect(written.status == 0, "\(written.standardError)")
        let again = try #require(
            try await renderSession(
                ["queue", Self.script, "-o", folder.path("empty")] + Self.queueArguments,
                deadline: 120
            )
        )
        #expect(again.status == 0, "an export is replaced by an export: \(again.standardError)")
    }

    // MARK: - Item 8: batch never writes through a planted link

    /// A folder of one script, and an output folder beside it.
    func batchFolders() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.path("elsewhere"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Repository.script("ten-minute-session").path,
            toPath: folder.path("scripts/ten-minute-session.json")
        )
        return folder
    }

    @Test("batch refuses a link planted as an output; the file it points to stays byte-identical")
    func batchPlantedOutputLink() async throws {
        let folder = try batchFolders()
        let outside = folder.path("elsewhere/file")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside))
        try FileManager.default.createSymbolicLink(
            atPath: folder.path("out/ten-minute-session.wav"),
            withDestinationPath: outside
        )
        let result = try #require(
            try await renderSession(
                ["batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline"],
                deadline: 120
            )
        )
        #expect(result.status == 1)
        #expect(
            result.standardError.contains(
                "error: ten-minute-session: Cannot write \(folder.path("out/ten-minute-session.wav")): it is a symbolic link, which is never followed in an output folder render-session owns; remove it\n"
            ),
            "\(result.standardError)"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == Data("precious".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("elsewhere")) == ["file"])
    }

    @Test(
        "batch --preview never writes a page through a link or into a FIFO planted in its folder",
        arguments: ["index.html", "ten-minute-session.html"]
    )
    func batchPreviewPlanted(page: String) async throws {
        let folder = try batchFolders()
        let outside = folder.path("elsewhere/profile")
        try Data("precious".utf8).write(to: URL(fileURLWithPath: outside))
        let planted = folder.path("out/\(page)")
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
            "--preview",
        ]
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: outside)
        let linked = try #require(try await renderSession(arguments, deadline: 120))
        #expect(linked.status != 0)
        let refusal =
            "Cannot write \(planted): it is a symbolic link, which is never followed in an output folder render-session owns; remove it"
        #expect(linked.standardError.contains(refusal), "\(linked.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: outside)) == Data("precious".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("elsewhere")) == ["profile"])

        try FileManager.default.removeItem(atPath: planted)
        #expect(mkfifo(planted, 0o644) == 0)
        let fifo = try #require(try await renderSession(arguments, deadline: 120), "a FIFO is not waited on")
        #expect(fifo.status != 0)
        #expect(
            fifo.standardError.contains("Cannot write \(planted): it is not a regular file; remove it"),
            "\(fifo.standardError)"
        )
    }

    @Test("batch refuses a linked lock file; nothing is created where it points")
    func batchPlantedLockLink() async throws {
        let folder = try batchFolders()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: folder.path("elsewhere/existing")))
        for (link, target) in [("out/.render-session.lock", "elsewhere/lock")] {
            try FileManager.default.createSymbolicLink(
                atPath: folder.path(link),
                withDestinationPath: folder.path(target)
            )
        }
        let result = try #require(
            try await renderSession(
                ["batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline"],
                deadline: 120
            )
        )
        #expect(result.status == 74)
        #expect(
            result.standardError.contains(
                "error: Cannot lock \(folder.path("out/.render-session.lock")): it is a symbolic link, which render-session never follows for its lock file; remove it\n"
            ),
            "\(result.standardError)"
        )
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("elsewhere")) == ["existing"])
    }

    // MARK: - Item 9: FIFOs, devices, links out of a library, links in a queue

    @Test("A FIFO or /dev/stdin as a sound path is an error at once, not a wait", arguments: ["fifo", "/dev/stdin"])
    func fifoAsSound(kind: String) async throws {
        let folder = try TemporaryFolder()
        var sound = kind
        if kind == "fifo" {
            sound = folder.path("bell.wav")
            #expect(mkfifo(sound, 0o644) == 0)
        }
        for command in ["render", "timeline"] {
            let output = command == "render" ? ["-o", folder.path("out.wav")] : []
            let result = try #require(
                try await renderSession(
                    [command, Self.script, "--cache", "Fixtures/cache", "--offline", "--bell", sound] + output,
                    deadline: 20
                ),
                "\(command) --bell \(kind) had not ended after 20 s"
            )
            #expect(result.status == 1, "\(result.standardError)")
            let what = kind == "fifo" ? "a FIFO" : "a character device"
            #expect(
                result.standardError.contains("\(sound): it is \(what), not a regular file"),
                "\(result.standardError)"
            )
        }
    }

    /// A copy of the fixture cache in `folder`/cache.
    func copiedCache(in folder: TemporaryFolder) throws -> String {
        let cache = folder.path("cache")
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: Repository.cache.path)
        where name.hasSuffix(".mp3") {
            try FileManager.default.copyItem(
                atPath: Repository.cache.appendingPathComponent(name).path,
                toPath: cache + "/" + name
            )
        }
        return cache
    }

    /// The cache key of the ten-minute session's opening clip.
    static let openingKey = "4b0b675e1097fa06f132563b96bd40e80a4d691fed028f63a032d86811764305"

    @Test("A FIFO in the clip cache is an error at once for render, queue, batch and prepare")
    func fifoInCache() async throws {
        let folder = try TemporaryFolder()
        let cache = try copiedCache(in: folder)
        let clip = cache + "/\(Self.openingKey).mp3"
        try FileManager.default.removeItem(atPath: clip)
        #expect(mkfifo(clip, 0o644) == 0)
        let commands: [[String]] = [
            ["render", Self.script, "-o", folder.path("out.wav"), "--offline"],
            ["queue", Self.script, "-o", folder.path("queue"), "--offline"],
            ["batch", "Fixtures/scripts", "-o", folder.path("batch"), "--offline"],
            // prepare takes the entry for a corrupt one and makes the clip again: the FIFO is replaced.
            ["prepare", Self.script],
        ]
        for command in commands {
            let result = try #require(
                try await renderSession(command + ["--cache", cache], deadline: 20),
                "\(command[0]) had not ended after 20 s"
            )
            #expect(result.status == (command[0] == "prepare" ? 0 : 1), "\(command[0]): \(result.standardError)")
            #expect(
                result.standardError.contains("it is a FIFO, not a regular file"),
                "\(command[0]): \(result.standardError)"
            )
        }
        var status = stat()
        #expect(lstat(clip, &status) == 0 && status.st_mode & S_IFMT == S_IFREG, "prepare put a clip in its place")
    }

    @Test(
        "queue refuses a cache entry that is a link, naming it, and ships nothing: the cache holds only files it stored"
    )
    func linkedCacheEntryInQueue() async throws {
        let folder = try TemporaryFolder()
        let cache = try copiedCache(in: folder)
        let clip = cache + "/\(Self.openingKey).mp3"
        let elsewhere = folder.path("elsewhere.mp3")
        try FileManager.default.moveItem(atPath: clip, toPath: elsewhere)
        try FileManager.default.createSymbolicLink(atPath: clip, withDestinationPath: elsewhere)
        let result = try #require(
            try await renderSession(
                ["queue", Self.script, "-o", folder.path("queue"), "--cache", cache, "--offline", "--seed", "7"],
                deadline: 120
            )
        )
        #expect(result.status == 1, "\(result.standardError)")
        #expect(
            result.standardError.contains("\(Self.openingKey).mp3: the cache entry is a symbolic link"),
            "\(result.standardError)"
        )
        #expect(!FileManager.default.fileExists(atPath: folder.path("queue")), "no queue is shipped")
    }

    // MARK: - Item 15: a full disk says so

    /// Runs `mount` or `umount` with `arguments`; whether it succeeded. Waited for in place: each
    /// takes milliseconds, and an unmount runs in a `defer`, which cannot `await`.
    static func system(_ tool: String, _ arguments: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    /// Whether a tmpfs can be mounted here (as root in a container that allows it).
    static let canMountTmpfs: Bool = {
        guard getuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent(
            "render-session-mount-probe-\(getpid())"
        ).path
        try? FileManager.default.createDirectory(atPath: probe, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard system("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]) else { return false }
        return system("umount", [probe])
    }()

    // A full disk needs a small file system of its own: a tmpfs, which only root can mount (and
    // only where the container allows it). Elsewhere this test is reported as skipped, with the reason.
    @Test(
        "A full disk is an error that says the disk is full, naming the folder",
        .enabled(if: canMountTmpfs, "mounting a tmpfs needs root in a container that allows mount(2)")
    )
    func fullDisk() async throws {
        let folder = try TemporaryFolder()
        let disk = folder.path("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        try #require(Self.system("mount", ["-t", "tmpfs", "-o", "size=200k", "tmpfs", disk]))
        defer { _ = Self.system("umount", [disk]) }
        // Fill it to the last byte.
        let filler = open(disk + "/filler", O_WRONLY | O_CREAT, 0o644)
        var block = [UInt8](repeating: 0, count: 4_096)
        while block.withUnsafeMutableBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        let timeline = try #require(
            try await renderSession(
                [
                    "render", Self.script, "-o", "/dev/null", "--timeline", disk + "/t.json", "--cache",
                    "Fixtures/cache", "--offline",
                ],
                deadline: 120
            )
        )
        #expect(timeline.status == 74)
        #expect(timeline.standardError == "error: Cannot write \(disk)/t.json: the disk holding \(disk) is full\n")
        let queue = try #require(
            try await renderSession(["queue", Self.script, "-o", disk + "/q"] + Self.queueArguments, deadline: 120)
        )
        #expect(queue.status == 74)
        #expect(queue.standardError.contains("the disk holding \(disk)"), "\(queue.standardError)")
        #expect(queue.standardError.contains(" is full\n"), "\(queue.standardError)")
    }

    // MARK: - Item 16: a truncated output is not up to date

    @Test("batch renders again an output cut short since, with a message; not 'up to date'")
    func truncatedOutputRerendered() async throws {
        let folder = try batchFolders()
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
        ]
        let first = try await #require(try renderSession(arguments, deadline: 120))
        #expect(first.status == 0, "\(first.standardError)")
        let output = folder.path("out/ten-minute-session.wav")
        let original = try Data(contentsOf: URL(fileURLWithPath: output))
        #expect(truncate(output, 1_000_000) == 0)
        let second = try await #require(try renderSession(arguments, deadline: 120))
        #expect(second.status == 0, "\(second.standardError)")
        #expect(
            second.standardError.contains(
                "warning: ten-minute-session: \(output) is 1000000 bytes, not the \(original.count) written; rendering it again\n"
            ),
            "\(second.standardError)"
        )
        #expect(second.standardError.contains(": 1 rendered, 0 up to date, 0 failed"), "\(second.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == original)
        let third = try await #require(try renderSession(arguments, deadline: 120))
        #expect(third.standardError.contains(": 0 rendered, 1 up to date, 0 failed"), "\(third.standardError)")
    }

    @Test(
        "A manifest that is a sparse 3 GB file is not read: the batch renders, in bounded time, and writes its own; a FIFO is refused by name",
        arguments: ["sparse", "fifo"]
    )
    func hostileManifest(kind: String) async throws {
        let folder = try batchFolders()
        let manifest = folder.path("out/manifest.json")
        if kind == "fifo" {
            #expect(mkfifo(manifest, 0o644) == 0)
        } else {
            #expect(FileManager.default.createFile(atPath: manifest, contents: Data("{".utf8)))
            #expect(truncate(manifest, 3 << 30) == 0)
        }
        let result = try #require(
            try await renderSession(
                ["batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline"],
                deadline: 120
            )
        )
        let written = try FileManager.default.attributesOfItem(atPath: manifest)
        if kind == "fifo" {
            #expect(result.status == 74)
            #expect(
                result.standardError.hasPrefix("error: Cannot write \(manifest): it is not a regular file; remove it"),
                "\(result.standardError)"
            )
            #expect(written[.type] as? FileAttributeType != .typeRegular, "left as it was")
        } else {
            #expect(result.status == 0, "\(result.standardError)")
            #expect(result.standardError.contains(": 1 rendered, 0 up to date, 0 failed"), "\(result.standardError)")
            #expect(written[.type] as? FileAttributeType == .typeRegular)
            #expect((written[.size] as? Int ?? .max) < 10_000, "the manifest written anew")
        }
    }

    // MARK: - Item 18: an all-invalid batch leaves nothing

    @Test("A batch whose every script is invalid creates nothing: no folder, no lock file")
    func allInvalidBatchLeavesNothing() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try Data(#"{"id": 3}"#.utf8).write(to: URL(fileURLWithPath: folder.path("scripts/bad.json")))
        try FileManager.default.createDirectory(atPath: folder.path("existing"), withIntermediateDirectories: true)
        for output in ["new", "existing"] {
            let result = try #require(
                try await renderSession(
                    [
                        "batch", folder.path("scripts"), "-o", folder.path(output), "--cache", "Fixtures/cache",
                        "--offline",
                    ],
                    deadline: 60
                )
            )
            #expect(result.status == 1)
            #expect(result.standardError.contains("1 failed"), "\(result.standardError)")
        }
        #expect(try folder.contents() == ["existing", "scripts"], "no output folder is created")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.path("existing")) == [],
            "no lock file is left"
        )
    }
}
