import Foundation
import SessionAudio
import SessionTimeline
import Testing

@Suite("Speech leveler")
struct SpeechLevelerTests {
    static let rate = 22_050
    /// The loudness the tests give as a clip's own: a sine of amplitude 0.5 is 10 dB (RMS) over it.
    static let reference = 10 * log10(0.125) - 10

    /// A leveled stream of `samples` (interleaved), at the test rate, as long as its source.
    func leveled(_ samples: [Float], channels: ChannelCount = .mono, reference: Double = reference) throws -> ClipStream
    {
        let rate = try #require(SampleRate(Self.rate))
        return try ClipStream(
            samples: samples,
            sampleRate: rate,
            channelCount: channels,
            outputRate: rate,
            outputChannels: channels,
            outputFrames: Frames(Int64(samples.count / channels.count)),
            levelingReference: reference
        )
    }

    /// The soft-knee curve the leveler documents, as an independent statement of it: the gain
    /// (dB) asked for `over` dB above a threshold with `ratio`:1 and a 6 dB knee.
    func curve(_ over: Double, ratio: Double) -> Double {
        if over <= -3 { return 0 }
        if over >= 3 { return (1 / ratio - 1) * over }
        return (1 / ratio - 1) * (over + 3) * (over + 3) / 12
    }

    func decibels(_ value: Float) -> Double { 20 * log10(Double(value)) }

    @Test("Speech under both thresholds keeps its level: only the phase rotator acts")
    func quietPassesAtItsLevel() throws {
        let input = sine(frequency: 1_000, rate: Self.rate, frames: Self.rate, amplitude: 0.05)
        let stream = try leveled(input)
        let output = try readAll(stream, block: 777)
        #expect(output.count == input.count)
        let middle = output[5_000..<17_000]
        #expect(abs(decibels(middle.map(abs).max()!) - decibels(0.05)) < 0.01)
        #expect(stream.leveling == LimiterActivity(maxReductionDecibels: 0, secondsOverOneDecibel: 0))
        // The rotator moved the waveform: the samples are not the input's.
        #expect(output != input)
    }

    @Test("A steady tone 10 dB over the clip's loudness comes down by the documented curves")
    func loudToneFollowsTheCurves() throws {
        let input = sine(frequency: 1_000, rate: Self.rate, frames: Self.rate, amplitude: 0.5)
        let stream = try leveled(input)
        let output = try readAll(stream)
        // The leveler's RMS level is 10 dB over the reference, 3 over its threshold; the peak,
        // after that gain, is 13.01 − 2 dB over the reference, against the peak threshold of 12.
        let leveling = curve(10 - 7, ratio: 3)
        let expected = leveling + curve(20 * log10(0.5) - Self.reference + leveling - 12, ratio: 4)
        #expect(abs(expected - -2.25) < 0.01)
        let middle = output[8_000..<14_000]
        #expect(abs(decibels(middle.map(abs).max()!) - (decibels(0.5) + expected)) < 0.02)
        let activity = try #require(stream.leveling)
        #expect(abs(activity.maxReductionDecibels - -expected) < 0.01)
        #expect(activity.secondsOverOneDecibel > 0.9 && activity.secondsOverOneDecibel <= 1)
    }

    @Test("The output does not depend on how it is read", arguments: [1, 333, 4_096, 50_000])
    func readSizesAgree(block: Int) throws {
        var input = sine(frequency: 300, rate: Self.rate, frames: 30_001, amplitude: 0.05)
        for index in 10_000..<16_000 { input[index] *= 12 }  // a loud syllable
        let whole = try readAll(try leveled(input), block: 100_000)
        #expect(whole.count == input.count)
        #expect(try readAll(try leveled(input), block: block) == whole)
    }

    @Test("Channels share one gain: a loud left lowers a quiet right as much")
    func channelsAreLinked() throws {
        let left = sine(frequency: 1_000, rate: Self.rate, frames: Self.rate, amplitude: 0.5)
        let right = sine(frequency: 1_000, rate: Self.rate, frames: Self.rate, amplitude: 0.01)
        let input = zip(left, right).flatMap { [$0, $1] }
        let stream = try leveled(input, channels: .stereo)
        var output: [Float] = []
        var buffer: [Float] = []
        while case let frames = try stream.read(into: &buffer, maximumFrames: 1_000), frames > 0 {
            output.append(contentsOf: buffer[0..<(frames * 2)])
        }
        #expect(output.count == input.count)
        let middle = (8_000..<14_000)
        let leftPeak = middle.map { abs(output[2 * $0]) }.max()!
        let rightPeak = middle.map { abs(output[2 * $0 + 1]) }.max()!
        #expect(decibels(leftPeak) < decibels(0.5) - 1)
        #expect(abs((decibels(leftPeak) - decibels(0.5)) - (decibels(rightPeak) - decibels(0.01))) < 0.02)
    }

    @Test("A source shorter than the look-ahead comes out whole")
    func shortSource() throws {
        let input = sine(frequency: 1_000, rate: Self.rate, frames: 37, amplitude: 0.5)
        #expect(try readAll(try leveled(input)).count == 37)
    }
}
