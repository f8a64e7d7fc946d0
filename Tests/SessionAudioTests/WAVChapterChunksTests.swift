import CSndFile
import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// A WAV's chapter chunks byte for byte, and a render's chapter titles as ffprobe and libsndfile
/// read them back.
@Suite("WAV chapter chunks")
struct WAVChapterChunksTests {
    /// The little-endian bytes of `value`.
    static func le(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian, Array.init) }

    /// A `labl` subchunk as RIFF has it: the size counts the cue id and the title with its NUL,
    /// not the pad byte after an odd size.
    @Test(
        "One chapter's LIST/adtl body: a labl sized exactly, padded to even; JUNK when the body is 2 short of 4n",
        arguments: [
            // "teachings" and its NUL are 10 bytes: size 14, no pad; 4 + 8 + 14 = 26, so JUNK follows.
            ("teachings", 14, [UInt8](), true),
            // 8 bytes with the NUL: size 12, no pad; 4 + 8 + 12 = 24.
            ("closing", 12, [], false),
            // 3 bytes with the NUL: size 7 and a pad byte; 4 + 8 + 8 = 20.
            ("ab", 7, [0], false),
            // The NUL alone: size 5 and a pad byte; 4 + 8 + 6 = 18, so JUNK follows.
            ("", 5, [0], true),
            // A title is a C string: it ends at its first NUL. 2 bytes: size 6; 4 + 8 + 6 = 18, so JUNK.
            ("a\u{0}b", 6, [], true),
            // "Körper" is 7 bytes of UTF-8, 8 with the NUL: size 12.
            ("Körper", 12, [], false),
        ]
    )
    func oneLabel(title: String, size: UInt32, pad: [UInt8], junk: Bool) {
        let chunks = WAVChapterChunks([AudioChapter(title: title, startFrame: 0, endFrame: 10)])
        let text = Array(title.utf8.prefix { $0 != 0 }) + [0]
        #expect(size == UInt32(4 + text.count))
        let expected =
            Array("adtl".utf8) + Array("labl".utf8) + Self.le(size) + Self.le(1) + text + pad
            + (junk ? Array("JUNK".utf8) + [2, 0, 0, 0, 0, 0] : [])
        #expect(chunks.labels == expected, "\(chunks.labels) for \(title.debugDescription)")
        #expect(chunks.labels.count % 4 == 0, "libsndfile writes a custom chunk in multiples of 4 bytes")
        #expect(
            chunks.cue == Self.le(1) + Self.le(1) + Self.le(0) + Array("data".utf8) + Self.le(0) + Self.le(0)
                + Self.le(0)
        )
    }

    @Test("A session's three chapters: each labl exactly sized, one after the other, JUNK closing the list")
    func sessionLabels() {
        let chapters = [
            AudioChapter(title: "opening", startFrame: 0, endFrame: 100),
            AudioChapter(title: "teachings", startFrame: 100, endFrame: 200),
            AudioChapter(title: "closing", startFrame: 200, endFrame: 300),
        ]
        let chunks = WAVChapterChunks(chapters)
        let expected =
            Array("adtl".utf8)
            + Array("labl".utf8) + Self.le(12) + Self.le(1) + Array("opening\u{0}".utf8)
            + Array("labl".utf8) + Self.le(14) + Self.le(2) + Array("teachings\u{0}".utf8)
            + Array("labl".utf8) + Self.le(12) + Self.le(3) + Array("closing\u{0}".utf8)
            + Array("JUNK".utf8) + Self.le(2) + [0, 0]
        #expect(chunks.labels == expected)
        #expect(chunks.labels.count == 76)
        #expect(chunks.cue.count == 4 + 3 * 24)
        // The second point (from byte 28): its id, its position and, 16 bytes on, its sample offset.
        #expect(Array(chunks.cue[28..<36]) == Self.le(2) + Self.le(100) && Array(chunks.cue[48..<52]) == Self.le(100))
    }

    /// Runs the built `render-session` with `arguments` from the repository's folder; its exit status.
    static func renderSession(_ arguments: [String]) async throws -> (status: Int32, errors: String) {
        let run = try await ChildProcess.run(Repository.binary.path, arguments, directory: Repository.root.path)
        return (run.status, run.standardErrorText)
    }

    // libsndfile reads `labl` titles: SFC_GET_CUE gives each cue point with its label as the name
    // (from RIFF files; libsndfile 1.2.0 reads no cue points from RF64).
    @Test(
        "Every chapter title of a WAV render comes back through ffprobe and libsndfile, at the phases' frames",
        .enabled(if: FFmpeg.probePath != nil, "ffprobe is not installed, so there is no independent reader of chapters")
    )
    func renderedTitles() async throws {
        let folder = try TemporaryFolder()
        let wav = folder.path("s.wav")
        let result = try await Self.renderSession([
            "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--seed", "7",
            "--offline", "-o", wav, "--timeline", folder.path("s.json"),
        ])
        #expect(result.status == 0, "\(result.errors)")
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("s.json")))
        )
        // The teachings' speech ends long before the closing, and interjections follow: a silence phase.
        #expect(timeline.phases.map(\.name) == ["opening", "teachings", "silence", "closing"])

        let listed = try await FFmpeg.chapters(wav)
        #expect(listed.map(\.title) == timeline.phases.map(\.name), "ffprobe lists every title")
        // ffprobe prints seconds to the microsecond.
        let starts = timeline.phases.map { Double($0.startFrame.count) / 22_050 }
        #expect(listed.count == starts.count && zip(listed.map(\.start), starts).allSatisfy { abs($0 - $1) <= 5e-7 })

        var info = SF_INFO()
        let file = try #require(sf_open(wav, Int32(SFM_READ), &info))
        defer { sf_close(file) }
        #expect(info.frames == timeline.totalFrames.count, "libsndfile opens the file with every frame")
        #expect(info.samplerate == 22_050 && info.channels == 1)
        var count: UInt32 = 0
        #expect(sf_command(file, Int32(SFC_GET_CUE_COUNT), &count, 4) == SF_TRUE)
        #expect(count == 4)
        var cues = SF_CUES()
        #expect(sf_command(file, Int32(SFC_GET_CUE), &cues, Int32(MemoryLayout<SF_CUES>.size)) == SF_TRUE)
        let points = withUnsafeBytes(of: &cues.cue_points) { Array($0.bindMemory(to: SF_CUE_POINT.self).prefix(4)) }
        #expect(points.map { Int64($0.sample_offset) } == timeline.phases.map(\.startFrame.count))
        let names = points.map { point in
            withUnsafeBytes(of: point.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        #expect(names == timeline.phases.map(\.name), "libsndfile reads every title")
    }

    /// Chapters no libsndfile header holds: 3,000 short ones, 120 of 490 characters, and one title
    /// of a letter with 100,000 combining marks (200 KB of UTF-8).
    static let oversizedTitles: [(name: String, titles: [String])] = [
        ("3,000 short", (0..<3_000).map { "p\($0)" }),
        ("120 long", (0..<120).map { String(format: "p%03d ", $0) + String(repeating: "x", count: 485) }),
        ("combining marks", ["a" + String(repeating: "\u{0301}", count: 100_000)]),
    ]

    /// Writes a WAV of `frames` frames of silence at 8 kHz with one chapter a title, each
    /// `frames / titles.count` long: with the render's writer, or libsndfile's own with `libsndfile`.
    static func writeChaptered(_ titles: [String], frames: Int64, to path: String, libsndfile: Bool = false) throws {
        let step = frames / Int64(titles.count)
        let chapters = titles.enumerated().map { index, title in
            AudioChapter(
                title: title,
                startFrame: Frames(Int64(index) * step),
                endFrame: Frames(index == titles.count - 1 ? frames : Int64(index + 1) * step)
            )
        }
        let writer =
            libsndfile
            ? try SoundFileWriter(
                path: path,
                sampleRate: 8_000,
                channelCount: 1,
                format: .pcm16,
                container: .riff,
                title: "Chapters",
                chapters: chapters
            )
            : try SoundFileWriter(
                path: path,
                sampleRate: SampleRate(8_000),
                channelCount: .mono,
                settings: try EncoderSettings(format: .wav),
                metadata: AudioMetadata(title: "Chapters", album: "Album", artist: "Artist", chapters: chapters),
                frameCount: Frames(frames)
            )
        try writer.writeSilence(frames: Frames(frames))
        try writer.close()
    }

    @Test(
        "A WAV with more chapter text than libsndfile's header holds is written whole: ffprobe lists every chapter and the walk finds it sound",
        .enabled(
            if: FFmpeg.probePath != nil,
            "ffprobe is not installed, so there is no independent reader of chapters"
        ),
        arguments: Self.oversizedTitles.indices
    )
    func oversizedChapters(_ index: Int) async throws {
        let (name, titles) = Self.oversizedTitles[index]
        let folder = try TemporaryFolder()
        let wav = folder.path("\(index).wav")
        try Self.writeChaptered(titles, frames: 24_000, to: wav)
        #expect(try RIFFStructure.problem(path: wav) == nil, "\(name)")
        let listed = try await FFmpeg.chapters(wav)
        // ffmpeg keeps a label's first 511 bytes: the long title comes back cut, the others whole.
        #expect(listed.count == titles.count, "\(name): ffprobe lists every chapter")
        let whole = zip(listed, titles).allSatisfy { listed, title in
            title.utf8.count < 512
                ? listed.title == title : title.unicodeScalars.starts(with: listed.title.unicodeScalars)
        }
        #expect(whole, "\(name): every title as written")
        #expect(try await FFmpeg.decodedFrameCount(wav) == 24_000, "\(name): ffmpeg decodes every frame")
        let reader = try SoundFileReader(descriptor: open(wav, O_RDONLY | O_CLOEXEC), path: wav)
        #expect(reader.declaredFrameCount == 24_000 && reader.dataShortfall == nil, "\(name): libsndfile too")
    }

    @Test(
        "libsndfile's own writer leaves data inside a declared LIST past its header room; the walk says where, ffmpeg finds no data"
    )
    func libsndfileOverflow() async throws {
        let folder = try TemporaryFolder()
        let wav = folder.path("overflow.wav")
        try Self.writeChaptered(Self.oversizedTitles[0].titles, frames: 24_000, to: wav, libsndfile: true)
        let problem = try #require(try RIFFStructure.problem(path: wav), "the walk finds the broken file")
        #expect(problem.contains("past the end") || problem.contains("no data chunk"), "\(problem)")
        if FFmpeg.probePath != nil {
            await #expect(throws: (any Error).self, "ffmpeg cannot open it") { try await FFmpeg.decodedFrameCount(wav) }
        }
    }

    @Test(
        "The walk names what is wrong with a hand-made WAV: a cut file, a LIST that swallows data, no data, a stray byte"
    )
    func walkedProblems() throws {
        func chunk(_ id: String, _ body: [UInt8], declared: UInt32? = nil) -> [UInt8] {
            Array(id.utf8) + Self.le(declared ?? UInt32(body.count)) + body + (body.count % 2 == 1 ? [0] : [])
        }
        func riff(_ chunks: [UInt8], extra: Int = 0) -> [UInt8] {
            Array("RIFF".utf8) + Self.le(UInt32(4 + chunks.count + extra)) + Array("WAVE".utf8) + chunks
        }
        let format = chunk("fmt ", [1, 0, 1, 0] + Self.le(8_000) + Self.le(16_000) + [2, 0, 16, 0])
        let data = chunk("data", [UInt8](repeating: 0, count: 40))
        let info = chunk("LIST", Array("INFOINAM".utf8) + Self.le(2) + [65, 0])
        let cases: [(String, [UInt8], String?)] = [
            ("sound", riff(format + info + data), nil),
            ("cut short", Array(riff(format + data).dropLast(10)), "cut short"),
            ("bytes after", riff(format + data) + [0, 0], "bytes after it"),
            (
                "LIST swallows data", riff(format + chunk("LIST", Array("adtl".utf8), declared: 4 + 48) + data),
                "no data chunk"
            ),
            (
                "LIST past the end", riff(format + chunk("LIST", Array("adtl".utf8), declared: 4 + 60) + data),
                "\"LIST\" chunk"
            ),
            ("no data", riff(format + info), "no data chunk"),
            ("data before fmt", riff(data + format), "before any fmt"),
            (
                "subchunk too long",
                riff(format + chunk("LIST", Array("INFOINAM".utf8) + Self.le(40) + [65, 0]) + data),
                "past the end of the LIST/INFO"
            ),
            ("stray byte", riff(format + data + [7]), "stray"),
            ("not a WAV", Array("OggS".utf8) + [UInt8](repeating: 0, count: 40), nil),
        ]
        let folder = try TemporaryFolder()
        for (name, bytes, expected) in cases {
            let path = folder.path("\(name).wav")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let problem = try RIFFStructure.problem(path: path)
            if let expected {
                #expect(problem?.contains(expected) == true, "\(name): \(problem ?? "no problem")")
            } else {
                #expect(problem == nil, "\(name): \(problem ?? "")")
            }
        }
    }
}
