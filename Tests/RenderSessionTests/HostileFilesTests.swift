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
    func renderSession(_ arguments: [String], deadline seconds: Double) throws -> CommandResult? {
        let process = Process()
        process.executableURL = Repository.binary
        process.arguments = arguments
        process.currentDirectoryURL = Repository.root
        let (output, error) = (Pipe(), Pipe())
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let outputReader = ErrorReader(output.fileHandleForReading)
        let errorReader = ErrorReader(error.fileHandleForReading)
        guard ended.wait(timeout: .now() + seconds) == .success else {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
            return nil
        }
        return CommandResult(
            status: process.terminationStatus,
            standardOutputBytes: [UInt8](outputReader.wait()),
            standardError: String(decoding: errorReader.wait(), as: UTF8.self)
        )
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

    // MARK: - Item 9: FIFOs, devices, links out of a library, links in a queue

    @Test("A FIFO or /dev/stdin as a sound path is an error at once, not a wait", arguments: ["fifo", "/dev/stdin"])
    func fifoAsSound(kind: String) throws {
        let folder = try TemporaryFolder()
        var sound = kind
        if kind == "fifo" {
            sound = folder.path("bell.wav")
            #expect(mkfifo(sound, 0o644) == 0)
        }
        for command in ["render", "timeline"] {
            let output = command == "render" ? ["-o", folder.path("out.wav")] : []
            let result = try #require(
                try renderSession(
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
    func fifoInCache() throws {
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
                try renderSession(command + ["--cache", cache], deadline: 20),
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

}
