import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

@Suite("Opus output")
struct OpusWriterTests {
    /// A linear chirp from 300 Hz to 6 kHz over `length` frames under a raised-cosine envelope:
    /// its autocorrelation has one sharp peak, so a shift of even one frame shows.
    static func chirp(length: Int, amplitude: Float = 0.5) -> [Float] {
        (0..<length).map { index in
            let t = Double(index) / 48_000
            let duration = Double(length) / 48_000
            let phase = 2 * Double.pi * (300 * t + (6_000 - 300) * t * t / (2 * duration))
            let envelope = 0.5 - 0.5 * cos(2 * Double.pi * Double(index) / Double(length))
            return amplitude * Float(envelope * sin(phase))
        }
    }

    /// `frameCount` frames of silence with `chirp` (mono) starting at `onset`, on every channel.
    static func signal(frameCount: Int, onset: Int, channels: Int) -> [Float] {
        var samples = [Float](repeating: 0, count: frameCount * channels)
        for (index, value) in chirp(length: 12_000).enumerated() where onset + index < frameCount {
            for channel in 0..<channels { samples[(onset + index) * channels + channel] = value }
        }
        return samples
    }

    /// Writes `samples` as Opus in uneven pieces, with a stretch of `writeSilence` in the middle.
    @discardableResult
    static func write(
        _ samples: [Float],
        channels: Int,
        to path: String,
        settings: EncoderSettings = try! EncoderSettings(format: .opus),
        metadata: AudioMetadata = AudioMetadata(),
        silence: Int = 0
    ) throws -> AudioEncoding {
        let frames = samples.count / channels + silence
        let sink = try AudioFileWriter.create(
            path: path,
            sampleRate: 48_000,
            channelCount: ChannelCount(channels)!,
            settings: settings,
            metadata: metadata,
            frameCount: Frames(Int64(frames))
        )
        var offset = 0
        var piece = 1_000
        while offset < samples.count / channels {
            let count = min(piece, samples.count / channels - offset)
            try sink.write(Array(samples[(offset * channels)..<((offset + count) * channels)]), frames: count)
            offset += count
            piece = piece * 3 / 2 + 7
        }
        try sink.writeSilence(frames: Frames(Int64(silence)))
        #expect(sink.framesWritten == Frames(Int64(frames)))
        return try sink.close()
    }

    /// The lag in −`range` … `range` at which `decoded` best matches `original` (channel 0 of each).
    static func lag(of decoded: [Float], against original: [Float], channels: Int, range: Int = 200) -> Int {
        let frames = min(decoded.count, original.count) / channels
        var best = (lag: Int.min, score: -Double.infinity)
        for lag in -range...range {
            var score = 0.0
            for frame in max(0, -lag)..<min(frames, frames - lag) {
                score += Double(original[frame * channels]) * Double(decoded[(frame + lag) * channels])
            }
            if score > best.score { best = (lag, score) }
        }
        return best.lag
    }

    @Test(
        "Decodes through ffmpeg to exactly the frames written, unshifted",
        .requiresFFmpeg,
        arguments: [(1, 48_000, 0), (2, 30_001, 0), (1, 961, 0), (1, 48_000, 50_017), (2, 1, 0)]
    )
    func ffmpegRoundTrip(channels: Int, frames: Int, silence: Int) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        let samples = Self.signal(frameCount: frames, onset: 4_321, channels: channels)
        try Self.write(samples, channels: channels, to: path, silence: silence)
        let (decoded, decodedChannels) = try await FFmpeg.decode(path)
        #expect(decodedChannels == channels)
        #expect(decoded.count / channels == frames + silence, "ffmpeg decodes every frame written, no more")
        if frames > 16_321 {
            #expect(Self.lag(of: decoded, against: samples, channels: channels) == 0, "the chirp is not shifted")
        }
    }

    @Test("Decodes through libsndfile (AudioFileDecoder) to exactly the frames written, unshifted")
    func soundFileRoundTrip() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        let samples = Self.signal(frameCount: 40_000, onset: 9_999, channels: 2)
        try Self.write(samples, channels: 2, to: path, silence: 12_345)
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount == Frames(52_345))
        #expect(measurement.sampleRate.hertz == 48_000 && measurement.channelCount.count == 2)
        let decoder = try AudioFileDecoder(path: path)
        var decoded: [Float] = []
        var block: [Float] = []
        while case let count = try decoder.read(into: &block, maximumFrames: 4_096), count > 0 {
            decoded += block[0..<(count * 2)]
        }
        #expect(decoded.count == 52_345 * 2)
        #expect(Self.lag(of: decoded, against: samples, channels: 2) == 0)
    }

    @Test(
        "Decodes through libavcodec's own Opus decoder, when asked, to the same frames as libsndfile's libopus, unshifted",
        arguments: [1, 2]
    )
    func libavcodecRoundTrip(channels: Int) throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        let samples = Self.signal(frameCount: 40_000, onset: 9_999, channels: channels)
        try Self.write(samples, channels: channels, to: path, silence: 12_345)
        func decoded(throughLibavcodec: Bool) throws -> (samples: [Float], format: String, gapless: Bool) {
            let decoder = try AudioFileDecoder(path: path, opusThroughLibavcodec: throughLibavcodec)
            #expect(decoder.sampleRate.hertz == 48_000 && decoder.channelCount.count == channels)
            var all: [Float] = []
            var block: [Float] = []
            while case let count = try decoder.read(into: &block, maximumFrames: 4_096), count > 0 {
                all += block[0..<(count * channels)]
            }
            return (all, decoder.formatName, decoder.gapless)
        }
        let libopus = try decoded(throughLibavcodec: false)
        let libavcodec = try decoded(throughLibavcodec: true)
        #expect(libavcodec.format == "Ogg Opus" && libavcodec.gapless && libopus.format != "Ogg Opus")
        #expect(libavcodec.samples.count == 52_345 * channels, "\(libavcodec.samples.count / channels) frames")
        #expect(Self.lag(of: libavcodec.samples, against: samples, channels: channels) == 0)
        // Two decoders of one stream: the same sound to within float rounding of their transforms.
        let difference = zip(libopus.samples, libavcodec.samples).map { abs($0 - $1) }.max() ?? 1
        #expect(difference < 1e-3, "largest difference \(difference)")
    }

    @Test("A chirp's onset lands on its frame", .requiresFFmpeg, arguments: [0, 1, 4_801, 24_017])
    func onset(frame: Int) async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        let samples = Self.signal(frameCount: frame + 24_000, onset: frame, channels: 1)
        try Self.write(samples, channels: 1, to: path, settings: try EncoderSettings(format: .opus, bitrate: 64))
        let (decoded, _) = try await FFmpeg.decode(path)
        #expect(decoded.count == samples.count)
        #expect(Self.lag(of: decoded, against: samples, channels: 1) == 0)
        let error = zip(samples, decoded).reduce(0.0) { $0 + Double(($1.0 - $1.1) * ($1.0 - $1.1)) }
        let energy = samples.reduce(0.0) { $0 + Double($1 * $1) }
        #expect(error / energy < 0.1, "the decoded chirp matches the input (relative error \(error / energy))")
    }

    @Test("Tags and chapters read back through ffprobe", .requiresFFmpeg)
    func tagsAndChapters() async throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        let metadata = AudioMetadata(
            title: "Evening — body scan",
            album: "Sessions",
            artist: "Render Session",
            chapters: [
                AudioChapter(title: "Arrive", startFrame: 0, endFrame: 36_024),
                AudioChapter(title: "Breath", startFrame: 36_024, endFrame: 96_000),
                AudioChapter(title: "Close", startFrame: 96_000, endFrame: 144_000),
            ]
        )
        try Self.write([Float](repeating: 0, count: 144_000), channels: 1, to: path, metadata: metadata)
        // ffmpeg (5.1) puts an Ogg stream's Vorbis comments on the stream, not the format.
        #expect(try await FFmpeg.probe(path, entries: "stream_tags=title") == "Evening — body scan")
        #expect(try await FFmpeg.probe(path, entries: "stream_tags=album") == "Sessions")
        #expect(try await FFmpeg.probe(path, entries: "stream_tags=artist") == "Render Session")
        let chapters = try await FFmpeg.chapters(path)
        #expect(chapters.map(\.title) == ["Arrive", "Breath", "Close"])
        // 36 024 frames is 750.5 ms, written as 00:00:00.751.
        #expect(chapters.map(\.start) == [0, 0.751, 2])
        // ffprobe ends the last chapter at the duration it reports, which counts the 312 frames of
        // pre-skip (3.0065 s) although ffmpeg decodes exactly 3 s.
        let end = chapters.last?.end ?? 0
        #expect(end >= 3 && end <= 3 + 312.0 / 48_000 + 0.001, "the last chapter ends with the file, not at \(end)")
    }

    @Test(
        "Chapter times are frames at 48 kHz rounded to the millisecond",
        arguments: [
            (0, "00:00:00.000"), (23, "00:00:00.000"), (24, "00:00:00.001"), (36_024, "00:00:00.751"),
            // 1 h 2 min 3.9995 s rounds up to 4 s; 100 hours.
            (178_751_976, "01:02:04.000"), (17_280_000_000, "100:00:00.000"),
        ] as [(Int64, String)]
    )
    func chapterTimestamp(frame: Int64, expected: String) {
        let chapter = AudioChapter(title: "", startFrame: Frames(frame), endFrame: Frames(frame))
        #expect(chapter.timestamp(sampleRate: 48_000) == expected)
    }

    @Test("bitrate is hard CBR, quality VBR at its target, neither the documented default")
    func settingsAreRecorded() throws {
        let folder = try TemporaryFolder()
        let samples = Self.signal(frameCount: 96_000, onset: 0, channels: 1)
        let noise = (0..<96_000).map { Float(sin(Double($0) * 0.37) * sin(Double($0) * 0.0011)) * 0.3 }
        let constant = try Self.write(
            noise,
            channels: 1,
            to: folder.path("cbr.opus"),
            settings: try EncoderSettings(format: .opus, bitrate: 32)
        )
        #expect(
            constant == AudioEncoding(container: "ogg", codec: "opus", bitrate: 32, encoderDelay: 312, padding: 648)
        )
        let variable = try Self.write(
            samples,
            channels: 1,
            to: folder.path("vbr.opus"),
            settings: try EncoderSettings(format: .opus, quality: 40)
        )
        #expect(variable.bitrate == nil && variable.quality == 40 && variable.encoderDelay == 312)
        let fallback = try Self.write(samples, channels: 2, to: folder.path("default.opus"))
        #expect(fallback.bitrate == nil && fallback.quality == 48, "stereo defaults to 48 kb/s VBR")
        // CBR at 32 kb/s: 101 packets of 80 bytes (plus the Ogg pages and headers).
        let size = try FileManager.default.attributesOfItem(atPath: folder.path("cbr.opus"))[.size] as? Int ?? 0
        #expect((8_000...9_500).contains(size), "2 s at 32 kb/s CBR is about 8 kB, not \(size) bytes")
    }

    @Test("close() fails when fewer frames were written than promised, and a write past them fails")
    func frameCountIsEnforced() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("short.opus")
        let sink = try AudioFileWriter.create(
            path: path,
            sampleRate: 48_000,
            channelCount: .mono,
            settings: try EncoderSettings(format: .opus),
            metadata: AudioMetadata(),
            frameCount: 10_000
        )
        try sink.write([Float](repeating: 0, count: 4_000), frames: 4_000)
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: path,
                reason: "7000 more frames after 4000 would pass the 10000 frames the file is for"
            )
        ) {
            try sink.writeSilence(frames: 7_000)
        }
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: path,
                reason: "the file ended after 4000 of the 10000 frames it is for"
            )
        ) {
            try sink.close()
        }
    }

    @Test("A rate other than 48000 Hz is refused, naming 48000")
    func otherRatesAreRefused() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("a.opus")
        #expect(
            throws: AudioError(.unsupportedFormat, path: path, reason: "opus cannot hold 44100 Hz; it takes 48000 Hz")
        ) {
            try AudioFileWriter.create(
                path: path,
                sampleRate: 44_100,
                channelCount: .stereo,
                settings: try EncoderSettings(format: .opus),
                metadata: AudioMetadata(),
                frameCount: 100
            )
        }
        #expect(!FileManager.default.fileExists(atPath: path), "nothing was created")
    }
}
