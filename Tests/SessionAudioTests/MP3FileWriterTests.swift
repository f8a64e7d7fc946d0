import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// A test signal: silence with tone bursts at known frames (the MP3 and AAC writers' tests).
struct Bursts {
    let rate: Int
    let channels: Int
    let frameCount: Int
    /// Bursts as frame ranges.
    let spans: [Range<Int>]

    var samples: [Float] {
        var samples = [Float](repeating: 0, count: frameCount * channels)
        for span in spans {
            for frame in span {
                let value = Float(0.4 * sin(2 * Double.pi * 440 * Double(frame) / Double(rate)))
                for channel in 0..<channels { samples[frame * channels + channel] = channel == 0 ? value : -value }
            }
        }
        return samples
    }

    /// Writes the signal to `sink` in blocks of `block` frames and closes it.
    func write(to sink: some AudioFileSink, block: Int) throws -> AudioEncoding {
        let samples = self.samples
        var start = 0
        while start < frameCount {
            let frames = min(block, frameCount - start)
            try sink.write(Array(samples[(start * channels)..<((start + frames) * channels)]), frames: frames)
            start += frames
        }
        return try sink.close()
    }

    /// Whether `frame` is at least `guardFrames` away from every burst.
    func isFarFromSound(_ frame: Int, guardFrames: Int) -> Bool {
        spans.allSatisfy { frame < $0.lowerBound - guardFrames || frame >= $0.upperBound + guardFrames }
    }
}

/// Writes `signal` as an MP3 through `MP3FileWriter`, in blocks of `block` frames.
@discardableResult
private func writeMP3(
    _ signal: Bursts,
    to path: String,
    settings: EncoderSettings = try! EncoderSettings(format: .mp3),
    metadata: AudioMetadata = AudioMetadata(),
    block: Int = 4_096
) throws -> (MP3FileWriter, AudioEncoding) {
    let writer = try MP3FileWriter(
        path: path,
        sampleRate: SampleRate(signal.rate)!,
        channelCount: ChannelCount(signal.channels)!,
        settings: settings,
        metadata: metadata,
        frameCount: Frames(Int64(signal.frameCount))
    )
    return (writer, try signal.write(to: writer, block: block))
}

/// The frames of an MP3 file after its ID3v2 tag, as headers.
private func mpegFrames(of path: String) throws -> [MPEGFrameHeader] {
    let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    var offset = 0
    if bytes.starts(with: Array("ID3".utf8)) {
        offset = 10 + bytes[6..<10].reduce(0) { $0 << 7 | Int($1) }
    }
    var headers: [MPEGFrameHeader] = []
    while offset + 4 <= bytes.count, let header = MPEGFrameHeader(bytes[offset...]) {
        headers.append(header)
        offset += header.byteCount
    }
    #expect(offset == bytes.count, "the file is whole frames to its end")
    return headers
}

@Suite("MP3 files that skip encoding silence", .tags(.concurrent))
struct MP3FileWriterTests {
    @Test(
        "Decoders give back exactly the frames written, with silence decoding to digital zero",
        arguments: [(22_050, 1), (44_100, 2), (8_000, 1), (48_000, 2)]
    )
    func exactLength(rate: Int, channels: Int) async throws {
        let folder = try TemporaryFolder()
        let second = rate
        // A burst at frame 0, two close together (one span), a lone one, one running to the end.
        let signal = Bursts(
            rate: rate,
            channels: channels,
            frameCount: 6 * second + 123,
            spans: [
                0..<(second / 4), (second + 7)..<(second + second / 3), (second + second / 3 + 100)..<(2 * second),
                (3 * second + 555)..<(3 * second + 900), (5 * second)..<(6 * second + 123),
            ]
        )
        let path = folder.path("a.mp3")
        let (writer, encoding) = try writeMP3(signal, to: path)
        #expect(writer.encodedSpanCount == 4, "the two bursts 100 frames apart are one span")
        #expect(writer.silentFrameCount > 0)
        let decoded = try decodeAll(path)
        #expect(decoded.samples.count == signal.frameCount * channels, "libmpg123")
        #expect(try await FFmpeg.decodedFrameCount(path) == Int64(signal.frameCount), "ffmpeg")
        #expect(try AudioFileDecoder.verifyMPEG(path: path).gapless)
        // Far from sound (50 ms plus a frame), silence decodes to exact zeros.
        let guardFrames = rate / 20 + 1_152
        var nonzero = 0
        for frame in 0..<signal.frameCount where signal.isFarFromSound(frame, guardFrames: guardFrames) {
            for channel in 0..<channels where decoded.samples[frame * channels + channel] != 0 { nonzero += 1 }
        }
        #expect(nonzero == 0)
        #expect(encoding.container == "mp3" && encoding.codec == "mp3" && encoding.quality == 6)
        #expect(encoding.encoderDelay == 1_105)
    }

    @Test("Skipping silence decodes as a whole-file encode does: same length, same speech within codec noise")
    func matchesWholeFileEncode() throws {
        let folder = try TemporaryFolder()
        let signal = Bursts(
            rate: 22_050,
            channels: 1,
            frameCount: 200_000,
            spans: [3_000..<20_000, 70_001..<90_000, 150_000..<151_000]
        )
        try writeMP3(signal, to: folder.path("skip.mp3"))
        try writeMP3(
            signal,
            to: folder.path("whole.mp3"),
            settings: try EncoderSettings(format: .mp3, skipsSilence: false)
        )
        let skipped = try decodeAll(folder.path("skip.mp3")).samples
        let whole = try decodeAll(folder.path("whole.mp3")).samples
        let original = signal.samples
        #expect(skipped.count == whole.count && whole.count == original.count)
        func snr(_ decoded: [Float]) -> Double {
            var (signalPower, noisePower) = (0.0, 0.0)
            for span in signal.spans {
                for frame in span {
                    signalPower += Double(original[frame] * original[frame])
                    let error = Double(decoded[frame] - original[frame])
                    noisePower += error * error
                }
            }
            return 10 * log10(signalPower / noisePower)
        }
        #expect(snr(skipped) > 20)
        #expect(abs(snr(skipped) - snr(whole)) < 1, "within 1 dB of the whole-file encode")
        #expect(Set(skipped.map { abs($0) < 0.001 ? 0 : 1 }).count == 2)
    }

    @Test("A constant bit rate keeps every frame at that rate, silent ones included")
    func constantBitRate() throws {
        let folder = try TemporaryFolder()
        let signal = Bursts(rate: 22_050, channels: 1, frameCount: 100_000, spans: [40_000..<50_000])
        let path = folder.path("c.mp3")
        let (writer, encoding) = try writeMP3(
            signal,
            to: path,
            settings: try EncoderSettings(format: .mp3, bitrate: 64)
        )
        #expect(writer.silentFrameCount > 0)
        let frames = try mpegFrames(of: path)
        #expect(Set(frames.dropFirst().map(\.kilobits)) == [64])
        #expect(frames.count == 1 + (100_000 + 1_105 + 575) / 576)
        #expect(encoding.bitrate == 64 && encoding.quality == nil)
        #expect(try decodeAll(path).samples.count == 100_000)
    }

    @Test("Chapters and tags are ID3v2 frames ffprobe lists")
    func chaptersAndTags() async throws {
        let folder = try TemporaryFolder()
        let signal = Bursts(rate: 22_050, channels: 1, frameCount: 66_150, spans: [1_000..<5_000])
        let path = folder.path("t.mp3")
        let metadata = AudioMetadata(
            title: "Die Stille",
            album: "Reactivity",
            artist: "render-session",
            chapters: [
                AudioChapter(title: "opening", startFrame: 0, endFrame: 22_050),
                AudioChapter(title: "teachings ü", startFrame: 22_050, endFrame: 55_125),
                AudioChapter(title: "closing", startFrame: 55_125, endFrame: 66_150),
            ]
        )
        try writeMP3(signal, to: path, metadata: metadata)
        #expect(
            try await FFmpeg.chapters(path) == [
                FFmpeg.Chapter(title: "opening", start: 0, end: 1),
                FFmpeg.Chapter(title: "teachings ü", start: 1, end: 2.5),
                FFmpeg.Chapter(title: "closing", start: 2.5, end: 3),
            ]
        )
        #expect(try await FFmpeg.probe(path, entries: "format_tags=title") == "Die Stille")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=album") == "Reactivity")
        #expect(try await FFmpeg.decodedFrameCount(path) == 66_150)
    }

    @Test("A session that is all silence is all ready-made frames")
    func allSilence() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("s.mp3")
        let writer = try MP3FileWriter(
            path: path,
            sampleRate: 44_100,
            channelCount: .stereo,
            settings: try EncoderSettings(format: .mp3),
            metadata: AudioMetadata(),
            frameCount: 441_000
        )
        try writer.writeSilence(frames: 441_000)
        try writer.close()
        #expect(writer.encodedSpanCount == 0)
        let decoded = try decodeAll(path).samples
        #expect(decoded.count == 882_000 && decoded.allSatisfy { $0 == 0 })
    }

    @Test("A file closed early, or opened for a rate or channels MP3 cannot hold, is an error")
    func refusals() throws {
        let folder = try TemporaryFolder()
        let writer = try MP3FileWriter(
            path: folder.path("e.mp3"),
            sampleRate: 22_050,
            channelCount: .mono,
            settings: try EncoderSettings(format: .mp3),
            metadata: AudioMetadata(),
            frameCount: 1_000
        )
        try writer.writeSilence(frames: 10)
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: folder.path("e.mp3"),
                reason: "the file ended after 10 of the 1000 frames it was opened for"
            )
        ) { try writer.close() }
        #expect(
            throws: AudioError(
                .unsupportedFormat,
                path: folder.path("f.mp3"),
                reason:
                    "mp3 cannot hold 96000 Hz; it takes one of 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000 Hz"
            )
        ) {
            _ = try AudioFileWriter.create(
                path: folder.path("f.mp3"),
                sampleRate: 96_000,
                channelCount: .mono,
                settings: try EncoderSettings(format: .mp3),
                metadata: AudioMetadata(),
                frameCount: 10
            )
        }
        #expect(
            try EncoderSettings(format: .mp3).format.problem(sampleRate: 44_100, channelCount: 6)
                == "mp3 cannot hold 6 channels; it takes 1 to 2"
        )
    }
}
