import Foundation

/// ffmpeg and ffprobe as independent decoders: what another player hears in a written file.
extension FFmpeg {
    /// The `ffprobe` beside `ffmpeg`, if there is one.
    public static let probePath: String? = path.map {
        URL(fileURLWithPath: $0).deletingLastPathComponent().path + "/ffprobe"
    }
    .flatMap { FileManager.default.isExecutableFile(atPath: $0) ? $0 : nil }

    /// Decodes `path` with ffmpeg to interleaved 32-bit floats at the file's own rate and channels
    /// (ffmpeg drops what a gapless decoder drops: the LAME tag's delay and padding, Opus's pre-skip
    /// and the end its last granule position trims).
    public static func decode(_ path: String) async throws -> (samples: [Float], channels: Int) {
        let channels = try await Int(probe(path, entries: "stream=channels")) ?? 0
        let data = try await run(
            try Self.path ?? { throw Failure(message: "ffmpeg is not installed") }(),
            ["-hide_banner", "-nostdin", "-v", "error", "-i", path, "-map", "0:a:0", "-f", "f32le", "-"]
        )
        let samples = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (samples, channels)
    }

    /// The picture at `path` (a PNG) decoded by ffmpeg to 8-bit RGB, row by row, with its size.
    public static func pixels(_ path: String) async throws -> (rgb: [UInt8], width: Int, height: Int) {
        let probe = try Self.probePath ?? { throw Failure(message: "ffprobe is not installed") }()
        let size = String(
            decoding: try await run(
                probe,
                [
                    "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0",
                    path,
                ]
            ),
            as: UTF8.self
        )
        .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        guard size.count == 2 else { throw Failure(message: "ffprobe read no picture size in \(path)") }
        let data = try await run(
            try Self.path ?? { throw Failure(message: "ffmpeg is not installed") }(),
            ["-hide_banner", "-nostdin", "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-"]
        )
        return (Array(data), size[0], size[1])
    }

    /// How many frames ffmpeg decodes `path` to.
    public static func decodedFrameCount(_ path: String) async throws -> Int64 {
        let (samples, channels) = try await decode(path)
        return Int64(samples.count / max(channels, 1))
    }

    /// A chapter as ffprobe lists it.
    public struct Chapter: Sendable, Equatable {
        public let title: String
        /// Start and end in seconds, as ffprobe prints them.
        public let start: Double
        public let end: Double

        public init(title: String, start: Double, end: Double) {
            self.title = title
            self.start = start
            self.end = end
        }
    }

    /// The chapters ffprobe lists in `path`.
    public static func chapters(_ path: String) async throws -> [Chapter] {
        let probe = try Self.probePath ?? { throw Failure(message: "ffprobe is not installed") }()
        let data = try await run(probe, ["-v", "error", "-show_chapters", "-of", "json", path])
        struct Listing: Decodable {
            struct Entry: Decodable {
                let start_time: String
                let end_time: String
                let tags: [String: String]?
            }
            let chapters: [Entry]
        }
        return try JSONDecoder().decode(Listing.self, from: data).chapters.map {
            Chapter(title: $0.tags?["title"] ?? "", start: Double($0.start_time) ?? -1, end: Double($0.end_time) ?? -1)
        }
    }

    /// One value ffprobe prints for `entries` (`stream=channels`, `format_tags=title`) of the first audio stream.
    public static func probe(_ path: String, entries: String) async throws -> String {
        let probe = try Self.probePath ?? { throw Failure(message: "ffprobe is not installed") }()
        let data = try await run(
            probe,
            ["-v", "error", "-select_streams", "a:0", "-show_entries", entries, "-of", "default=nw=1:nk=1", path]
        )
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs `tool` with `arguments`; returns its standard output, failing on a non-zero exit.
    static func run(_ tool: String, _ arguments: [String]) async throws -> Data {
        let run = try await ChildProcess.run(tool, arguments)
        guard run.termination == .exited(0) else {
            throw Failure(
                message: "\(tool) \(arguments.joined(separator: " ")) \(run.termination): \(run.standardErrorText)"
            )
        }
        return Data(run.standardOutput)
    }
}
