import Foundation
import SessionTimeline

/// Evens out a speech clip before it is brought to the loudness target, so that the true-peak
/// limiter after the mix has little left to do: Piper's narration, brought to −16 LUFS, peaks up
/// to 9 dB over a −1 dBTP ceiling, and a limiter taking 9 dB off is heard as pumping.
///
/// Three stages, in the order a broadcast voice chain has them:
/// 1. a **phase rotator**: four first-order all-pass sections (150, 150, 300 and 300 Hz) per
///    channel. It changes no frequency's level, only phases, and makes the voice's lopsided
///    glottal pulses more symmetric: on the 126 clips of the 14 Reactivity meditations it lowers
///    the peaks 1.7 dB (median) at the same loudness;
/// 2. a **leveler**: the level of the 20 ms around each block (RMS of all channels) over
///    ``levelThreshold`` dB above the clip's loudness is compressed ``levelRatio``:1 with a soft
///    knee: a stressed syllable comes down, the rest of the speech is untouched;
/// 3. a **peak compressor**: each block's sample peak, after stage 2's gain, over
///    ``peakThreshold`` dB above the clip's loudness is compressed ``peakRatio``:1, soft knee.
///
/// The two gains (dB) add up. The sum glides down before it is needed (the smallest within
/// ``lookAheadSeconds``, then averaged over as long), returns with a ``releaseSeconds`` release,
/// and moves linearly across each block, so it has no steps. Blocks are about 1.5 ms.
///
/// The thresholds are set from `reference`, the clip's own integrated loudness, so the leveler
/// does the same to a clip whatever its level. The output is exactly as long as the source and
/// aligned with it: the look-ahead is read ahead from the source, inside.
final class SpeechLeveler: FrameSource {
    /// Where the leveler starts, dB above the clip's loudness (the middle of the knee).
    static let levelThreshold = 7.0
    static let levelRatio = 3.0
    /// Where the peak compressor starts, dB of sample peak above the clip's loudness.
    static let peakThreshold = 12.0
    static let peakRatio = 4.0
    /// The width of both soft knees, dB.
    static let kneeDecibels = 6.0
    /// The leveler's RMS window, centred on the block.
    static let windowSeconds = 0.02
    static let lookAheadSeconds = 0.008
    static let releaseSeconds = 0.08
    static let blockSeconds = 0.0015

    let sampleRate: SampleRate
    let channelCount: ChannelCount
    /// The largest gain reduction so far, dB.
    private(set) var largestReductionDecibels: Double = 0
    /// Source frames lowered by more than 1 dB so far.
    private(set) var framesReducedOverOneDecibel: Int64 = 0

    private let source: any FrameSource
    private let channels: Int
    private let reference: Double
    private let blockFrames: Int
    /// Blocks each side of a block in its RMS window.
    private let halfWindow: Int
    /// Blocks of look-ahead of the gain's glide.
    private let lookAhead: Int
    /// The release's one-pole coefficient per block.
    private let release: Double

    /// The phase rotator of each channel.
    private var rotators: [PhaseRotator]

    /// Per block from `firstBlock` on: the sum of its squared samples, and its sample peak.
    private var squares: [Double] = []
    private var peaks: [Float] = []
    /// Per block from `firstBlock` on, as far as known: the gain each asks for (dB), then the
    /// smallest of those within the look-ahead.
    private var requirements: [Double] = []
    private var minima: [Double] = []
    private var firstBlock = 0
    /// The block being filled: its sum, peak and frames so far.
    private var partialSquares = 0.0
    private var partialPeak: Float = 0
    private var partialFrames = 0

    /// Rotated frames not yet handed out: `held[heldStart...]`, from block `emittedBlocks`'s first frame.
    private var held: [Float] = []
    private var heldStart = 0
    private var emittedBlocks = 0
    /// The gain (dB) of the last block handed out, and the averaging window's state.
    private var gain = 0.0
    private var averageSum = 0.0
    /// Frames ready to hand out, from `readyStart`.
    private var ready: [Float] = []
    private var readyStart = 0
    private var sourceEnded = false
    private var sourceBlocks = 0
    private var decoded: [Float] = []

    /// A leveler of `source`, whose integrated loudness is `reference` LUFS.
    init(_ source: any FrameSource, reference: Double) {
        self.source = source
        sampleRate = source.sampleRate
        channelCount = source.channelCount
        channels = source.channelCount.count
        self.reference = reference
        let rate = Double(source.sampleRate.hertz)
        blockFrames = max(1, Int((rate * Self.blockSeconds).rounded()))
        let blockDuration = Double(blockFrames) / rate
        halfWindow = Int((Self.windowSeconds / 2 / blockDuration).rounded())
        lookAhead = max(1, Int((Self.lookAheadSeconds / blockDuration).rounded()))
        release = exp(-blockDuration / Self.releaseSeconds)
        rotators = Array(repeating: PhaseRotator(sampleRate: rate), count: channels)
    }

    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        // What was handed out goes before more is made: what is left is less than a pull, so the
        // queue stays at about one read's size (not the 1 MiB `take` lets a longer queue reach).
        if readyStart > 0 {
            ready.removeFirst(readyStart)
            readyStart = 0
        }
        while (ready.count - readyStart) / channels < maximumFrames && !(sourceEnded && emittedAll) {
            try pull()
        }
        let frames = min(maximumFrames, (ready.count - readyStart) / channels)
        guard frames > 0 else { return 0 }
        let count = frames * channels
        if samples.count < count { samples = [Float](repeating: 0, count: count) }
        ClipStream.take(count, from: &ready, at: &readyStart, into: &samples)
        return frames
    }

    private var emittedAll: Bool { emittedBlocks >= sourceBlocks && heldStart == held.count }

    /// Reads a chunk of the source, rotates it and measures its blocks, then hands out what the
    /// look-ahead allows; at the source's end, the rest, as if silence followed.
    private func pull() throws(AudioError) {
        if !sourceEnded {
            let frames = try source.read(into: &decoded, maximumFrames: 4_096)
            if frames > 0 {
                rotateAndMeasure(frames: frames)
            } else {
                sourceEnded = true
                if partialFrames > 0 { closeBlock() }
                sourceBlocks = firstBlock + squares.count
                // Silence after the end, as far as the look-ahead reaches.
                for _ in 0..<(halfWindow + 2 * lookAhead + 1) {
                    squares.append(0)
                    peaks.append(0)
                }
            }
        }
        emitResolvedBlocks()
    }

    private func rotateAndMeasure(frames: Int) {
        let channels = channels
        let start = held.count
        held.append(contentsOf: decoded[0..<(frames * channels)])
        held.withUnsafeMutableBufferPointer { held in
            for channel in 0..<channels {
                // Taken out of `self` for the loop: its state stays in registers.
                var rotator = rotators[channel]
                var index = start + channel
                for _ in 0..<frames {
                    held[index] = Float(rotator.process(Double(held[index])))
                    index += channels
                }
                rotators[channel] = rotator
            }
            // Block by block, the sums in locals (a class's properties cost an exclusivity check
            // each), added in the same order as one running sum.
            let first = held.baseAddress! + start
            var frame = 0
            while frame < frames {
                let count = min(frames - frame, blockFrames - partialFrames)
                var squares = partialSquares
                var peak = partialPeak
                let samples = first + frame * channels
                for index in 0..<(count * channels) {
                    let sample = samples[index]
                    squares += Double(sample * sample)
                    peak = max(peak, abs(sample))
                }
                partialSquares = squares
                partialPeak = peak
                partialFrames += count
                if partialFrames == blockFrames { closeBlock() }
                frame += count
            }
        }
    }

    private func closeBlock() {
        squares.append(partialSquares)
        peaks.append(partialPeak)
        partialSquares = 0
        partialPeak = 0
        partialFrames = 0
    }

    /// The gain `over` dB above a threshold asks for with `ratio`:1 and the soft knee, dB (≤ 0).
    private static func compression(over: Double, ratio: Double) -> Double {
        let halfKnee = kneeDecibels / 2
        if over <= -halfKnee { return 0 }
        let slope = 1 / ratio - 1
        if over >= halfKnee { return slope * over }
        return slope * (over + halfKnee) * (over + halfKnee) / (2 * kneeDecibels)
    }

    /// Hands out every held block whose gain is known.
    private func emitResolvedBlocks() {
        let known = firstBlock + squares.count
        // Requirements: block k's needs blocks up to k + halfWindow.
        while firstBlock + requirements.count + halfWindow < known {
            let block = firstBlock + requirements.count
            var sum = 0.0
            for other in max(firstBlock, block - halfWindow)...(block + halfWindow) {
                sum += squares[other - firstBlock]
            }
            // Channels' powers add, as in BS.1770's loudness, which `reference` is.
            let frames = Double((2 * halfWindow + 1) * blockFrames)
            let level = 10 * log10(max(sum / frames, 1e-20)) - reference
            let leveling = Self.compression(over: level - Self.levelThreshold, ratio: Self.levelRatio)
            let peak = 20 * log10(max(Double(peaks[block - firstBlock]), 1e-10)) - reference
            let peakCompression = Self.compression(over: peak + leveling - Self.peakThreshold, ratio: Self.peakRatio)
            requirements.append(leveling + peakCompression)
        }
        // The smallest requirement of blocks k … k + lookAhead.
        while firstBlock + minima.count + lookAhead < firstBlock + requirements.count {
            let index = minima.count
            var smallest = 0.0
            for other in index...(index + lookAhead) { smallest = min(smallest, requirements[other]) }
            minima.append(smallest)
        }
        // Block k's gain: the average of the minima of blocks k − lookAhead … k, then the release.
        let lastBlock = sourceEnded ? sourceBlocks : firstBlock + minima.count
        while emittedBlocks < min(lastBlock, firstBlock + minima.count) {
            let block = emittedBlocks
            averageSum += minima[block - firstBlock]
            let leaving = block - lookAhead - 1
            if leaving >= firstBlock { averageSum -= minima[leaving - firstBlock] }
            let average = min(0, averageSum / Double(lookAhead + 1))
            let previous = gain
            gain = average <= gain ? average : average + (gain - average) * release
            emit(block: block, from: previous, to: gain)
        }
        compact()
    }

    /// Moves block `block`'s held frames to `ready`, its gain moving linearly from `from` dB to `to` dB.
    private func emit(block: Int, from: Double, to: Double) {
        let channels = channels
        let frames = min(blockFrames, (held.count - heldStart) / channels)
        let count = frames * channels
        let first = heldStart
        if from == 0 && to == 0 {
            held.withUnsafeBufferPointer { ready.append(contentsOf: $0[first..<(first + count)]) }
        } else {
            let start = pow(10, from / 20)
            let step = (pow(10, to / 20) - start) / Double(frames)
            let end = ready.count
            ready.append(contentsOf: repeatElement(0, count: count))
            ready.withUnsafeMutableBufferPointer { ready in
                held.withUnsafeBufferPointer { held in
                    for frame in 0..<frames {
                        let gain = Float(start + step * Double(frame + 1))
                        for channel in 0..<channels {
                            let index = frame * channels + channel
                            ready[end + index] = held[first + index] * gain
                        }
                    }
                }
            }
        }
        heldStart += count
        emittedBlocks = block + 1
        if -to > largestReductionDecibels { largestReductionDecibels = -to }
        if to < -1 { framesReducedOverOneDecibel += Int64(frames) }
    }

    /// Drops the blocks no window reaches any more.
    private func compact() {
        if heldStart >= 8_192 && heldStart * 2 >= held.count {
            held.removeFirst(heldStart)
            heldStart = 0
        }
        let keep = emittedBlocks - lookAhead - 1 - halfWindow
        let drop = min(keep - firstBlock, minima.count)
        guard drop >= 1_024 else { return }
        squares.removeFirst(drop)
        peaks.removeFirst(drop)
        requirements.removeFirst(drop)
        minima.removeFirst(drop)
        firstBlock += drop
    }
}

/// Four first-order all-pass sections in series, `H(z) = (a + z⁻¹) / (1 + a·z⁻¹)` each, at 150,
/// 150, 300 and 300 Hz: every frequency keeps its level, and its phase turns by up to 4 × 180°.
/// Each section is `y = (a·x + x₁) − a·y₁`: the part in brackets waits on nothing, so each
/// section's chain of dependent operations is one multiply and one subtraction per sample, and
/// the four chains run side by side.
struct PhaseRotator {
    /// The sections' corner frequencies, Hz.
    static let frequencies = (150.0, 150.0, 300.0, 300.0)
    private let a: (Double, Double, Double, Double)
    /// Each section's last input and output.
    private var last: (x: Double, y: Double, x2: Double, y2: Double, x3: Double, y3: Double, x4: Double, y4: Double) =
        (0, 0, 0, 0, 0, 0, 0, 0)

    init(sampleRate: Double) {
        func coefficient(_ frequency: Double) -> Double {
            let t = tan(Double.pi * min(frequency, sampleRate / 4) / sampleRate)
            return (t - 1) / (t + 1)
        }
        let f = Self.frequencies
        a = (coefficient(f.0), coefficient(f.1), coefficient(f.2), coefficient(f.3))
    }

    mutating func process(_ input: Double) -> Double {
        let y1 = (a.0 * input + last.x) - a.0 * last.y
        let y2 = (a.1 * y1 + last.x2) - a.1 * last.y2
        let y3 = (a.2 * y2 + last.x3) - a.2 * last.y3
        let y4 = (a.3 * y3 + last.x4) - a.3 * last.y4
        last = (input, y1, y1, y2, y2, y3, y3, y4)
        return y4
    }
}
