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
}
