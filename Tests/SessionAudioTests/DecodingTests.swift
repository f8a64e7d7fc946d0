import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// Decodes a whole file, returning its frames interleaved.
func decodeAll(_ path: String) throws -> (samples: [Float], rate: Int, channels: Int) {
    let decoder = try AudioFileDecoder(path: path)
    var all: [Float] = []
    var block: [Float] = []
    while case let frames = try decoder.read(into: &block, maximumFrames: 4_096), frames > 0 {
        all.append(contentsOf: block[0..<(frames * decoder.channelCount.count)])
    }
    return (all, decoder.sampleRate.hertz, decoder.channelCount.count)
}

/// Writes `samples` as a WAV file with libsndfile.
func writeWAV(_ samples: [Float], rate: Int, channels: Int, format: SampleFormat = .pcm16, to path: String) throws {
    let writer = try SoundFileWriter(
        path: path,
        sampleRate: SampleRate(rate)!,
        channelCount: ChannelCount(channels)!,
        format: format
    )
    try writer.write(samples, frames: samples.count / channels)
    try writer.close()
}

@Suite("Decoding")
struct DecodingTests {
    @Test("Gapless decoding of every fixture clip gives exactly the frames it was encoded from")
    func gaplessFixtures() throws {
        let clips = try FixtureClip.all()
        #expect(clips.count == 15)
        for clip in clips {
            let measurement = try AudioFileDecoder.measure(path: clip.path)
            #expect(measurement.frameCount == Frames(clip.sourceFrames), "scan of \(clip.text)")
            #expect(measurement.gapless, "\(clip.text) carries a LAME tag")
            #expect(measurement.sampleRate.hertz == clip.sampleRate && measurement.channelCount.count == clip.channels)
            let decoded = try decodeAll(clip.path)
            #expect(Int64(decoded.samples.count / decoded.channels) == clip.sourceFrames, "decode of \(clip.text)")
        }
    }

    @Test("mpg123's sweep.mp3 decodes to exactly 44,100 frames, its delay and padding removed", .requiresVectors)
    func sweepVector() throws {
        let path = try Repository.vector("mpg123/sweep.mp3")
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount == 44_100)
        #expect(measurement.gapless)
        let decoded = try decodeAll(path)
        #expect(decoded.samples.count / decoded.channels == 44_100)
    }

    @Test("A stream without a gapless tag decodes to what it holds", .requiresVectors)
    func untaggedVector() throws {
        let path = try Repository.vector("go-mp3/mpeg2.mp3")
        let measurement = try AudioFileDecoder.measure(path: path)
        #expect(measurement.frameCount == 1_654_272)
        #expect(!measurement.gapless)
        #expect(measurement.sampleRate == 22_050 && measurement.channelCount == 1)
    }

    @Test("Formats are detected by content: a WAV named .mp3 is read as WAV")
    func detectionByContent() throws {
        let folder = try TemporaryFolder()
        let samples: [Float] = (0..<1_000).map { Float(($0 % 100) - 50) / 128 }
        try writeWAV(samples, rate: 16_000, channels: 1, to: folder.path("disguised.mp3"))
        let measurement = try AudioFileDecoder.measure(path: folder.path("disguised.mp3"))
        #expect(measurement.formatName.contains("WAV"))
        #expect(measurement.frameCount == 1_000)
        #expect(
            try decodeAll(folder.path("disguised.mp3")).samples == samples,
            "16-bit values survive a float round trip"
        )
    }

    @Test(
        "Files with no audio are errors that say so",
        arguments: [
            ("empty.mp3", Data(), "the file is empty"),
            (
                "page.mp3", Data("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>".utf8),
                "no MPEG audio frames found"
            ),
            (
                "id3-only.mp3", Data([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 10] + [UInt8](repeating: 0, count: 10)),
                "no MPEG audio frames found"
            ),
        ]
    )
    func noAudio(name: String, content: Data, reason: String) throws {
        let folder = try TemporaryFolder()
        let path = folder.path(name)
        try content.write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try AudioFileDecoder.measure(path: path)
        } throws: { error in
            let error = error as? AudioError
            return error?.code == .noAudio && error?.description.hasPrefix("Cannot decode \(path): \(reason)") == true
        }
    }

    // Found by the decode fuzzer (Fuzz/regressions/): libsndfile accepts any positive rate in a
    // header. At 1,000,000 Hz the planner trapped; at 1 Hz one 2 KB file took 100 s and 800 MB.
    @Test(
        "Sample rates outside 1 kHz…768 kHz are refused with the rate",
        arguments: [
            ("decode-9cf0652d.bin", 1_000_000), ("decode-f29aa5a3.bin", 1),
        ]
    )
    func unsupportedRate(name: String, rate: Int) {
        let path = Repository.root.appendingPathComponent("Fuzz/regressions/\(name)").path
        #expect(
            throws: AudioError(
                .unsupportedFormat,
                path: path,
                reason: "its sample rate of \(rate) Hz is outside the supported 1000…768000 Hz"
            )
        ) {
            try AudioFileDecoder.measure(path: path)
        }
    }

    @Test("A missing file and a directory get their own messages")
    func notAFile() throws {
        let folder = try TemporaryFolder()
        #expect(throws: AudioError(.cannotOpen, path: folder.path("none.mp3"), reason: "no such file")) {
            try AudioFileDecoder.measure(path: folder.path("none.mp3"))
        }
        #expect(throws: AudioError(.cannotOpen, path: folder.path(""), reason: "it is a directory, not an audio file"))
        {
            try AudioFileDecoder.measure(path: folder.path(""))
        }
    }
}
