public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real HTTP server on 127.0.0.1 that speaks the TTS proxy's and OpenAI's protocols
/// (`tts-server.py` beside this file), started for a test and stopped when released.
public final class TTSServer: @unchecked Sendable {
    // @unchecked: all stored properties are set once in init; the process is only terminated in deinit.
    private let process: Process
    private let input: Pipe
    /// The server's base URL, `http://127.0.0.1:PORT`.
    public let baseURL: URL

    /// What the server has seen.
    public struct Stats: Decodable, Sendable {
        public struct Request: Decodable, Sendable {
            public let path: String
            public let body: [String: JSONScalar]
            public let headers: [String: String]
        }
        public let count: Int
        public let maxInFlight: Int
        public let requests: [Request]
    }

    /// Starts the server, answering every success with the MP3 file at `mp3` (by default a clip
    /// short enough for any text, ``FixtureClip/shortPath``).
    public init(mp3: String = FixtureClip.shortPath) throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tts-server.py")
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--mp3", mp3]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var line = Data()
        while let byte = try output.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            line.append(byte)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self)) else {
            process.terminate()
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSLocalizedDescriptionKey: "tts-server.py did not print its port"]
            )
        }
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    deinit {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Everything the server has seen so far.
    public func stats() async throws -> Stats {
        let (data, _) = try await URLSession.shared.data(from: baseURL.appendingPathComponent("stats"))
        return try JSONDecoder().decode(Stats.self, from: data)
    }
}

/// A JSON scalar in a request body the server recorded.
public enum JSONScalar: Decodable, Sendable, Hashable {
    case string(String)
    case number(Double)
    case other

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .other
        }
    }
}

extension FixtureClip {
    /// The shortest fixture clip ("Breathe in.", 0.85 s at 22,050 Hz mono): a plausible answer
    /// for any text (``ClipLengthLimit``), for servers that answer every text with one clip.
    public static var shortPath: String {
        Repository.cache.appendingPathComponent("512214808b21cc16f2827048f91cec31a3019c599508f74b8c193ee04f9852a6.mp3")
            .path
    }

    /// A fixture clip's path, for servers that need some valid MP3 to answer with.
    public static var anyPath: String {
        Repository.cache.appendingPathComponent("4b0b675e1097fa06f132563b96bd40e80a4d691fed028f63a032d86811764305.mp3")
            .path
    }
}
