import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// Writes `signal` as M4A (or M4B) through `AACFileWriter`, in blocks of `block` frames.
@discardableResult
private func writeM4A(
    _ signal: Bursts,
    to path: String,
    settings: EncoderSettings = try! EncoderSettings(format: .m4a),
    metadata: AudioMetadata = AudioMetadata(),
    block: Int = 4_096
) throws -> (AACFileWriter, AudioEncoding) {
    let writer = try AACFileWriter(
        path: path,
        sampleRate: SampleRate(signal.rate)!,
        channelCount: ChannelCount(signal.channels)!,
        settings: settings,
        metadata: metadata,
        frameCount: Frames(Int64(signal.frameCount))
    )
    return (writer, try signal.write(to: writer, block: block))
}

/// The top-level boxes of an MP4 file: type, where each starts and ends, and its header's size.
private func topLevelBoxes(_ bytes: [UInt8]) -> [(type: String, range: Range<Int>, headerSize: Int)] {
    func number(_ range: Range<Int>) -> Int { bytes[range].reduce(0) { $0 << 8 | Int($1) } }
    var boxes: [(type: String, range: Range<Int>, headerSize: Int)] = []
    var offset = 0
    while offset + 8 <= bytes.count {
        var size = number(offset..<(offset + 4))
        var header = 8
        if size == 1 {
            size = number((offset + 8)..<(offset + 16))
            header = 16
        }
        guard size >= header, offset + size <= bytes.count else { break }
        let type = String(decoding: bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
        boxes.append((type, offset..<(offset + size), header))
        offset += size
    }
    return boxes
}

/// The shift of `decoded` against `original` (interleaved, `channels` wide) within ±64 frames
/// that matches them best over `frames`.
private func bestLag(_ decoded: [Float], _ original: [Float], channels: Int, over frames: Range<Int>) -> Int {
    (-64...64).max { a, b in
        correlation(decoded, original, channels: channels, frames: frames, lag: a)
            < correlation(decoded, original, channels: channels, frames: frames, lag: b)
    }!
}

private func correlation(_ decoded: [Float], _ original: [Float], channels: Int, frames: Range<Int>, lag: Int) -> Double
{
    var sum = 0.0
    for frame in frames { sum += Double(decoded[(frame + lag) * channels]) * Double(original[frame * channels]) }
    return sum
}

@Suite("M4A and M4B files: AAC with exact timing, skipping silence", .tags(.concurrent))
struct AACFileWriterTests {
    @Test(
        "ffmpeg decodes exactly the frames written, each on its frame, with silence decoding to digital zero",
        arguments: [(22_050, 1), (44_100, 2), (8_000, 1), (48_000, 2)]
    )
    func exactLength(rate: Int, channels: Int) async throws {
        try #require(FFmpeg.path != nil, "ffmpeg is not installed")
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
        let path = folder.path("a.m4a")
        let (writer, encoding) = try writeM4A(signal, to: path)
        #expect(writer.encodedSpanCount == 4, "the two bursts 100 frames apart are one span")
        #expect(writer.silentPacketCount > 0)
        let decoded = try await FFmpeg.decode(path)
        #expect(decoded.samples.count == signal.frameCount * channels, "ffmpeg decodes every frame, no more")
        let ours = try decodeAll(path)
        #expect(ours.samples.count == decoded.samples.count, "our decoder gives the same length")
        let firstDifference = zip(ours.samples, decoded.samples).enumerated().first { abs($1.0 - $1.1) > 1e-6 }?.offset
        #expect(firstDifference == nil, "our decoder gives ffmpeg's samples, sample for sample")
        // The lone burst decodes on its own frames: its best match with what was written is at lag 0.
        let lone = (3 * second + 555)..<(3 * second + 900)
        #expect(bestLag(decoded.samples, signal.samples, channels: channels, over: lone) == 0)
        // Far from sound (two packets plus 50 ms), silence decodes to exact zeros.
        let guardFrames = rate / 20 + 2_048
        var nonzero = 0
        for frame in 0..<signal.frameCount where signal.isFarFromSound(frame, guardFrames: guardFrames) {
            for channel in 0..<channels where decoded.samples[frame * channels + channel] != 0 { nonzero += 1 }
        }
        #expect(nonzero == 0)
        let lead = (1_024 - Int64(signal.frameCount) % 1_024) % 1_024
        #expect(encoding.container == "mp4" && encoding.codec == "aac")
        #expect(encoding.encoderDelay == Frames(1_024 + lead) && encoding.padding == .zero)
        #expect(encoding.bitrate == min(64 * channels, 6_144 * channels * rate / 1_024 / 1_000))
    }

    @Test(
        "Skipping silence decodes to the same length as a whole-file encode, the sound coded at the rate asked for, in a smaller file"
    )
    func matchesWholeFileEncode() async throws {
        try #require(FFmpeg.path != nil, "ffmpeg is not installed")
        let folder = try TemporaryFolder()
        let signal = Bursts(
            rate: 22_050,
            channels: 1,
            frameCount: 200_000,
            spans: [3_000..<20_000, 70_001..<90_000, 150_000..<151_000]
        )
        let original = signal.samples
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
        let (skipping, _) = try writeM4A(signal, to: folder.path("skip.m4a"))
        let (whole, _) = try writeM4A(
            signal,
            to: folder.path("whole.m4a"),
            settings: try EncoderSettings(format: .m4a, skipsSilence: false)
        )
        #expect(skipping.encodedSpanCount == 3 && whole.encodedSpanCount == 1 && whole.silentPacketCount == 0)
        let skipped = try await FFmpeg.decode(folder.path("skip.m4a")).samples
        let wholeSamples = try await FFmpeg.decode(folder.path("whole.m4a")).samples
        #expect(skipped.count == original.count && wholeSamples.count == original.count)
        // A whole-file encode at an average rate spends what the silence saves on the sound
        // (48 dB here); the spans get the 64 kb/s asked for (38 dB), in a smaller file.
        #expect(snr(skipped) > 30, "\(snr(skipped))")
        #expect(snr(wholeSamples) > 30, "\(snr(wholeSamples))")
        let size = { (name: String) in
            try FileManager.default.attributesOfItem(atPath: folder.path(name))[.size] as! Int
        }
        #expect(try size("skip.m4a") < (try size("whole.m4a")))
    }

    @Test(
        "Every onset after skipped silence decodes its first 20 ms within 3 dB of a whole-file encode's SNR",
        arguments: [(AudioFileFormat.m4a, 1), (.m4b, 2)]
    )
    func onsetsAfterSilence(format: AudioFileFormat, channels: Int) throws {
        let folder = try TemporaryFolder()
        let rate = 44_100
        let onsets = Syllables(rate: rate, channels: channels)
        let skipped = try onsets.encodeAndDecode(to: folder.path("skip.\(format)"), format: format, skipsSilence: true)
        let whole = try onsets.encodeAndDecode(to: folder.path("whole.\(format)"), format: format, skipsSilence: false)
        #expect(skipped.count == onsets.samples.count && whole.count == onsets.samples.count)
        let firstFrames = rate / 50
        for start in onsets.starts {
            let (ours, reference) = (
                onsets.snr(skipped, over: start..<(start + firstFrames)),
                onsets.snr(whole, over: start..<(start + firstFrames))
            )
            #expect(
                ours >= reference - 3,
                "the onset at frame \(start) decodes its first 20 ms at \(ours) dB, a whole-file encode at \(reference) dB"
            )
        }
    }

    @Test(
        "Chapters are a QuickTime chapter track and a Nero chpl atom; tags and iTunSMPB are in the ilst; M4B has its brand"
    )
    func chaptersAndTags() async throws {
        try #require(FFmpeg.path != nil, "ffmpeg is not installed")
        let folder = try TemporaryFolder()
        let signal = Bursts(rate: 22_050, channels: 1, frameCount: 66_150, spans: [1_000..<5_000])
        let path = folder.path("t.m4b")
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
        try writeM4A(signal, to: path, settings: try EncoderSettings(format: .m4b), metadata: metadata)
        #expect(
            try await FFmpeg.chapters(path) == [
                FFmpeg.Chapter(title: "opening", start: 0, end: 1),
                FFmpeg.Chapter(title: "teachings ü", start: 1, end: 2.5),
                FFmpeg.Chapter(title: "closing", start: 2.5, end: 3),
            ]
        )
        #expect(try await FFmpeg.probe(path, entries: "format_tags=title") == "Die Stille")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=album") == "Reactivity")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=artist") == "render-session")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=major_brand") == "M4B")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=comment") == "")
        #expect(try await FFmpeg.probe(path, entries: "format_tags=encoder") == "render-session")
        #expect(try await FFmpeg.decodedFrameCount(path) == 66_150)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let record =
            " 00000000 0000059A 00000000 0000000000010266 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000"
        let info = MP4GaplessInfo(priming: 1_024 + 410, padding: 0, frameCount: 66_150)
        #expect(info.text == record)
        #expect(bytes.indices.contains { bytes[$0...].starts(with: info.atom) }, "the ---- atom holds iTunSMPB")
        #expect(bytes.indices.contains { bytes[$0...].starts(with: Array("chpl".utf8)) })
        // The index comes before the audio, straight after the file type, with no free space.
        #expect(topLevelBoxes(bytes).map(\.type) == ["ftyp", "moov", "mdat"])
    }

    @Test(
        "Past 2^32 frames the movie's boxes take 64-bit times, and past what 4 GiB could hold 64-bit offsets; below both, 32 bits",
        arguments: [(hours: 1, wide: false), (hours: 12.5, wide: true)]
    )
    func movieLayout(hours: Double, wide: Bool) throws {
        let frames = Int64(hours * 3_600 * 96_000)
        let movie = MP4Movie(
            brand: .audio,
            sampleRate: 96_000,
            channelCount: 2,
            audioSpecificConfig: [0x12, 0x10],
            packetCount: frames / 1_024 + 1,
            priming: 1_024,
            frameCount: frames,
            metadata: AudioMetadata(chapters: [AudioChapter(title: "all", startFrame: 0, endFrame: Frames(frames))])
        )
        #expect(movie.largeOffsets == wide)
        #expect(movie.mediaDataHeader(payloadSize: 1 << 20).count == (wide ? 16 : 8))
        let sizes = [UInt32](repeating: 0, count: Int(movie.packetCount))
        let index = movie.movie(packetSizes: sizes, audioOffset: 1 << 20, chapterOffset: 1 << 10)
        let filled = movie.movie(
            packetSizes: sizes.indices.map { UInt32($0 % 1_500) },
            audioOffset: 1 << 30,
            chapterOffset: 1 << 29
        )
        #expect(filled.count == index.count, "the moov's length does not depend on the packets")
        #expect(topLevelBoxes(index).map(\.type) == ["moov"])
        #expect(index.firstRange(of: Array((wide ? "co64" : "stco").utf8)) != nil)
        #expect(index.firstRange(of: Array((wide ? "stco" : "co64").utf8)) == nil)
        for name in ["mvhd", "tkhd", "mdhd"] {
            let header = try #require(index.firstRange(of: Array(name.utf8)), "\(name) is written")
            #expect(index[header.upperBound] == (wide ? 1 : 0), "\(name)'s version")
        }
    }

    @Test(
        "A real 12.5-hour M4A at 96 kHz is read exact by ffprobe: 64-bit times and offsets",
        .enabled(
            if: ProcessInfo.processInfo.environment["RENDER_SESSION_LONG_TESTS"] != nil,
            "writing 12.5 hours of audio takes 145 s under the address sanitizer; set RENDER_SESSION_LONG_TESTS=1 to run it"
        )
    )
    func longFile() async throws {
        try #require(FFmpeg.path != nil, "ffmpeg is not installed")
        let folder = try TemporaryFolder()
        let path = folder.path("long.m4a")
        // 12.5 hours at 96 kHz: 4.3 × 10^9 frames in 4.2 million packets, all silence.
        let frames: Int64 = 4_320_000_000
        let writer = try AACFileWriter(
            path: path,
            sampleRate: 96_000,
            channelCount: .stereo,
            settings: try EncoderSettings(format: .m4a),
            metadata: AudioMetadata(chapters: [
                AudioChapter(title: "all", startFrame: 0, endFrame: Frames(frames))
            ]),
            frameCount: Frames(frames)
        )
        try writer.writeSilence(frames: Frames(frames))
        try writer.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let boxes = topLevelBoxes(bytes)
        #expect(boxes.map(\.type) == ["ftyp", "moov", "mdat"])
        #expect(boxes.last?.headerSize == 16, "the mdat's size takes 64 bits")
        let moov = try #require(boxes.first { $0.type == "moov" })
        let index = bytes[moov.range]
        #expect(index.firstRange(of: Array("co64".utf8)) != nil && index.firstRange(of: Array("stco".utf8)) == nil)
        let header = try #require(index.firstRange(of: Array("mvhd".utf8)))
        #expect(index[header.upperBound] == 1, "mvhd is version 1")
        #expect(try await FFmpeg.probe(path, entries: "stream=duration_ts") == "4320000000")
        #expect(try await FFmpeg.probe(path, entries: "stream=nb_frames") == String(frames / 1_024 + 1))
        #expect(try await FFmpeg.chapters(path) == [FFmpeg.Chapter(title: "all", start: 0, end: 45_000)])
    }

    @Test("A session that is all silence is all ready-made packets, decoding to digital zero")
    func allSilence() async throws {
        try #require(FFmpeg.path != nil, "ffmpeg is not installed")
        let folder = try TemporaryFolder()
        let path = folder.path("s.m4a")
        let writer = try AACFileWriter(
            path: path,
            sampleRate: 44_100,
            channelCount: .stereo,
            settings: try EncoderSettings(format: .m4a, quality: 1),
            metadata: AudioMetadata(),
            frameCount: 441_000
        )
        try writer.writeSilence(frames: 441_000)
        let encoding = try writer.close()
        #expect(writer.encodedSpanCount == 0)
        #expect(encoding.quality == 1 && encoding.bitrate == nil)
        let decoded = try await FFmpeg.decode(path).samples
        #expect(decoded.count == 882_000 && decoded.allSatisfy { $0 == 0 })
    }

    @Test("A file closed early, or asked for a rate, channels or bit rate AAC-LC cannot hold, is an error")
    func refusals() throws {
        let folder = try TemporaryFolder()
        let writer = try AACFileWriter(
            path: folder.path("e.m4a"),
            sampleRate: 22_050,
            channelCount: .mono,
            settings: try EncoderSettings(format: .m4a),
            metadata: AudioMetadata(),
            frameCount: 1_000
        )
        try writer.writeSilence(frames: 10)
        #expect(
            throws: AudioError(
                .cannotWrite,
                path: folder.path("e.m4a"),
                reason: "the file ended after 10 of the 1000 frames it was opened for"
            )
        ) { try writer.close() }
        #expect(
            try EncoderSettings(format: .m4a).problem(sampleRate: 7_000, channelCount: 1)
                == "m4a cannot hold 7000 Hz; it takes one of 8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 64000, 88200, 96000 Hz"
        )
        #expect(
            try EncoderSettings(format: .m4b, bitrate: 200).problem(sampleRate: 22_050, channelCount: 1)
                == "m4b at 22050 Hz mono takes a bit rate of at most 132 kb/s, not 200"
        )
        #expect(
            try EncoderSettings(format: .m4a).problem(sampleRate: 44_100, channelCount: 3)
                == "m4a cannot hold 3 channels; it takes 1 to 2"
        )
        #expect {
            try EncoderSettings(format: .m4a, quality: 3)
        } throws: {
            ($0 as? EncoderSettings.Problem)?.description == "m4a takes a quality of 0.1 to 2, not 3"
        }
    }
}

/// Eight short syllables of a voice (a harmonic tone with a breath of seeded noise, a 3 ms attack),
/// each after more than a second of digital silence and starting at another place in its packet:
/// what the first word after a pause looks like to an encoder.
private struct Syllables {
    let rate: Int
    let channels: Int
    /// Where each syllable starts, in frames.
    let starts: [Int]
    let samples: [Float]

    init(rate: Int, channels: Int) {
        self.rate = rate
        self.channels = channels
        let length = rate * 3 / 10
        starts = (0..<8).map { rate + $0 * (rate + length + 2_000) + $0 * 389 }
        let frameCount = starts.last! + length + rate
        var samples = [Float](repeating: 0, count: frameCount * channels)
        var generator = SeededGenerator(seed: 39)
        for (index, start) in starts.enumerated() {
            let pitch = 120 + 20 * Double(index)
            for frame in 0..<length {
                let time = Double(frame) / Double(rate)
                let envelope = min(1, time / 0.003) * exp(-time * 4)
                let value = (1...12).reduce(0.0) { sum, harmonic in
                    sum + sin(2 * Double.pi * pitch * Double(harmonic) * time) / Double(harmonic)
                }
                let noise = Double(generator.uniform(below: 2_001)) / 1_000 - 1
                let sample = Float(envelope * (0.2 * value + 0.03 * noise))
                for channel in 0..<channels { samples[(start + frame) * channels + channel] = sample }
            }
        }
        self.samples = samples
    }

    /// Writes the syllables as `format`, skipping silence or not, and decodes the file with our decoder.
    func encodeAndDecode(to path: String, format: AudioFileFormat, skipsSilence: Bool) throws -> [Float] {
        let frameCount = samples.count / channels
        let writer = try AACFileWriter(
            path: path,
            sampleRate: SampleRate(rate)!,
            channelCount: ChannelCount(channels)!,
            settings: try EncoderSettings(format: format, skipsSilence: skipsSilence),
            metadata: AudioMetadata(),
            frameCount: Frames(Int64(frameCount))
        )
        var start = 0
        while start < frameCount {
            let frames = min(4_096, frameCount - start)
            try writer.write(Array(samples[(start * channels)..<((start + frames) * channels)]), frames: frames)
            start += frames
        }
        try writer.close()
        return try decodeAll(path).samples
    }

    /// The signal-to-noise ratio of `decoded` over `frames`, in dB.
    func snr(_ decoded: [Float], over frames: Range<Int>) -> Double {
        var (signalPower, noisePower) = (0.0, 0.0)
        for index in (frames.lowerBound * channels)..<(frames.upperBound * channels) {
            signalPower += Double(samples[index] * samples[index])
            let error = Double(decoded[index] - samples[index])
            noisePower += error * error
        }
        return 10 * log10(signalPower / noisePower)
    }
}
