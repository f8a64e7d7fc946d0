import Foundation
import SessionTimeline
import Testing

@testable import SessionAudio

/// The constant MP3 bit rates the settings allow are every bit rate of the rate's MPEG version,
/// each written by LAME as asked with its gapless tag (issue 42, item 13).
@Suite("MP3 constant bit rates")
struct MP3BitrateTests {
    /// What LAME writes for a constant `kilobits` at `sampleRate` and `channelCount`: the bit rates
    /// of its tag frame and of its audio frames (one rate, else `nil`), or `nil` when it writes no
    /// gapless tag (or refuses).
    static func lameBitrates(sampleRate: Int, channelCount: Int, kilobits: Int) -> (tag: Int, audio: Int?)? {
        guard
            let encoder = try? MP3Encoder(
                sampleRate: sampleRate,
                channelCount: channelCount,
                rateControl: .constant(kilobits: kilobits)
            )
        else { return nil }
        // A second of a tone, loud enough for a variable rate to spend more on it than on silence.
        let frames = sampleRate
        let samples = (0..<frames * channelCount).map { Float(0.5 * sin(Double($0 / channelCount) * 0.07)) }
        do {
            try samples.withUnsafeBufferPointer { try encoder.encode($0, frames: frames) }
            try encoder.flush()
            let tag = try encoder.tagFrame()
            let tagHeader = try #require(MPEGFrameHeader(tag))
            var rates = Set<Int>()
            var splitter = MPEGFrameSplitter()
            try splitter.append(Array(encoder.takeOutput().dropFirst(tagHeader.byteCount))) { _, header in
                _ = rates.insert(header.kilobits)
            }
            return (tagHeader.kilobits, rates.count == 1 ? rates.first : nil)
        } catch {
            return nil
        }
    }

    @Test(
        "At every MP3 rate, mono and stereo, every bit rate of its MPEG version is written as asked with the gapless tag, in a frame that holds it",
        arguments: [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000],
        [1, 2]
    )
    func everyRateIsWritten(sampleRate: Int, channelCount: Int) throws {
        let allowed = EncoderSettings.mp3Bitrates(sampleRate: sampleRate)
        #expect(!allowed.isEmpty)
        for kilobits in allowed {
            let written = Self.lameBitrates(sampleRate: sampleRate, channelCount: channelCount, kilobits: kilobits)
            let place = "\(sampleRate) Hz, \(channelCount) ch, \(kilobits) kb/s"
            #expect(written?.audio == kilobits, "\(place): LAME writes \(String(describing: written))")
            let holds = EncoderSettings.mp3FrameHoldsTag(
                kilobits: kilobits,
                sampleRate: sampleRate,
                channelCount: channelCount
            )
            // A frame that holds the tag carries it at the stream's rate; a smaller one's goes in
            // a larger frame of LAME's choice.
            #expect(
                holds ? written?.tag == kilobits : (written?.tag ?? 0) > kilobits,
                "\(place): \(String(describing: written))"
            )
            let settings = try EncoderSettings(format: .mp3, bitrate: kilobits)
            #expect(settings.problem(sampleRate: sampleRate, channelCount: channelCount) == nil, "\(place)")
        }
    }

    @Test(
        "The edge bit rates at the fixtures' 22,050 Hz and at 44,100 Hz: a rate of another MPEG version is refused",
        arguments: [
            (22_050, 1, 8, true), (22_050, 1, 32, true), (22_050, 1, 50, false), (22_050, 1, 160, true),
            (22_050, 1, 192, false), (22_050, 2, 8, true), (44_100, 1, 24, false), (44_100, 1, 32, true),
            (44_100, 2, 48, true), (44_100, 2, 144, false), (44_100, 2, 320, true), (8_000, 1, 8, true),
            (8_000, 1, 64, true), (8_000, 1, 80, false),
        ]
    )
    func edges(sampleRate: Int, channelCount: Int, kilobits: Int, allowed: Bool) throws {
        // 8 to 320 kb/s pass the check that does not know the rate.
        let settings = try EncoderSettings(format: .mp3, bitrate: kilobits)
        let problem = settings.problem(sampleRate: sampleRate, channelCount: channelCount)
        #expect((problem == nil) == allowed, "\(problem ?? "allowed")")
    }

    @Test("The message at 22,050 Hz")
    func message() throws {
        #expect(
            try EncoderSettings(format: .mp3, bitrate: 50).problem(sampleRate: 22_050, channelCount: 1)
                == "mp3 at 22050 Hz takes a bit rate of 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144 or 160 kb/s (its MPEG version's), not 50"
        )
        #expect(try EncoderSettings(format: .mp3, bitrate: 50).problem(sampleRate: nil, channelCount: 1) == nil)
        #expect(try EncoderSettings(format: .opus, bitrate: 8).problem(sampleRate: 48_000, channelCount: 1) == nil)
    }
}
