import Foundation
import SessionTimeline
import TestSupport
import Testing

@Suite("Output formats from the command", .serialized, .tags(.concurrent))
struct FormatCommandTests {
    @Test(
        "render -o x.mp3|x.opus|x.flac|x.ogg|x.m4a|x.m4b --verify: exactly totalFrames through ffmpeg, a chapter per phase, the encoding recorded",
        .requiresFFmpeg,
        arguments: [
            ("mp3", "mp3", "mp3", 1_105), ("opus", "ogg", "opus", 312), ("flac", "flac", "flac", 0),
            ("ogg", "ogg", "vorbis", 0), ("m4a", "mp4", "aac", -1), ("m4b", "mp4", "aac", -1),
        ]
    )
    func renderEachFormat(extension suffix: String, container: String, codec: String, delay: Int64) async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "render", "Fixtures/scripts/edge-cases.json", "--cache", "Fixtures/cache", "--offline", "--seed", "3",
            "-o", folder.path("s.\(suffix)"), "--timeline", folder.path("s.json"), "--verify", "--album", "Tests",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("verified \(folder.path("s.\(suffix)")): 0 problems"))
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: folder.path("s.json")))
        )
        #expect(timeline.sampleRate.hertz == (suffix == "opus" ? 48_000 : 22_050))
        #expect(try await FFmpeg.decodedFrameCount(folder.path("s.\(suffix)")) == timeline.totalFrames.count)
        #expect(try await FFmpeg.chapters(folder.path("s.\(suffix)")).map(\.title) == timeline.phases.map(\.name))
        let encoding = try #require(timeline.encoding)
        // AAC's delay is the encoder's 1,024 plus the lead that makes the file whole packets.
        let expectedDelay = delay >= 0 ? delay : 1_024 + (1_024 - timeline.totalFrames.count % 1_024) % 1_024
        #expect(encoding.container == container && encoding.codec == codec)
        #expect(encoding.encoderDelay.count == expectedDelay && (delay >= 0 || encoding.padding == .zero))
        let tags = ["mp3", "flac", "m4a", "m4b"].contains(suffix) ? "format_tags=album" : "stream_tags=album"
        #expect(try await FFmpeg.probe(folder.path("s.\(suffix)"), entries: tags) == "Tests")
    }

    @Test("batch --format mp3 names its files .mp3, records the format, and is up to date on a second run")
    func batchMP3() async throws {
        let folder = try TemporaryFolder()
        try FileManager.default.createDirectory(atPath: folder.path("scripts"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Repository.script("edge-cases").path,
            toPath: folder.path("scripts/edge-cases.json")
        )
        let arguments = [
            "batch", folder.path("scripts"), "-o", folder.path("out"), "--cache", "Fixtures/cache", "--offline",
            "--format", "mp3",
        ]
        let first = try await renderSession(arguments)
        #expect(first.status == 0, "\(first.standardError)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path("out")).filter {
            !$0.hasPrefix(".")
        }
        .sorted()
        #expect(files == ["edge-cases.mp3", "edge-cases.mp3.timeline.json", "manifest.json"])
        let manifest = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: folder.path("out/manifest.json")))
        )
        let record = ((manifest as? [String: Any])?["outputs"] as? [String: Any])?["edge-cases.mp3"] as? [String: Any]
        #expect(record?["format"] as? String == "mp3" && record?["file"] as? String == "edge-cases.mp3")
        let again = try await renderSession(arguments)
        #expect(again.standardError.contains(": 0 rendered, 1 up to date, 0 failed, 1 with late speech (worst "))
        let wav = try await renderSession(Array(arguments.dropLast(2)))
        #expect(
            wav.standardError.contains(": 1 rendered, 0 up to date, 0 failed, 1 with late speech (worst "),
            "WAV is another output"
        )
        let mp3Again = try await renderSession(arguments)
        #expect(
            mp3Again.standardError.contains(": 0 rendered, 1 up to date, 0 failed, 1 with late speech (worst "),
            "the MP3 keeps its own record beside the WAV's: \(mp3Again.standardError)"
        )
        // A manifest written before records were keyed by file (by session) still serves.
        let url = URL(fileURLWithPath: folder.path("out/manifest.json"))
        var old = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        var outputs = try #require(old["outputs"] as? [String: Any])
        let moved = outputs.removeValue(forKey: "edge-cases.mp3")
        #expect(moved != nil)
        outputs["edge-cases"] = moved
        old["outputs"] = outputs
        try JSONSerialization.data(withJSONObject: old).write(to: url)
        let oldManifest = try await renderSession(arguments)
        #expect(
            oldManifest.standardError.contains(": 0 rendered, 1 up to date, 0 failed"),
            "\(oldManifest.standardError)"
        )
    }

    @Test("An unknown --format is a usage error naming the formats")
    func unknownFormat() async throws {
        let result = try await renderSession([
            "render", "Fixtures/scripts/edge-cases.json", "-o", "x.wav", "--format", "wma",
        ])
        #expect(result.status == 64)
        #expect(result.standardError.contains("wma is not a format; use wav, flac, mp3, opus, ogg, m4a or m4b"))
    }

    @Test("silence -o x.mp3 writes exactly the frames asked for", .requiresFFmpeg)
    func silenceMP3() async throws {
        let folder = try TemporaryFolder()
        let result = try await renderSession([
            "silence", "--seconds", "2.5", "--sample-rate", "22050", "-o", folder.path("s.mp3"),
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try await FFmpeg.decodedFrameCount(folder.path("s.mp3")) == 55_125)
    }

    @Test(
        "render -o x.mp3 --bitrate at the fixtures' 22,050 Hz: the edge bit rates, and the message that lists those allowed",
        arguments: [
            ([String](), 8, Int32(0)), ([], 50, 65), ([], 160, 0), (["--sample-rate", "22050"], 50, 64),
            (["--sample-rate", "44100"], 32, 0), (["--sample-rate", "44100"], 24, 64),
            (["--loudness", "speech"], 50, 65),
        ]
    )
    func mp3Bitrates(extra: [String], kilobits: Int, status: Int32) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.mp3")
        let result = try await renderSession(
            [
                "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline",
                "-o", path, "--bitrate", String(kilobits),
            ] + (extra.first == "--loudness" ? extra : ["--loudness", "off"] + extra)
        )
        #expect(result.status == status, "\(result.standardError)")
        let rate = extra.first == "--sample-rate" ? extra[1] : "22050"
        let allowed =
            rate == "22050"
            ? "8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144 or 160"
            : "32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256 or 320"
        let message = "mp3 at \(rate) Hz takes a bit rate of \(allowed) kb/s (its MPEG version's), not \(kilobits)"
        switch status {
        case 0: #expect(try folder.contents() == ["s.mp3", "s.mp3.timeline.json"])
        case 65: #expect(result.standardError == "error: Cannot write \(path): \(message)\n")
        default: #expect(result.standardError.hasPrefix("error: --format: \(message)\n"))
        }
    }

    @Test(
        "A speech-rate MP3 (32 kb/s at 22,050 Hz mono) is gapless: every audio frame at 32 kb/s, the tag in a 64 kb/s frame, ffmpeg and libmpg123 decode exactly totalFrames",
        .requiresFFmpeg
    )
    func speechRateMP3() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.mp3")
        let result = try await renderSession([
            "render", "Fixtures/scripts/ten-minute-session.json", "--cache", "Fixtures/cache", "--offline",
            "--seed", "7", "-o", path, "--bitrate", "32", "--verify",
        ])
        #expect(result.status == 0, "\(result.standardError)")
        #expect(result.standardError.contains("verified \(path): 0 problems, 13,494,600 frames"), "libmpg123, gapless")
        #expect(try await FFmpeg.decodedFrameCount(path) == 13_494_600)
        let timeline = try JSONDecoder().decode(
            Timeline.self,
            from: Data(contentsOf: URL(fileURLWithPath: path + ".timeline.json"))
        )
        #expect(timeline.encoding?.bitrate == 32)
        // The frames after the ID3v2 tag: their headers' bit rates (MPEG-2: index 4 is 32 kb/s, 8 is 64).
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var offset =
            10 + (Int(bytes[6]) << 21 | Int(bytes[7]) << 14 | Int(bytes[8]) << 7 | Int(bytes[9]))
        var rates: [Int] = []
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let kilobits = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160][Int(bytes[offset + 2] >> 4)]
            rates.append(kilobits)
            offset += 72_000 * kilobits / 22_050 + Int(bytes[offset + 2] >> 1 & 1)
        }
        #expect(offset == bytes.count, "every byte after the ID3v2 tag is in a frame")
        #expect(rates.first == 64 && rates.dropFirst().allSatisfy { $0 == 32 } && rates.count > 1_000, "\(Set(rates))")
    }
}
