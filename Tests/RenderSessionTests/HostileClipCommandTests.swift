import Foundation
import SessionKit
import TestSupport
import Testing

/// The commands over a cache whose opening clip is cut to a third, and a Piper worker started
/// in a folder with planted Python modules.
@Suite("Hostile clips, by command", .serialized)
struct HostileClipCommandTests {
    static let script = "Fixtures/scripts/ten-minute-session.json"
    static let openingKey = "4b0b675e1097fa06f132563b96bd40e80a4d691fed028f63a032d86811764305"
    /// Why the cut opening is refused (the frames it holds: 122,735 decoded, 123,840 scanned).
    static let cutReason = "the file is cut short: its LAME/Xing tag promises 371691 frames, the stream holds "

    /// A copy of the fixture cache whose opening clip is cut to a third.
    static func cutCache() throws -> TemporaryFolder {
        let folder = try TemporaryFolder()
        try FileManager.default.copyItem(atPath: Repository.cache.path, toPath: folder.path("cache"))
        let path = folder.path("cache/\(openingKey).mp3")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 3).write(to: URL(fileURLWithPath: path))
        return folder
    }

    @Test(
        "Every command that reads the cut clip refuses it, loudness on (the default), before writing anything",
        arguments: [
            ["render", script, "-o", "OUT/s.wav"],
            ["render", script, "-o", "OUT/s.wav", "--verify"],
            ["timeline", script],
            ["queue", script, "-o", "OUT/queue", "--reencode"],
        ]
    )
    func refused(arguments: [String]) async throws {
        let folder = try Self.cutCache()
        try FileManager.default.createDirectory(atPath: folder.path("out"), withIntermediateDirectories: true)
        let result = try await renderSession(
            arguments.map { $0.replacingOccurrences(of: "OUT", with: folder.path("out")) } + [
                "--cache", folder.path("cache"), "--offline", "--seed", "7",
            ]
        )
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains("(key \(Self.openingKey)): "), "\(result.standardError)")
        #expect(result.standardError.contains(Self.cutReason), "\(result.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).isEmpty)
    }

    @Test("batch refuses the cut clip too")
    func batch() async throws {
        let folder = try Self.cutCache()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.script, toPath: folder.path("scripts/s.json"))
        let result = try await renderSession([
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", folder.path("cache"), "--offline",
        ])
        #expect(result.status == 1, "\(result.standardError)")
        #expect(result.standardError.contains(Self.cutReason), "\(result.standardError)")
    }

    @Test("prepare calls the cut clip corrupt and makes it again, not 'already cached'")
    func prepare() async throws {
        let folder = try Self.cutCache()
        let result = try await renderSession(["prepare", Self.script, "--cache", folder.path("cache")])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            result.standardError.contains(
                "Cache entry \(Self.openingKey).mp3 for \"Welcome. Find a position that lets you be both relaxed and a…\" is corrupt (\(Self.cutReason)122735); synthesizing it again"
            ),
            "\(result.standardError)"
        )
        #expect(result.standardError.contains("(1 corrupt entries replaced)"), "\(result.standardError)")
        let again = try await renderSession(["timeline", Self.script, "--cache", folder.path("cache"), "--offline"])
        #expect(again.status == 0, "\(again.standardError)")
    }

    @Test(
        "A json.py, numpy.py or sitecustomize.py where the command runs never runs inside the Piper worker",
        .requiresPiper
    )
    func plantedModules() async throws {
        let folder = try TemporaryFolder()
        let marker = folder.path("planted-code-ran")
        let planted = "open(\(String(reflecting: marker)), 'a').write(__name__ + '\\n')\n"
        for module in ["json", "numpy", "onnxruntime", "sitecustomize", "usercustomize", "re"] {
            try Data(planted.utf8).write(to: URL(fileURLWithPath: folder.path("\(module).py")))
        }
        let session = """
            {"id": "planted", "category": "test", "title": "Planted", "subtitle": "s", "orderIndex": 1,
             "durationSeconds": 10, "segments": [
               {"id": "opening", "phase": "opening", "startSeconds": 0, "text": "Welcome."}]}
            """
        try Data(session.utf8).write(to: URL(fileURLWithPath: folder.path("s.json")))
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONPATH"] = folder.url.path
        environment["PYTHONSTARTUP"] = folder.path("sitecustomize.py")
        let result = try await renderSession(
            [
                "render", "s.json", "-o", "s.wav", "--voice", PiperSupport.voice.id, "--cache", "cache",
                "--no-fallback",
                "--seed", "7",
            ],
            environment: environment,
            directory: folder.url
        )
        #expect(result.status == 0, "\(result.standardError)")
        #expect(
            !FileManager.default.fileExists(atPath: marker),
            "planted code ran: \((try? String(contentsOfFile: marker, encoding: .utf8)) ?? "")"
        )
        #expect(FileManager.default.fileExists(atPath: folder.path("s.wav")))
    }
}
