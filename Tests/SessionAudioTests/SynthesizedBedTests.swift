import Foundation
import SessionTimeline
import Testing

@testable import SessionAudio

/// The normalized autocorrelation of `x` at lags `0...maxLag`, by FFT: at each lag the sum of
/// products over the overlap, divided by the overlap's share of the whole and by the lag-0 sum,
/// so that an exact repeat reads 1 whatever its lag.
func autocorrelation(_ x: [Double], maxLag: Int) -> [Double] {
    var size = 1
    while size < x.count + maxLag { size *= 2 }
    var real = x + [Double](repeating: 0, count: size - x.count)
    var imaginary = [Double](repeating: 0, count: size)
    fourierTransform(&real, &imaginary, inverse: false)
    for index in 0..<size {
        real[index] = real[index] * real[index] + imaginary[index] * imaginary[index]
        imaginary[index] = 0
    }
    fourierTransform(&real, &imaginary, inverse: true)
    let energy = real[0]
    return (0...maxLag).map { lag in
        real[lag] / energy * Double(x.count) / Double(x.count - lag)
    }
}

/// An in-place radix-2 complex FFT (unscaled both ways; the ratios above need no scale).
func fourierTransform(_ real: inout [Double], _ imaginary: inout [Double], inverse: Bool) {
    let count = real.count
    real.withUnsafeMutableBufferPointer { re in
        imaginary.withUnsafeMutableBufferPointer { im in
            var target = 0
            for index in 0..<count {
                if index < target {
                    re.swapAt(index, target)
                    im.swapAt(index, target)
                }
                var bit = count >> 1
                while bit > 0 && target & bit != 0 {
                    target ^= bit
                    bit >>= 1
                }
                target |= bit
            }
            var length = 2
            while length <= count {
                let angle = (inverse ? 2 : -2) * Double.pi / Double(length)
                let (stepReal, stepImaginary) = (cos(angle), sin(angle))
                var start = 0
                while start < count {
                    var (wReal, wImaginary) = (1.0, 0.0)
                    for offset in 0..<(length / 2) {
                        let (a, b) = (start + offset, start + offset + length / 2)
                        let tReal = re[b] * wReal - im[b] * wImaginary
                        let tImaginary = re[b] * wImaginary + im[b] * wReal
                        (re[b], im[b]) = (re[a] - tReal, im[a] - tImaginary)
                        (re[a], im[a]) = (re[a] + tReal, im[a] + tImaginary)
                        (wReal, wImaginary) = (
                            wReal * stepReal - wImaginary * stepImaginary, wReal * stepImaginary + wImaginary * stepReal
                        )
                    }
                    start += length
                }
                length *= 2
            }
        }
    }
}

/// `samples` averaged over each run of `factor`: a crude low-pass and decimation that keeps an
/// exact repeat an exact repeat.
func decimated(_ samples: [Float], by factor: Int) -> [Double] {
    stride(from: 0, to: samples.count - factor + 1, by: factor).map { start in
        samples[start..<(start + factor)].reduce(0.0) { $0 + Double($1) } / Double(factor)
    }
}

@Suite("Built-in beds made for the session's length")
struct SynthesizedBedTests {
    /// `seconds` of the bed as a session plays it, at 44,100 Hz.
    static func bed(_ sound: SynthesizedSound, seconds: Int) throws -> [Float] {
        let stream = try ClipStream.synthesizedBed(
            sound,
            frames: Frames(Int64(seconds * 44_100)),
            outputRate: 44_100,
            outputChannels: .mono
        )
        var samples: [Float] = []
        var block: [Float] = []
        while true {
            let read = try stream.read(into: &block, maximumFrames: 65_536)
            guard read > 0 else { break }
            samples += block[0..<read]
        }
        return samples
    }

    /// The measure: over 150 s, decimated to 5,512.5 Hz, no lag from `shortest` to 60 s
    /// correlates over 0.5. Below `shortest` a sound's own texture correlates: the drone's
    /// narrow bands (0.15 Hz wide) stay coherent for a couple of seconds by design.
    @Test(
        "No autocorrelation peak over 0.5 at any lag under 60 s; the 24 s file looped has one at its length",
        arguments: [(SynthesizedSound.rain, 0.1), (.forest, 0.1), (.drone, 3.0)]
    )
    func neverRepeats(sound: SynthesizedSound, shortest: Double) throws {
        let rate = 44_100.0 / 8
        let made = decimated(try Self.bed(sound, seconds: 150), by: 8)
        let lags = autocorrelation(made, maxLag: Int(60 * rate))
        let from = Int(shortest * rate)
        let peak = lags[from...].indices.max { lags[$0] < lags[$1] } ?? from
        #expect(lags[peak] < 0.5, "\(sound): \(lags[peak]) at \(Double(peak) / rate) s")

        // The same measure catches what a loop does: the library's 24 s file, repeated.
        let file = synthesizedSounds[sound] ?? sound.samples()
        let looped = decimated(Array((0..<7).map { _ in file }.joined()), by: 8)
        let loopedLags = autocorrelation(looped, maxLag: Int(60 * rate))
        let period = file.count / 8
        #expect(loopedLags[period] > 0.9, "\(sound) looped: \(loopedLags[period]) at its length")
    }

    @Test("The library's file is the bed's first 22 s, bit for bit, and the bed goes on at its level")
    func fileIsItsStart() throws {
        for sound in [SynthesizedSound.rain, .drone, .forest] {
            let file = synthesizedSounds[sound] ?? sound.samples()
            let made = try Self.bed(sound, seconds: 60)
            #expect(made.count == 60 * 44_100)
            #expect(made[0] == 0, "\(sound) fades in from zero")
            let start = 22 * 44_100
            #expect(Array(made[0..<start]) == Array(file[0..<start]), "\(sound)")
            // Each later 10 s is within 1.5 dB of the first's RMS: no drift, no gap.
            let first = rms(made, 44_100..<(11 * 44_100))
            for window in stride(from: 11, to: 51, by: 10) {
                let level = rms(made, (window * 44_100)..<((window + 10) * 44_100))
                #expect(abs(20 * log10(level / first)) < 1.5, "\(sound) at \(window) s: \(level) against \(first)")
            }
        }
    }

    @Test("A bed at another rate and layout is the bed converted, exactly the frames asked for")
    func converted() throws {
        let stream = try ClipStream.synthesizedBed(.rain, frames: 480_001, outputRate: 48_000, outputChannels: .stereo)
        var total = 0
        var block: [Float] = []
        var equalChannels = true
        while true {
            let read = try stream.read(into: &block, maximumFrames: 16_384)
            guard read > 0 else { break }
            for frame in 0..<read where block[2 * frame] != block[2 * frame + 1] { equalChannels = false }
            total += read
        }
        #expect(total == 480_001 && equalChannels)
    }
}
