import Foundation
import SessionTimeline
import Testing

@testable import SessionAudio

/// The constant MP3 bit rates the settings allow are exactly those LAME encodes gaplessly.
@Suite("MP3 constant bit rates")
struct MP3BitrateTests {
    /// What LAME does with a constant `kilobits` at `sampleRate` and `channelCount`: the bit rate
    /// of its frames when it writes the gapless tag, `nil` when it writes none (or refuses).
    static func lameBitrate(sampleRate: Int, channelCount: Int, kilobits: Int) -> Int? {
        guard
            let encoder = try? MP3Encoder(
                sampleRate: sampleRate,
                channelCount: channelCount,
                rateControl: .constant(kilobits: kilobits)
            )
        else { return nil }
        let samples = [Float](repeating: 0, count: 4_608 * channelCount)
        do {
            try samples.withUnsafeBufferPointer { try encoder.encode($0, frames: 4_608) }
            try encoder.flush()
            let tag = try encoder.tagFrame()
            let audio = encoder.takeOutput()
            let tagHeader = try #require(MPEGFrameHeader(tag))
            let firstAudio = try #require(MPEGFrameHeader(audio.dropFirst(tagHeader.byteCount)))
            #expect(tagHeader.kilobits == firstAudio.kilobits, "\(sampleRate) Hz, \(kilobits) kb/s")
            return firstAudio.kilobits
        } catch {
            return nil
        }
    }

    @Test(
        "At every MP3 rate, mono and stereo, a bit rate is allowed exactly when LAME writes it as asked with its gapless tag",
        arguments: [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000],
        [1, 2]
    )
    func allowedIsWhatLAMEWrites(sampleRate: Int, channelCount: Int) {
        let allowed = EncoderSettings.mp3ConstantBitrates(sampleRate: sampleRate, channelCount: channelCount)
        #expect(!allowed.isEmpty)
        // Every MPEG Layer III bit rate, and some that are none.
        let candidates = [8, 16, 24, 32, 40, 48, 50, 56, 64, 70, 80, 96, 112, 128, 144, 160, 192, 224, 256, 300, 320]
        for kilobits in candidates {
            let written = Self.lameBitrate(sampleRate: sampleRate, channelCount: channelCount, kilobits: kilobits)
            #expect(
                allowed.contains(kilobits) == (written == kilobits),
                "\(sampleRate) Hz, \(channelCount) ch, \(kilobits) kb/s: LAME writes \(written.map(String.init) ?? "no tag")"
            )
        }
    }

    @Test(
        "The edge bit rates at the fixtures' 22,050 Hz and at 44,100 Hz: the message names the rates allowed",
        arguments: [
            (22_050, 1, 8, false), (22_050, 1, 16, false), (22_050, 1, 48, false), (22_050, 1, 56, true),
            (22_050, 1, 160, true), (22_050, 1, 192, false), (22_050, 2, 56, true), (44_100, 1, 48, false),
            (44_100, 1, 56, true), (44_100, 2, 56, false), (44_100, 2, 64, true), (44_100, 2, 320, true),
            (8_000, 1, 16, false), (8_000, 1, 24, true), (8_000, 1, 64, true), (8_000, 1, 80, false),
        ]
    )
    func edges(sampleRate: Int, channelCount: Int, kilobits: Int, allowed: Bool) throws {
        // 8 to 320 kb/s pass the check that does not know the rate.
        let settings = try EncoderSettings(format: .mp3, bitrate: kilobits)
        let problem = settings.problem(sampleRate: sampleRate, channelCount: channelCount)
        #expect((problem == nil) == allowed, "\(problem ?? "allowed")")
    }

    @Test("The message at 22,050 Hz mono")
    func message() throws {
        #expect(
            try EncoderSettings(format: .mp3, bitrate: 8).problem(sampleRate: 22_050, channelCount: 1)
                == "mp3 at 22050 Hz mono takes a bit rate of 56, 64, 80, 96, 112, 128, 144 or 160 kb/s (the MPEG bit rates whose frames hold the gapless tag), not 8"
        )
        #expect(try EncoderSettings(format: .mp3, bitrate: 8).problem(sampleRate: nil, channelCount: 1) == nil)
        #expect(try EncoderSettings(format: .opus, bitrate: 8).problem(sampleRate: 48_000, channelCount: 1) == nil)
    }
}
