import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

@Suite("Encoding and the embedded voice")
struct EncodingTests {
    @Test(
        "LAME's output decodes gaplessly to exactly the frames encoded",
        arguments: [
            (22_050, 1, 64, 10_000), (24_000, 1, 64, 1), (44_100, 2, 128, 44_100), (16_000, 1, 64, 3_333),
        ]
    )
    func roundTrip(rate: Int, channels: Int, bitRate: Int, frames: Int) throws {
        let folder = try TemporaryFolder()
        let samples = (0..<(frames * channels)).map { Int16(8_000 * sin(Double($0) * 0.05)) }
        let mp3 = try MP3Encoder.encode(samples, sampleRate: rate, channelCount: channels, bitRate: bitRate)
        try Data(mp3).write(to: URL(fileURLWithPath: folder.path("a.mp3")))
        let measurement = try AudioFileDecoder.verifyMPEG(path: folder.path("a.mp3"))
        #expect(measurement.frameCount == Frames(Int64(frames)))
        #expect(measurement.gapless)
        #expect(measurement.sampleRate.hertz == rate && measurement.channelCount.count == channels)
        #expect(
            try AudioFileDecoder.measure(path: folder.path("a.mp3")).frameCount == Frames(Int64(frames)),
            "the scan agrees"
        )
    }

    @Test("The embedded voice's MP3 holds exactly the samples eSpeak spoke")
    func embeddedVoiceIsGapless() throws {
        let folder = try TemporaryFolder()
        let (samples, rate, _) = try EmbeddedVoice.synthesize(text: "Notice the breath.", voice: "en-us", speed: 1)
        #expect(rate == 22_050)
        let mp3 = try SpeechClip.mp3(samples, sampleRate: rate, voice: "eSpeak NG")
        try Data(mp3).write(to: URL(fileURLWithPath: folder.path("v.mp3")))
        #expect(try AudioFileDecoder.verifyMPEG(path: folder.path("v.mp3")).frameCount == Frames(Int64(samples.count)))
        let faster = try EmbeddedVoice.synthesize(text: "Notice the breath.", voice: "en-us", speed: 2)
        #expect(faster.samples.count < samples.count * 3 / 4, "speed 2 speaks faster")
    }

    @Test(
        "Speed maps onto eSpeak's words per minute, clamped to 80…450",
        arguments: [
            (1.0, 175), (1.25, 219), (0.25, 80), (4.0, 450), (0.5, 88),
        ]
    )
    func wordsPerMinute(speed: Double, expected: Int) {
        #expect(EmbeddedVoice.wordsPerMinute(speed: speed) == expected)
    }

    @Test("Only MP3 passes the cache's check")
    func verifyRejectsWAV() throws {
        let folder = try TemporaryFolder()
        try writeWAV([0.1, 0.2], rate: 8_000, channels: 1, to: folder.path("w.mp3"))
        #expect(
            throws: AudioError(
                .unsupportedFormat,
                path: folder.path("w.mp3"),
                reason: "the file is WAV (Microsoft), not MP3 (MPEG audio layer 3)"
            )
        ) {
            try AudioFileDecoder.verifyMPEG(path: folder.path("w.mp3"))
        }
    }
}
