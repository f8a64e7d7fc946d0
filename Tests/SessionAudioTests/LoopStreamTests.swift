import Foundation
import SessionTimeline
import TestSupport
import Testing

@testable import SessionAudio

/// `frames` frames of `stream`, read in blocks whose sizes cycle through `blocks`; checks that
/// every read returns exactly what was asked.
func readLoop(_ stream: LoopStream, frames: Int, blocks: [Int]) throws -> [Float] {
    let channels = stream.outputChannels.count
    var all: [Float] = []
    all.reserveCapacity(frames * channels)
    var buffer: [Float] = []
    var turn = 0
    while all.count < frames * channels {
        let wanted = min(blocks[turn % blocks.count], frames - all.count / channels)
        turn += 1
        let got = try stream.read(into: &buffer, maximumFrames: wanted)
        #expect(got == wanted)
        all.append(contentsOf: buffer[0..<(got * channels)])
    }
    return all
}

/// The loop of period `x` by its definition: x[0..<C], then bodies x[C..<N−C] each followed by
/// the equal-power crossfade of x[N−C..<N] with x[0..<C].
func loopByDefinition(_ x: [Float], channels: Int, crossfade: Int, frames: Int) -> [Float] {
    let period = x.count / channels
    var output = Array(x[0..<(crossfade * channels)])
    while output.count < frames * channels {
        output += x[(crossfade * channels)..<((period - crossfade) * channels)]
        for step in 0..<crossfade {
            let gainIn = Float(PortableMath.sin(PortableMath.halfPi * (Double(step) + 0.5) / Double(crossfade)))
            let gainOut = Float(
                PortableMath.sin(PortableMath.halfPi * (Double(crossfade - 1 - step) + 0.5) / Double(crossfade))
            )
            for channel in 0..<channels {
                output.append(
                    x[(period - crossfade + step) * channels + channel] * gainOut + x[step * channels + channel]
                        * gainIn
                )
            }
        }
    }
    return Array(output.prefix(frames * channels))
}

/// One period of `path` as LoopStream converts it: the whole file through a ClipStream without fades.
func period(of path: String, rate: SampleRate, channels: ChannelCount) throws -> [Float] {
    let measurement = try AudioFileDecoder.measure(path: path)
    let frames = rate.frames(converting: measurement.frameCount, from: measurement.sampleRate)
    let stream = try ClipStream(
        decoder: try AudioFileDecoder(path: path),
        sourceFrames: measurement.frameCount,
        outputRate: rate,
        outputChannels: channels,
        outputFrames: frames,
        edgeFades: false
    )
    var all: [Float] = []
    var buffer: [Float] = []
    while case let got = try stream.read(into: &buffer, maximumFrames: 8_192), got > 0 {
        all.append(contentsOf: buffer[0..<(got * channels.count)])
    }
    return all
}

/// A loop of `path` at `rate` and `channels`.
func loopStream(_ path: String, rate: SampleRate, channels: ChannelCount, crossfade: Int64) throws -> LoopStream {
    try LoopStream(
        path: path,
        sourceFrames: try AudioFileDecoder.measure(path: path).frameCount,
        outputRate: rate,
        outputChannels: channels,
        crossfade: Frames(crossfade)
    )
}

/// The root mean square of `samples[range]`.
func rms(_ samples: [Float], _ range: Range<Int>) -> Double {
    (samples[range].map { Double($0) * Double($0) }.reduce(0, +) / Double(range.count)).squareRoot()
}

@Suite("Loop streams")
struct LoopStreamTests {
    @Test(
        "The crossfade is clamped to an eighth of the period: a short loop repeats at 7/8 of its length or more",
        arguments: [
            (Int64(0), Int64(5), Int64(0)), (1, 10, 0), (2, 10, 0), (3, 10, 0), (7, 10, 0), (8, 10, 1), (17, 1_000, 2),
            (100, 30, 12), (100, -5, 0), (1_058_400, 88_200, 88_200),
            // Seed 002's 3.06 s forest clip with the default 2 s crossfade: it repeated every 1.53 s.
            (134_946, 88_200, 16_868),
        ]
    )
    func clamp(period: Int64, preferred: Int64, expected: Int64) {
        #expect(
            LoopStream.crossfadeFrames(periodFrames: Frames(period), preferred: Frames(preferred)) == Frames(expected)
        )
    }

    @Test(
        "A short period kept in memory loops exactly by the definition, whatever the block sizes",
        arguments: [[1], [7, 333, 1, 1_024], [4_096]]
    )
    func shortPeriod(blocks: [Int]) throws {
        let folder = try TemporaryFolder()
        let x: [Float] = (0..<1_000).map { index in
            let tone: Double = sin(Double(index) * 0.37) * 0.5
            return Float(tone + Double(index % 17) / 100)
        }
        try writeWAV(x, rate: 44_100, channels: 1, format: .float32, to: folder.path("x.wav"))
        let stream = try loopStream(folder.path("x.wav"), rate: 44_100, channels: .mono, crossfade: 100)
        #expect(stream.periodFrames == 1_000 && stream.crossfade == 100)
        let frames = 100 + 900 * 12 + 17
        let output = try readLoop(stream, frames: frames, blocks: blocks)
        #expect(output.count == frames)
        #expect(output == loopByDefinition(x, channels: 1, crossfade: 100, frames: frames))
    }

    @Test("A very short file gets a crossfade clamped to fit, and loops by the definition")
    func tinyFile() throws {
        let folder = try TemporaryFolder()
        let x: [Float] = (1...17).map { Float($0) / 20 }
        try writeWAV(x, rate: 8_000, channels: 1, format: .float32, to: folder.path("tiny.wav"))
        let stream = try loopStream(folder.path("tiny.wav"), rate: 8_000, channels: .mono, crossfade: 1_000)
        #expect(stream.periodFrames == 17 && stream.crossfade == 2)
        let output = try readLoop(stream, frames: 302, blocks: [3, 1, 5])
        #expect(output == loopByDefinition(x, channels: 1, crossfade: 2, frames: 302))
        // The period after the first is N − C = 15 frames: x[2…14], then the two crossfaded frames.
        #expect(output[2] == x[2] && output[17] == x[2] && output[287] == x[2])
    }

    @Test("A long file is decoded anew each period, resampled and made stereo, and loops by the definition")
    func longPeriod() throws {
        let folder = try TemporaryFolder()
        var generator = SeededGenerator(seed: 11)
        // 300 000 frames at 22.05 kHz are 653 061 at 48 kHz, 1 306 122 stereo samples: more than
        // LoopStream keeps in memory, so each period is decoded anew.
        let x = (0..<300_000).map { _ in Float(Double(generator.next() >> 11) * 0x1p-53 - 0.5) * 0.5 }
        try writeWAV(x, rate: 22_050, channels: 1, format: .float32, to: folder.path("noise.wav"))
        let stream = try loopStream(folder.path("noise.wav"), rate: 48_000, channels: .stereo, crossfade: 4_800)
        #expect(stream.periodFrames == 653_061 && stream.crossfade == 4_800)
        #expect(653_061 * 2 > LoopStream.cachedPeriodLimit)
        let converted = try period(of: folder.path("noise.wav"), rate: 48_000, channels: .stereo)
        #expect(converted.count == 653_061 * 2)
        let frames = 4_800 + (653_061 - 4_800) * 2 + 1_001
        let output = try readLoop(stream, frames: frames, blocks: [4_097, 65_536, 3])
        #expect(output.count == frames * 2)
        #expect(output == loopByDefinition(converted, channels: 2, crossfade: 4_800, frames: frames))
    }

    @Test("The memory a loop keeps does not grow from period to period")
    func constantMemory() throws {
        let folder = try TemporaryFolder()
        // 600 001 stereo frames are more samples than LoopStream keeps whole: it streams them.
        let x: [Float] = (0..<600_001).map { index in Float(sin(Double(index) * 0.01) * 0.3) }
        try writeWAV(x, rate: 44_100, channels: 1, format: .float32, to: folder.path("x.wav"))
        let stream = try loopStream(folder.path("x.wav"), rate: 44_100, channels: .stereo, crossfade: 2_000)
        var buffer: [Float] = []
        for _ in 0..<3 { _ = try stream.read(into: &buffer, maximumFrames: 68_001) }
        let settled = stream.retainedSampleCapacity
        #expect(settled < 100_000, "\(settled) samples kept")
        for _ in 0..<30 { _ = try stream.read(into: &buffer, maximumFrames: 68_001) }
        #expect(stream.retainedSampleCapacity == settled)
    }

    @Test(
        "No step at any seam of a bed is larger than the bed's own largest step",
        arguments: [SynthesizedSound.rain, .drone, .forest]
    )
    func seamlessBed(sound: SynthesizedSound) throws {
        let folder = try TemporaryFolder()
        let x = try #require(synthesizedSounds[sound])
        let path = folder.path("\(sound.rawValue).wav")
        try writeWAV(x, rate: 44_100, channels: 1, format: .float32, to: path)
        let largestStep = zip(x, x.dropFirst()).map { abs($1 - $0) }.max() ?? 0
        let crossfade = 88_200
        let stream = try loopStream(path, rate: 44_100, channels: .mono, crossfade: Int64(crossfade))
        let body = x.count - 2 * crossfade
        let frames = crossfade + (body + crossfade) * 3 + 1
        let output = try readLoop(stream, frames: frames, blocks: [44_101, 999])
        let levels = stride(from: 22_050, to: x.count - 22_050 - crossfade, by: 11_025).map {
            rms(x, $0..<($0 + crossfade))
        }
        let ownLevels = (levels.min() ?? 0)...(levels.max() ?? 0)
        for seam in 0..<3 {
            // From the last body frame before the crossfade to the first body frame after it.
            let start = crossfade + body * (seam + 1) + crossfade * seam - 1
            let steps = (start..<(start + crossfade + 1)).map { abs(output[$0 + 1] - output[$0]) }
            let largest = steps.max() ?? 0
            #expect(largest <= largestStep, "\(sound) seam \(seam): \(largest) against \(largestStep)")
            // And the level holds through the seam: its RMS within the range of the bed's own
            // levels over windows of the same length (the fades at its ends left out), ±0.5 dB.
            let level = rms(output, (start + 1)..<(start + 1 + crossfade))
            #expect(
                level >= ownLevels.lowerBound * 0.944 && level <= ownLevels.upperBound * 1.059,
                "\(sound) seam \(seam) RMS \(level), the bed's own \(ownLevels)"
            )
        }
    }
}
