import CSndFile
import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Interleaved tones at a quarter of full scale, different in each channel.
private func tones(frames: Int, channels: Int, rate: Int) -> [Float] {
    (0..<(frames * channels)).map { index in
        let frame = Double(index / channels)
        let channel = Double(index % channels)
        return Float(0.25 * sin(2 * .pi * (220 + 110 * channel) * frame / Double(rate)))
    }
}

/// Writes `samples` through ``AudioFileWriter/create(path:sampleRate:channelCount:settings:metadata:frameCount:)``,
/// then `silence` frames of silence; returns the encoding `close()` reports.
private func writeFile(
    _ samples: [Float],
    silence: Int = 0,
    rate: Int,
    channels: Int,
    settings: EncoderSettings,
    metadata: AudioMetadata = AudioMetadata(),
    to path: String
) throws -> AudioEncoding {
    let frames = samples.count / channels
    let sink = try AudioFileWriter.create(
        path: path,
        sampleRate: try #require(SampleRate(rate)),
        channelCount: try #require(ChannelCount(channels)),
        settings: settings,
        metadata: metadata,
        frameCount: Frames(Int64(frames + silence))
    )
    try sink.write(samples, frames: frames)
    try sink.writeSilence(frames: Frames(Int64(silence)))
    return try sink.close()
}

/// `x` as a `bits`-bit sample reads back: `round(x × 2^(bits−1))`, clamped, over `2^(bits−1)`.
private func quantized(_ x: Float, bits: Int) -> Float {
    let scale = Double(1 << (bits - 1))
    return Float(min(max((Double(x) * scale).rounded(.toNearestOrEven), -scale), scale - 1) / scale)
}

/// Three chapters tiling `frames` frames.
private func threeChapters(_ frames: Int64) -> [AudioChapter] {
    [
        AudioChapter(title: "Arrival", startFrame: 0, endFrame: Frames(frames / 4)),
        AudioChapter(title: "Body scan – Körper", startFrame: Frames(frames / 4), endFrame: Frames(frames / 2)),
        AudioChapter(title: "Closing", startFrame: Frames(frames / 2), endFrame: Frames(frames)),
    ]
}

@Suite("FLAC, Ogg Vorbis and chapters through SoundFileWriter and VorbisFileWriter")
struct SoundFileFormatsTests {
    @Test(
        "A chapter's start is HH:MM:SS.mmm, rounded to the nearest millisecond",
        arguments: [
            (0, 44_100, "00:00:00.000"),
            (22_050, 44_100, "00:00:00.500"),
            (44_122, 44_100, "00:00:01.000"),  // 1.000499 s
            (44_123, 44_100, "00:00:01.001"),  // 1.000521 s
            (24, 48_000, "00:00:00.001"),  // exactly half a millisecond rounds up
            (23, 48_000, "00:00:00.000"),
            (48_000 * 3_723 + 12_345, 48_000, "01:02:03.257"),
            (22_050 * 360_000, 22_050, "100:00:00.000"),
        ] as [(Int64, Int, String)]
    )
    func timestamp(frame: Int64, rate: Int, expected: String) throws {
        let chapter = AudioChapter(title: "", startFrame: Frames(frame), endFrame: Frames(frame))
        #expect(chapter.timestamp(sampleRate: try #require(SampleRate(rate))) == expected)
    }

    @Test(
        "FLAC is lossless and exactly as long as written, through libsndfile and ffmpeg",
        .requiresFFmpeg,
        arguments: [
            (SampleFormat.pcm16, 44_100, 1, 30_011), (.pcm24, 48_000, 2, 48_001), (.pcm16, 22_050, 2, 1),
        ]
    )
    func flacRoundTrip(format: SampleFormat, rate: Int, channels: Int, frames: Int) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.flac")
        let samples = tones(frames: frames, channels: channels, rate: rate)
        let encoding = try writeFile(
            samples,
            silence: 1_000,
            rate: rate,
            channels: channels,
            settings: try EncoderSettings(format: .flac, sampleFormat: format),
            to: path
        )
        #expect(encoding == AudioEncoding(container: "flac", codec: "flac", quality: 5))
        let bits = format == .pcm16 ? 16 : 24
        let expected = samples.map { quantized($0, bits: bits) } + [Float](repeating: 0, count: 1_000 * channels)
        let decoded = try decodeAll(path)
        #expect(decoded.rate == rate && decoded.channels == channels)
        #expect(decoded.samples.count == expected.count, "libsndfile decodes every frame written, no more")
        #expect(decoded.samples == expected, "lossless after quantization")
        #expect(try await FFmpeg.decodedFrameCount(path) == Int64(frames + 1_000))
        #expect(try await FFmpeg.decode(path).samples == expected, "ffmpeg decodes the same samples")
        #expect(try await FFmpeg.probe(path, entries: "stream=bits_per_raw_sample") == String(bits))
    }

    @Test("The FLAC compression level reaches libFLAC: level 0 makes a larger file than level 8")
    func flacLevels() throws {
        let folder = try TemporaryFolder()
        let samples = tones(frames: 44_100, channels: 1, rate: 44_100)
        var sizes: [Int] = []
        for level in [0.0, 8.0] {
            let path = folder.path("l\(Int(level)).flac")
            let encoding = try writeFile(
                samples,
                rate: 44_100,
                channels: 1,
                settings: try EncoderSettings(format: .flac, quality: level),
                to: path
            )
            #expect(encoding.quality == level)
            sizes.append(try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        }
        #expect(sizes[0] > sizes[1], "level 0 \(sizes[0]) bytes, level 8 \(sizes[1])")
    }

    @Test(
        "Ogg Vorbis decodes to exactly the frames written, through AudioFileDecoder and ffmpeg",
        .requiresFFmpeg,
        arguments: [
            // Tone frames, then 777 of silence: 44 894, 1 777 and 778 frames in all are lengths
            // ffmpeg decoded libsndfile's Vorbis to the wrong length at.
            (44_100, 1, 44_117), (48_000, 2, 100_000), (22_050, 1, 1_000), (16_000, 2, 1), (8_000, 1, 0),
            (11_025, 2, 5_003), (96_000, 1, 9_000),
        ]
    )
    func vorbisRoundTrip(rate: Int, channels: Int, frames: Int) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.ogg")
        let samples = tones(frames: frames, channels: channels, rate: rate)
        let encoding = try writeFile(
            samples,
            silence: 777,
            rate: rate,
            channels: channels,
            settings: try EncoderSettings(format: .vorbis),
            to: path
        )
        #expect(encoding == AudioEncoding(container: "ogg", codec: "vorbis", quality: 3))
        let decoded = try decodeAll(path)
        #expect(decoded.rate == rate && decoded.channels == channels)
        #expect(decoded.samples.count == (frames + 777) * channels, "trimmed to the last page's granule position")
        let ffmpegFrames = try await FFmpeg.decodedFrameCount(path)
        // ffmpeg 5.1 trims the end only on a last page that is not also the first audio page, so the
        // writer ends the first audio page after two packets (before, these decoded long or short).
        #expect(ffmpegFrames == Int64(frames + 777), "ffmpeg trims it too: \(ffmpegFrames)")
        #expect(try await FFmpeg.probe(path, entries: "stream=codec_name") == "vorbis")
        if frames > 40_000 {
            // Lossy, but the tone is still there: the error is far below the signal.
            let error = zip(decoded.samples, samples).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +)
            let power = samples.map { Double($0) * Double($0) }.reduce(0, +)
            #expect(error < power / 100, "signal-to-noise above 20 dB")
        }
    }

    @Test("The Vorbis quality reaches libvorbis: quality 0 makes a smaller file than quality 8")
    func vorbisQualities() throws {
        let folder = try TemporaryFolder()
        let samples = tones(frames: 88_200, channels: 2, rate: 44_100).enumerated().map {
            $0.element + 0.05 * Float(sin(Double($0.offset) * 1.7))
        }
        var sizes: [Int] = []
        for quality in [0.0, 8.0] {
            let path = folder.path("q\(Int(quality)).ogg")
            let settings = try EncoderSettings(format: .vorbis, quality: quality)
            #expect(try writeFile(samples, rate: 44_100, channels: 2, settings: settings, to: path).quality == quality)
            sizes.append(try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int))
        }
        #expect(sizes[0] < sizes[1], "quality 0 \(sizes[0]) bytes, quality 8 \(sizes[1])")
    }

    @Test(
        "A Vorbis quality of −1 and a nominal bit rate are accepted, recorded, and decode to exact lengths",
        .requiresFFmpeg,
        arguments: [
            (
                try! EncoderSettings(format: .vorbis, quality: -1),
                AudioEncoding(container: "ogg", codec: "vorbis", quality: -1)
            ),
            (
                try! EncoderSettings(format: .vorbis, bitrate: 64),
                AudioEncoding(container: "ogg", codec: "vorbis", bitrate: 64)
            ),
            (
                try! EncoderSettings(format: .vorbis, bitrate: 128),
                AudioEncoding(container: "ogg", codec: "vorbis", bitrate: 128)
            ),
        ]
    )
    func vorbisBitrateAndLowQuality(settings: EncoderSettings, expected: AudioEncoding) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("b.ogg")
        let frames = 30_011
        let encoding = try writeFile(
            tones(frames: frames, channels: 2, rate: 44_100),
            silence: 333,
            rate: 44_100,
            channels: 2,
            settings: settings,
            to: path
        )
        #expect(encoding == expected)
        if let bitrate = settings.bitrate {
            #expect(
                try await FFmpeg.probe(path, entries: "stream=bit_rate") == String(bitrate * 1_000),
                "the nominal rate"
            )
        }
        let ffmpegFrames = try await FFmpeg.decodedFrameCount(path)
        #expect(ffmpegFrames == Int64(frames + 333), "ffmpeg: \(ffmpegFrames)")
        #expect(try decodeAll(path).samples.count == (frames + 333) * 2)
    }

    @Test("A Vorbis file closed short of the frames it was opened for fails, naming both counts")
    func vorbisShortClose() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.ogg")
        let sink = try AudioFileWriter.create(
            path: path,
            sampleRate: 16_000,
            channelCount: .mono,
            settings: try EncoderSettings(format: .vorbis),
            metadata: AudioMetadata(),
            frameCount: 1_000
        )
        try sink.writeSilence(frames: 999)
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: path,
                reason: "2 more frames after 999 would pass the 1000 frames it was opened for"
            )
        ) {
            try sink.write([0, 0], frames: 2)
        }
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: path,
                reason: "the file ended after 999 of the 1000 frames it was opened for"
            )
        ) {
            _ = try sink.close()
        }
    }

    @Test("Title, album and artist are tags ffprobe reads", .requiresFFmpeg, arguments: ["wav", "flac", "ogg"])
    func tags(format: String) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("t.\(format)")
        let metadata = AudioMetadata(title: "Evening – Abend", album: "Sessions", artist: "render-session")
        _ = try writeFile(
            tones(frames: 8_000, channels: 1, rate: 16_000),
            rate: 16_000,
            channels: 1,
            settings: try EncoderSettings(format: try #require(AudioFileFormat(fileExtension: format))),
            metadata: metadata,
            to: path
        )
        // ffmpeg files an Ogg stream's comments under the stream, the others under the format.
        let tags = format == "ogg" ? "stream_tags" : "format_tags"
        #expect(try await FFmpeg.probe(path, entries: "\(tags)=title") == "Evening – Abend")
        #expect(try await FFmpeg.probe(path, entries: "\(tags)=album") == "Sessions")
        #expect(try await FFmpeg.probe(path, entries: "\(tags)=artist") == "render-session")
    }

    @Test("FLAC chapters are CHAPTERnnn comments that ffprobe lists, with the tags kept", .requiresFFmpeg)
    func flacChapters() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("c.flac")
        let frames: Int64 = 96_000
        let samples = tones(frames: Int(frames), channels: 1, rate: 48_000)
        _ = try writeFile(
            samples,
            rate: 48_000,
            channels: 1,
            settings: try EncoderSettings(format: .flac),
            metadata: AudioMetadata(title: "With chapters", chapters: threeChapters(frames)),
            to: path
        )
        let chapters = try await FFmpeg.chapters(path)
        #expect(chapters.map(\.title) == ["Arrival", "Body scan – Körper", "Closing"])
        #expect(chapters.map(\.start) == [0, 0.5, 1])
        #expect(chapters.last?.end == 2)
        #expect(try await FFmpeg.probe(path, entries: "format_tags=title") == "With chapters")
        #expect(try decodeAll(path).samples == samples.map { quantized($0, bits: 16) }, "the audio is untouched")
        #expect(try await FFmpeg.decodedFrameCount(path) == frames)
    }

    @Test("Ogg Vorbis chapters are CHAPTERnnn comments that ffprobe lists; the length stays exact", .requiresFFmpeg)
    func vorbisChapters() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("c.ogg")
        let frames: Int64 = 88_200
        // Enough chapters that the comment header takes several pages.
        let many = (0..<400).map { index in
            AudioChapter(
                title: "Part \(index + 1)" + String(repeating: ".", count: 20),
                startFrame: Frames(Int64(index) * 200),
                endFrame: Frames(Int64(index + 1) * 200)
            )
        }
        for (name, chapters) in [("three", threeChapters(frames)), ("many", many)] {
            _ = try writeFile(
                tones(frames: Int(frames), channels: 2, rate: 44_100),
                rate: 44_100,
                channels: 2,
                settings: try EncoderSettings(format: .vorbis),
                metadata: AudioMetadata(title: "With chapters", chapters: chapters),
                to: path
            )
            let listed = try await FFmpeg.chapters(path)
            #expect(listed.map(\.title) == chapters.map(\.title), "\(name)")
            #expect(
                listed.map { ($0.start * 1_000).rounded() }
                    == chapters.map { (Double($0.startFrame.count) / 44.1).rounded() },
                "\(name)"
            )
            #expect(try await FFmpeg.probe(path, entries: "stream_tags=title") == "With chapters", "\(name)")
            #expect(try await FFmpeg.decodedFrameCount(path) == frames, "\(name)")
            #expect(try decodeAll(path).samples.count == Int(frames) * 2, "\(name)")
        }
    }

    @Test(
        "WAV chapters are cue points with labels, which libsndfile reads back",
        arguments: [WAVContainer.riff, .rf64]
    )
    func wavChapters(container: WAVContainer) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("c.wav")
        let frames: Int64 = 16_000
        let chapters = threeChapters(frames)
        let samples = tones(frames: Int(frames), channels: 2, rate: 8_000)
        let writer = try SoundFileWriter(
            path: path,
            sampleRate: 8_000,
            channelCount: 2,
            format: .pcm16,
            container: container,
            title: "Cues",
            chapters: chapters
        )
        try writer.write(samples, frames: Int(frames))
        #expect(try writer.close() == AudioEncoding(container: "wav", codec: "pcm_s16le"))

        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let chunks = WAVChapterChunks(chapters)
        #expect(bytes.firstRange(of: Array("cue ".utf8) + [76, 0, 0, 0] + chunks.cue) != nil, "4 + 3 × 24 bytes")
        #expect(bytes.firstRange(of: Array("LIST".utf8)) != nil)
        let labels = try #require(bytes.firstRange(of: Array("adtl".utf8)))
        #expect(labels.lowerBound < bytes.count - 64_000, "the chunks come before the samples")
        // "Body scan – Körper" is 21 bytes of UTF-8: 22 with its NUL, after the 4-byte id, and no pad (even).
        #expect(bytes.firstRange(of: Array("labl".utf8) + [26, 0, 0, 0, 2, 0, 0, 0]) != nil)
        #expect(bytes.firstRange(of: Array("Body scan – Körper".utf8) + [0] + Array("labl".utf8)) != nil)
        #expect(
            bytes.firstRange(of: Array("LIST".utf8) + [88, 0, 0, 0, 97, 100, 116, 108]) != nil,
            "78 bytes of labels and a 10-byte JUNK"
        )
        if FFmpeg.probePath != nil {
            #expect(try await FFmpeg.chapters(path).map(\.title) == chapters.map(\.title), "ffprobe reads every title")
        }
        #expect(try decodeAll(path).samples == samples.map { quantized($0, bits: 16) }, "the audio is untouched")

        guard container == .riff else { return }  // libsndfile 1.2.0 reads no cue points from RF64
        var info = SF_INFO()
        let file = try #require(sf_open(path, Int32(SFM_READ), &info))
        defer { sf_close(file) }
        var count: UInt32 = 0
        #expect(sf_command(file, Int32(SFC_GET_CUE_COUNT), &count, 4) == SF_TRUE)
        #expect(count == 3)
        var cues = SF_CUES()
        #expect(sf_command(file, Int32(SFC_GET_CUE), &cues, Int32(MemoryLayout<SF_CUES>.size)) == SF_TRUE)
        let points = withUnsafeBytes(of: &cues.cue_points) { Array($0.bindMemory(to: SF_CUE_POINT.self).prefix(3)) }
        #expect(points.map(\.sample_offset) == [0, 4_000, 8_000])
        #expect(points.map(\.indx) == [1, 2, 3])
        let names = points.map { point in
            withUnsafeBytes(of: point.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        }
        #expect(names == ["Arrival", "Body scan – Körper", "Closing"])
    }

    @Test(
        "Float FLAC cannot be asked of a writer: the settings are refused when made, naming the sample formats FLAC takes"
    )
    func floatFLACRefused() throws {
        do {
            _ = try EncoderSettings(format: .flac, sampleFormat: .float32)
            Issue.record("float FLAC settings were made")
        } catch {
            #expect(error.description == "flac holds 16- or 24-bit samples (s16, s24), not f32")
        }
    }
}
