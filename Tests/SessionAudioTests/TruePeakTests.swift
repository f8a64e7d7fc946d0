import CEbur128
import Foundation
import SessionAudio
import SessionTimeline
import TestSupport
import Testing

/// libebur128's own true peak (its `EBUR128_MODE_TRUE_PEAK`, too slow for renders), in dBTP.
func libebur128TruePeak(_ samples: [Float], rate: Int, channels: Int) -> Double {
    guard let state = ebur128_init(UInt32(channels), UInt(rate), Int32(EBUR128_MODE_TRUE_PEAK.rawValue)) else {
        return .nan
    }
    var owned: UnsafeMutablePointer<ebur128_state>? = state
    defer { ebur128_destroy(&owned) }
    samples.withUnsafeBufferPointer { _ = ebur128_add_frames_float(state, $0.baseAddress, samples.count / channels) }
    var largest = 0.0
    for channel in 0..<channels {
        var peak = 0.0
        _ = ebur128_true_peak(state, UInt32(channel), &peak)
        largest = max(largest, peak)
    }
    return 20 * log10(largest)
}

/// Limits `input` in blocks of the given sizes (cycled), then finishes; returns the output and
/// what each call returned.
func limit(
    _ input: [Float],
    with limiter: TruePeakLimiter,
    blocks: [Int] = [4_096]
) -> (output: [Float], returned: [Int]) {
    let channels = limiter.channelCount.count
    let frames = input.count / channels
    var output: [Float] = []
    var returned: [Int] = []
    var start = 0
    var block = 0
    input.withUnsafeBufferPointer { all in
        while start < frames {
            let count = min(blocks[block % blocks.count], frames - start)
            let slice = UnsafeBufferPointer(rebasing: all[(start * channels)..<((start + count) * channels)])
            returned.append(limiter.process(slice, frames: count, into: &output))
            start += count
            block += 1
        }
    }
    returned.append(limiter.finish(into: &output))
    return (output, returned)
}

@Suite("True peak")
struct TruePeakTests {
    /// Sines with peaks between samples: at fs/4 starting at 45° every sample is 3 dB under the peak.
    static let signals: [(name: String, rate: Int, frequency: Double, phase: Double)] = [
        ("fs/4 at 22,050 Hz, peaks mid-sample", 22_050, 5_512.5, Double.pi / 4),
        ("fs/4 at 48,000 Hz, peaks mid-sample", 48_000, 12_000, Double.pi / 4),
        ("997 Hz at 22,050 Hz", 22_050, 997, 0),
    ]

    @Test("Agrees with libebur128's true-peak mode and ffmpeg within 0.1 dB", .requiresFFmpeg, arguments: signals)
    func agrees(signal: (name: String, rate: Int, frequency: Double, phase: Double)) async throws {
        let samples = sine(
            frequency: signal.frequency,
            rate: signal.rate,
            seconds: 2,
            amplitude: 0.5,
            phase: signal.phase
        )
        let meter = TruePeakMeter(channelCount: 1)
        meter.add(samples)
        let library = libebur128TruePeak(samples, rate: signal.rate, channels: 1)
        let folder = try TemporaryFolder()
        try writeWAV(samples, rate: signal.rate, channels: 1, format: .float32, to: folder.path("s.wav"))
        let ffmpeg = try await FFmpeg.ebur128(folder.path("s.wav")).truePeakDecibels
        #expect(
            abs(meter.truePeakDecibels - library) <= 0.1,
            "\(signal.name): ours \(meter.truePeakDecibels), libebur128 \(library)"
        )
        #expect(
            abs(meter.truePeakDecibels - ffmpeg) <= 0.1,
            "\(signal.name): ours \(meter.truePeakDecibels), ffmpeg \(ffmpeg)"
        )
        #expect(abs(meter.truePeakDecibels - 20 * log10(0.5)) <= 0.1, "the sine's amplitude is its true peak")
    }

    @Test("Finds the peak between samples that the samples hide")
    func interSample() {
        let samples = sine(frequency: 5_512.5, rate: 22_050, seconds: 1, amplitude: 0.5, phase: Double.pi / 4)
        let samplePeak = samples.map(abs).max()!
        #expect(abs(20 * log10(Double(samplePeak)) - 20 * log10(0.5 * 0.5.squareRoot())) < 0.01)
        let meter = TruePeakMeter(channelCount: 1)
        meter.add(samples)
        #expect(meter.truePeakDecibels - 20 * log10(Double(samplePeak)) > 2.9, "3 dB over the samples")
    }

    @Test("The result does not depend on how frames are split into calls, quiet blocks skipped or not")
    func splitting() {
        // Loud, then quiet (skipped once the loud peak is known), then a louder blip.
        var samples = sine(frequency: 5_000, rate: 22_050, seconds: 0.5, amplitude: 0.5, phase: 1)
        samples += sine(frequency: 300, rate: 22_050, seconds: 2, amplitude: 0.01)
        samples += sine(frequency: 7_000, rate: 22_050, seconds: 0.2, amplitude: 0.7, phase: 0.3)
        let whole = TruePeakMeter(channelCount: 1)
        whole.add(samples)
        let split = TruePeakMeter(channelCount: 1)
        var start = 0
        var size = 1
        samples.withUnsafeBufferPointer { all in
            while start < all.count {
                let count = min(size, all.count - start)
                split.add(UnsafeBufferPointer(rebasing: all[start..<(start + count)]), frames: count)
                start += count
                size = size * 7 % 1_001 + 3
            }
        }
        #expect(split.truePeak == whole.truePeak, "bit for bit")
        #expect(abs(whole.truePeakDecibels - 20 * log10(0.7)) < 0.25, "the blip's peak: \(whole.truePeakDecibels)")
    }

    @Test("Notes each block that goes over a threshold, where it is, even under the peak found before it")
    func overs() throws {
        // A loud 0.2 s burst at 1 s (−0.5 dBFS), a quieter one at 3.2 s (−2), quiet around: over −3 dBTP
        // both bursts are noted, though the second cannot raise the peak; over −1 only the first.
        let rate = 48_000
        func burst(_ amplitude: Double) -> [Float] {
            sine(frequency: 1_000, rate: rate, seconds: 0.2, amplitude: amplitude)
        }
        let quiet = sine(frequency: 300, rate: rate, seconds: 1, amplitude: 0.01)
        let samples = quiet + burst(pow(10, -0.5 / 20)) + quiet + quiet + burst(pow(10, -2.0 / 20)) + quiet
        let noting = TruePeakMeter(channelCount: 1, notingOver: -3)
        noting.add(samples)
        let frames = noting.overs.map(\.frame)
        #expect(frames.allSatisfy { (48_000..<57_600).contains($0) || (153_600..<163_200).contains($0) }, "\(frames)")
        #expect(frames.contains { $0 < 57_600 } && frames.contains { $0 > 153_600 })
        #expect(noting.overs.allSatisfy { $0.peak > pow(10, -3.0 / 20) })
        let plain = TruePeakMeter(channelCount: 1)
        plain.add(samples)
        #expect(noting.truePeak == plain.truePeak, "noting changes nothing measured")
        let high = TruePeakMeter(channelCount: 1, notingOver: -1)
        high.add(samples)
        #expect(!high.overs.isEmpty && high.overs.allSatisfy { $0.frame < 57_600 }, "\(high.overs.map(\.frame))")
        #expect(noting.oversMissed == 0)
    }

    @Test("Every channel is measured; silence is −∞ dBTP")
    func channels() {
        let meter = TruePeakMeter(channelCount: 2)
        #expect(meter.truePeak == 0 && meter.truePeakDecibels == -.infinity)
        meter.add([Float](repeating: 0, count: 2_000))
        #expect(meter.truePeak == 0)
        let right = sine(frequency: 1_000, rate: 22_050, seconds: 0.5, amplitude: 0.25)
        meter.add(right.flatMap { [0, $0] })
        #expect(abs(meter.truePeakDecibels - 20 * log10(0.25)) < 0.05)
    }

    @Test("Agrees with ffmpeg on a fixture clip of speech within 0.1 dB", .requiresFFmpeg)
    func speech() async throws {
        let decoded = try decodeFully(LoudnessTests.speechClip)
        let meter = TruePeakMeter(channelCount: decoded.channels)
        meter.add(decoded.samples)
        let ffmpeg = try await FFmpeg.ebur128(LoudnessTests.speechClip).truePeakDecibels
        #expect(abs(meter.truePeakDecibels - ffmpeg) <= 0.1, "ours \(meter.truePeakDecibels), ffmpeg \(ffmpeg)")
    }
}

@Suite("True-peak limiter")
struct TruePeakLimiterTests {
    /// Limits `input`, writes it as 16-bit WAV and returns ffmpeg's measurement of that file.
    static func limitedAndMeasured(
        _ input: [Float],
        rate: Int,
        channels: Int,
        ceiling: Double
    ) async throws -> (measurement: FFmpeg.Measurement, limiter: TruePeakLimiter, output: [Float]) {
        let limiter = TruePeakLimiter(
            sampleRate: SampleRate(rate)!,
            channelCount: ChannelCount(channels)!,
            ceilingDecibels: ceiling
        )
        let (output, _) = limit(input, with: limiter, blocks: [1_000, 333, 4_097])
        #expect(output.count == input.count)
        let folder = try TemporaryFolder()
        try writeWAV(output, rate: rate, channels: channels, format: .pcm16, to: folder.path("limited.wav"))
        return (try await FFmpeg.ebur128(folder.path("limited.wav")), limiter, output)
    }

    @Test(
        "A 997 Hz sine at +3 dBFS comes out at or under a −1 dBTP ceiling, as ffmpeg measures 16-bit output",
        .requiresFFmpeg
    )
    func loudSine() async throws {
        let input = sine(frequency: 997, rate: 22_050, seconds: 2, amplitude: 1.41, fades: false)
        let (measured, limiter, _) = try await Self.limitedAndMeasured(input, rate: 22_050, channels: 1, ceiling: -1)
        #expect(measured.truePeakUpperBoundDecibels <= -1, "ffmpeg: \(measured.truePeakDecibels) dBTP")
        #expect(measured.truePeakDecibels >= -1.5, "limited to the ceiling, not far under it")
        #expect(abs(limiter.largestReductionDecibels - (20 * log10(1.41) + 1 + TruePeakLimiter.internalMargin)) < 0.1)
    }

    @Test(
        "Inter-sample overs near fs/4 (samples under 0 dBFS, peaks over) come out at or under the ceiling",
        .requiresFFmpeg,
        arguments: [
            (22_050, 5_512.5, Double.pi / 4, 1.2, -1.0), (48_000, 11_990.0, 0.3, 1.1, -0.5),
            (22_050, 5_400.0, 0.0, 1.0, -2.0),
        ]
    )
    func interSampleOvers(rate: Int, frequency: Double, phase: Double, amplitude: Double, ceiling: Double) async throws
    {
        let input = sine(frequency: frequency, rate: rate, seconds: 2, amplitude: amplitude, phase: phase)
        let (measured, _, _) = try await Self.limitedAndMeasured(input, rate: rate, channels: 1, ceiling: ceiling)
        #expect(measured.truePeakUpperBoundDecibels <= ceiling, "ffmpeg: \(measured.truePeakDecibels) dBTP")
        #expect(measured.truePeakDecibels >= ceiling - 0.6, "limited to the ceiling, not far under it")
    }

    @Test(
        "Stereo is limited with one gain: each frame keeps its balance, and speech stays under the ceiling",
        .requiresFFmpeg
    )
    func linkedStereo() async throws {
        let decoded = try decodeFully(LoudnessTests.speechClip)
        // The speech, 9 dB louder (peaks over full scale), on the left; half of it on the right.
        let input = decoded.samples.flatMap { [$0 * 2.8, $0 * 1.4] }
        let (measured, limiter, output) = try await Self.limitedAndMeasured(
            input,
            rate: 22_050,
            channels: 2,
            ceiling: -1
        )
        #expect(measured.truePeakUpperBoundDecibels <= -1, "ffmpeg: \(measured.truePeakDecibels) dBTP")
        #expect(limiter.largestReductionDecibels > 5)
        for frame in stride(from: 0, to: output.count / 2, by: 1) where input[frame * 2] != 0 {
            let left = output[frame * 2] / input[frame * 2]
            let right = output[frame * 2 + 1] / input[frame * 2 + 1]
            if left != right {
                Issue.record("frame \(frame): gain \(left) on the left, \(right) on the right")
                break
            }
        }
    }

    @Test("Output is as long as input and aligned with it, whatever the block sizes")
    func lengthAndAlignment() {
        let rate = 22_050
        // Quiet, a loud burst at 1 s, quiet again.
        var input = sine(frequency: 440, rate: rate, seconds: 1, amplitude: 0.1, fades: false)
        input += sine(frequency: 440, rate: rate, seconds: 0.5, amplitude: 1.5, fades: false)
        input += sine(frequency: 440, rate: rate, seconds: 1.3, amplitude: 0.1, fades: false)
        let reference = TruePeakLimiter(sampleRate: 22_050, channelCount: 1, ceilingDecibels: -1)
        let (expected, returned) = limit(input, with: reference, blocks: [input.count])
        #expect(expected.count == input.count)
        #expect(
            returned == [input.count - reference.latency, reference.latency],
            "the first call holds back the latency"
        )
        #expect(reference.latency == 110 + 10, "5 ms at 22,050 Hz, and the filter's reach")
        for blocks in [[1], [7, 333, 1], [4_096, 13], [reference.latency - 1], [100_000]] {
            let limiter = TruePeakLimiter(sampleRate: 22_050, channelCount: 1, ceilingDecibels: -1)
            let (output, returned) = limit(input, with: limiter, blocks: blocks)
            #expect(output.count == expected.count)
            #expect(output.indices.first { output[$0] != expected[$0] } == nil, "blocks of \(blocks): the same samples")
            #expect(returned.reduce(0, +) == input.count)
        }
        // Aligned: untouched until the look-ahead before the burst, then scaled, never inverted.
        let burst = rate
        let firstReduced = expected.indices.first { expected[$0] != input[$0] }!
        #expect(
            firstReduced >= burst - reference.latency && firstReduced < burst,
            "the gain glides down just before the burst"
        )
        #expect(
            expected.indices.allSatisfy {
                input[$0] == 0 || (expected[$0] / input[$0] > 0 && expected[$0] / input[$0] <= 1)
            }
        )
    }

    @Test("Input shorter than the latency comes out whole from finish")
    func shortInput() {
        let limiter = TruePeakLimiter(sampleRate: 48_000, channelCount: 2, ceilingDecibels: -1)
        var output: [Float] = []
        let input: [Float] = [0.5, -0.5, 2, -2, 0.25, 0.25]
        #expect(limiter.process(input, into: &output) == 0)
        #expect(limiter.finish(into: &output) == 3)
        #expect(output.count == 6)
        #expect(output[2].magnitude < 0.9 && output[0] == -output[1])
    }

    @Test("A signal under the ceiling comes out unchanged, sample for sample", arguments: [1, 2])
    func bitIdentical(channels: Int) throws {
        let decoded = try decodeFully(LoudnessTests.speechClip)
        // Speech peaks at about −2.6 dBTP: under a −1 dBTP ceiling, with its internal margin.
        let input = decoded.samples.flatMap { Array(repeating: $0, count: channels) }
        let limiter = TruePeakLimiter(sampleRate: 22_050, channelCount: ChannelCount(channels)!, ceilingDecibels: -1)
        let (output, _) = limit(input, with: limiter, blocks: [4_096, 17])
        #expect(output.count == input.count)
        #expect(output.indices.first { output[$0] != input[$0] } == nil, "bit for bit")
        #expect(limiter.largestReductionDecibels == 0)
    }

    @Test("After a peak the gain returns to 1 and later quiet frames are untouched again")
    func recovers() {
        var input = sine(frequency: 440, rate: 22_050, seconds: 0.2, amplitude: 2, fades: false)
        input += sine(frequency: 440, rate: 22_050, seconds: 3, amplitude: 0.2, fades: false)
        let limiter = TruePeakLimiter(sampleRate: 22_050, channelCount: 1, ceilingDecibels: -1, release: 0.1)
        let (output, _) = limit(input, with: limiter)
        let lastSecond = (input.count - 22_050)..<input.count
        let changed = lastSecond.first { output[$0] != input[$0] }
        #expect(changed == nil, "2 s after the peak: unchanged, bit for bit")
        #expect(abs(limiter.largestReductionDecibels - (20 * log10(2.0) + 1.2)) < 0.1)
    }

    @Test("Once nothing in the window asks for less, the gain returns by the release's one-pole steps")
    func releaseSteps() throws {
        let rate = 22_050
        let release = 0.1
        var input = sine(frequency: 440, rate: rate, seconds: 0.2, amplitude: 2, fades: false)
        let burstEnd = input.count
        // A quiet constant after it, so that each output sample over its input is the frame's gain.
        input += [Float](repeating: 0.25, count: 2 * rate)
        let limiter = TruePeakLimiter(
            sampleRate: 22_050,
            channelCount: .mono,
            ceilingDecibels: -1,
            release: release
        )
        let (output, _) = limit(input, with: limiter, blocks: [1_000, 3])
        let step = 1 - exp(-1 / (release * Double(rate)))
        // Past the burst's last requirement and the look-ahead window behind it.
        let first = burstEnd + limiter.latency + 20
        let gains: [Double] = (first..<input.count).map { index in Double(output[index]) / 0.25 }
        #expect(gains[0] < 0.99, "still releasing where the check starts")
        for index in 1..<gains.count where gains[index] != 1 {
            let previous = gains[index - 1]
            let expected: Double = previous + (1 - previous) * step
            #expect(abs(gains[index] - expected) < 1e-6, "frame \(first + index): \(gains[index]), not \(expected)")
        }
        let settled = gains.firstIndex(of: 1) ?? gains.count
        #expect(settled < gains.count, "the gain reaches 1")
        #expect(gains[settled...].allSatisfy { $0 == 1 }, "and stays there, bit for bit")
    }
}
