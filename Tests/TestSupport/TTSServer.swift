public import Foundation
import Subprocess
import SystemPackage

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real HTTP server on 127.0.0.1 that speaks the TTS proxy's and OpenAI's protocols
/// (`tts-server.py` beside this file), started for a test and stopped when released.
public final class TTSServer: Sendable {
    /// The server's base URL, `http://127.0.0.1:PORT`.
    public let baseURL: URL
    /// Finished when the server is released: its standard input is then closed, and it exits.
    private let release: AsyncStream<Never>.Continuation

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
    public init(mp3: String = FixtureClip.shortPath) async throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("tts-server.py")
        let (released, release) = AsyncStream<Never>.makeStream()
        let (ports, port) = AsyncStream<Int?>.makeStream()
        // The server outlives this initializer, so its run is a task of its own: it reads the
        // port the server prints, then holds the server's standard input open until `release`.
        Task {
            _ = try? await Subprocess.run(
                .path("/usr/bin/env"),
                arguments: ["python3", script.path, "--mp3", mp3],
                input: .inputWriter,
                output: .sequence,
                error: .currentStandardError
            ) { execution in
                var first: String?
                for try await line in execution.standardOutput.strings() {
                    first = line
                    break
                }
                port.yield(first.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
                port.finish()
                if first != nil { for await _ in released {} }
                try await execution.standardInputWriter.finish()
            }
            port.finish()
        }
        guard case .some(.some(let number)) = await ports.first(where: { _ in true }) else {
            release.finish()
            throw CocoaError(
                .fileReadCorruptFile,
                userInfo: [NSLocalizedDescriptionKey: "tts-server.py did not print its port"]
            )
        }
        baseURL = URL(string: "http://127.0.0.1:\(number)")!
        self.release = release
    }

    deinit {
        release.finish()
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
