import Foundation
package import SessionTimeline

/// Measures the true peak of interleaved float frames: the largest magnitude of the signal between
/// its samples as well as at them, as ITU-R BS.1770-4 Annex 2 estimates it (4× oversampling with the
/// Annex's 48-tap, 4-phase interpolating filter), and never less than the largest sample.
///
/// Each channel's filter history carries over from one call of ``add(_:frames:)`` to the next, so
/// the result does not depend on how the frames are split into calls. A block whose largest sample
/// times the filter's largest gain (the biggest per-phase sum of |coefficients|, about 2.02) cannot
/// exceed the peak found so far is not oversampled at all: after the first loud passage, quiet
/// material costs one scan for its largest sample.
///
/// Given a threshold, it also notes where the audio goes over it (``overs``), a block of
/// ``TruePeakFilter/blockFrames`` at a time: a block that might is oversampled even when it cannot
/// raise the peak found so far.
package final class TruePeakMeter {
    /// The number of interleaved channels in each frame.
    package let channelCount: ChannelCount
    private var filter: TruePeakFilter
    /// The largest true peak of any channel so far, linear (1 is full scale); 0 before any audio.
    package private(set) var truePeak: Float = 0
    /// The level whose crossings ``overs`` notes, linear; `nil` when none are noted.
    private let threshold: Float?
    /// Each block whose true peak went over the threshold: its first frame and its peak (linear),
    /// in order; at most ``oversKept`` (then ``oversMissed`` counts the rest).
    package private(set) var overs: [(frame: Int64, peak: Float)] = []
    /// Blocks over the threshold past the first ``oversKept``.
    package private(set) var oversMissed = 0
    /// How many blocks over the threshold are kept: 100,000 (2.2 MB at most) whatever the length.
    package static let oversKept = 100_000
    private var framesMeasured: Int64 = 0

    /// - Parameter threshold: the level (dBTP) whose crossings ``overs`` notes; `nil` for none.
    package init(channelCount: ChannelCount, notingOver threshold: Double? = nil) {
        self.channelCount = channelCount
        filter = TruePeakFilter(channelCount: channelCount.count)
        self.threshold = threshold.map { Float(pow(10, $0 / 20)) }
    }

    /// The true peak in dBTP (`20 log10` of ``truePeak``); `-infinity` for silence.
    package var truePeakDecibels: Double {
        20 * log10(Double(truePeak))
    }

    /// Measures `frames` interleaved frames from the start of `samples`.
    package func add(_ samples: UnsafeBufferPointer<Float>, frames: Int) {
        precondition(frames >= 0 && frames * channelCount.count <= samples.count, "fewer samples than frames")
        guard frames > 0, let base = samples.baseAddress else { return }
        let channels = channelCount.count
        var start = 0
        while start < frames {
            let count = min(TruePeakFilter.blockFrames, frames - start)
            let block = base + start * channels
            let bound = filter.bound(block, frames: count)
            if bound <= truePeak && bound <= (threshold ?? bound) {
                filter.skip(block, frames: count)
            } else {
                let peak = filter.largestPeak(block, frames: count)
                truePeak = max(truePeak, peak)
                if let threshold, peak > threshold {
                    if overs.count < Self.oversKept {
                        overs.append((framesMeasured + Int64(start), peak))
                    } else {
                        oversMissed += 1
                    }
                }
            }
            start += count
        }
        framesMeasured += Int64(frames)
    }

    /// Measures the first `frames` interleaved frames of `samples`.
    package func add(_ samples: [Float], frames: Int) {
        samples.withUnsafeBufferPointer { add($0, frames: frames) }
    }

    /// Measures every frame of `samples` (interleaved; its count a multiple of the channel count).
    package func add(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { add($0, frames: $0.count / channelCount.count) }
    }
}

/// The ITU-R BS.1770-4 Annex 2 true-peak interpolator for any number of channels, with each
/// channel's last 11 samples kept from one block to the next.
///
/// For input frame `n` it yields the four interpolated values `y_p[n] = Σ_k c_p[k] · x[n − k]`
/// (`k` = 0…11), which lie between samples `n − 6` and `n − 5`; the peak of frame `n` is the
/// largest of their magnitudes and `|x[n]|` over all channels. So the peak of frame `n` depends on
/// frames `n − 11 … n` only.
struct TruePeakFilter {
    /// Frames handled at once: the granularity of the quiet-block shortcut.
    static let blockFrames = 256
    /// Filter taps per phase.
    static let taps = 12
    /// Samples of history each channel keeps: one less than the taps.
    static let historyLength = taps - 1

    /// The four phases of the Annex's order-48 interpolating filter, phase 0 first.
    static let phases: [[Float]] = {
        let phase0: [Float] = [
            0.0017089843750, 0.0109863281250, -0.0196533203125, 0.0332031250000, -0.0594482421875, 0.1373291015625,
            0.9721679687500, -0.1022949218750, 0.0476074218750, -0.0266113281250, 0.0148925781250, -0.0083007812500,
        ]
        let phase1: [Float] = [
            -0.0291748046875, 0.0292968750000, -0.0517578125000, 0.0891113281250, -0.1665039062500, 0.4650878906250,
            0.7797851562500, -0.2003173828125, 0.1015625000000, -0.0582275390625, 0.0330810546875, -0.0189208984375,
        ]
        // The prototype is symmetric: phases 2 and 3 are phases 1 and 0 reversed.
        return [phase0, phase1, phase1.reversed(), phase0.reversed()]
    }()

    /// The largest factor by which the filter can raise a magnitude: the biggest per-phase sum of
    /// |coefficients| (2.0228…), rounded up a little so that float rounding inside the filter
    /// cannot beat it. A block whose samples (and history) are all at most `a` interpolates to at
    /// most `a · gainBound`.
    static let gainBound: Float = phases.map { $0.reduce(0) { $0 + abs($1) } }.max()! * 1.0001

    let channelCount: Int
    /// Each channel's last ``historyLength`` samples, oldest first, channel after channel.
    private var history: [Float]
    /// One channel's history and block, zero-padded to a whole number of vectors.
    private var line: [Float]
    /// The peaks of one block, for ``largestPeak(_:frames:)``.
    private var scratch: [Float]

    init(channelCount: Int) {
        self.channelCount = channelCount
        history = [Float](repeating: 0, count: channelCount * Self.historyLength)
        line = [Float](repeating: 0, count: Self.historyLength + Self.blockFrames + 8)
        scratch = [Float](repeating: 0, count: Self.blockFrames + 8)
    }

    /// The most the true peak of the next `frames` frames can be: ``gainBound`` times the largest
    /// magnitude among them and the history they are filtered with. At most ``blockFrames``.
    func bound(_ samples: UnsafePointer<Float>, frames: Int) -> Float {
        let largest = max(Self.largestMagnitude(samples, count: frames * channelCount), historyPeak)
        return largest * Self.gainBound
    }

    /// The largest magnitude in the history.
    private var historyPeak: Float {
        history.withUnsafeBufferPointer { Self.largestMagnitude($0.baseAddress!, count: $0.count) }
    }

    /// Takes `frames` frames (at most ``blockFrames``) into the history without filtering them.
    mutating func skip(_ samples: UnsafePointer<Float>, frames: Int) {
        let channels = channelCount
        let keep = Self.historyLength
        history.withUnsafeMutableBufferPointer { history in
            for channel in 0..<channels {
                let own = history.baseAddress! + channel * keep
                if frames >= keep {
                    let first = samples + (frames - keep) * channels + channel
                    for index in 0..<keep { own[index] = first[index * channels] }
                } else {
                    own.update(from: own + frames, count: keep - frames)
                    for index in 0..<frames { own[keep - frames + index] = samples[index * channels + channel] }
                }
            }
        }
    }

    /// The largest peak among `frames` frames (at most ``blockFrames``), taken into the history.
    mutating func largestPeak(_ samples: UnsafePointer<Float>, frames: Int) -> Float {
        var peaks: [Float] = []
        swap(&peaks, &scratch)
        defer { swap(&peaks, &scratch) }
        return peaks.withUnsafeMutableBufferPointer { peaks in
            framePeaks(samples, frames: frames, into: peaks.baseAddress!)
            return Self.largestMagnitude(peaks.baseAddress!, count: frames)
        }
    }

    /// Writes the peak of each of `frames` frames (at most ``blockFrames``) to `peaks`, which has
    /// room for `frames + 8` values (the last 8 are scratch), and takes the frames into the history.
    mutating func framePeaks(_ samples: UnsafePointer<Float>, frames: Int, into peaks: UnsafeMutablePointer<Float>) {
        let channels = channelCount
        let keep = Self.historyLength
        peaks.initialize(repeating: 0, count: frames + 8)
        history.withUnsafeMutableBufferPointer { history in
            line.withUnsafeMutableBufferPointer { line in
                let line = line.baseAddress!
                for channel in 0..<channels {
                    let own = history.baseAddress! + channel * keep
                    line.update(from: own, count: keep)
                    for index in 0..<frames { line[keep + index] = samples[index * channels + channel] }
                    (line + keep + frames).initialize(repeating: 0, count: 8)
                    Self.accumulatePeaks(line, frames: frames, into: peaks)
                    own.update(from: line + frames, count: keep)
                }
            }
        }
    }

    /// `peaks[n] = max(peaks[n], |x[n]|, |y_0[n]| … |y_3[n]|)` for one channel whose samples follow
    /// its history in `line`.
    ///
    /// The coefficients are ``phases``, written out as constants and summed in tap order, so that
    /// the optimizer vectorizes the loop across frames (a test checks it against the table).
    private static func accumulatePeaks(
        _ line: UnsafePointer<Float>,
        frames: Int,
        into peaks: UnsafeMutablePointer<Float>
    ) {
        let current = line + historyLength
        for frame in 0..<frames {
            let x0 = current[frame]
            let x1 = current[frame - 1]
            let x2 = current[frame - 2]
            let x3 = current[frame - 3]
            let x4 = current[frame - 4]
            let x5 = current[frame - 5]
            let x6 = current[frame - 6]
            let x7 = current[frame - 7]
            let x8 = current[frame - 8]
            let x9 = current[frame - 9]
            let x10 = current[frame - 10]
            let x11 = current[frame - 11]
            let y0: Float =
                (0.0017089843750) * x0 + (0.0109863281250) * x1 + (-0.0196533203125) * x2 + (0.0332031250000) * x3
                + (-0.0594482421875) * x4 + (0.1373291015625) * x5 + (0.9721679687500) * x6 + (-0.1022949218750) * x7
                + (0.0476074218750) * x8 + (-0.0266113281250) * x9 + (0.0148925781250) * x10 + (-0.0083007812500) * x11
            let y1: Float =
                (-0.0291748046875) * x0 + (0.0292968750000) * x1 + (-0.0517578125000) * x2 + (0.0891113281250) * x3
                + (-0.1665039062500) * x4 + (0.4650878906250) * x5 + (0.7797851562500) * x6 + (-0.2003173828125) * x7
                + (0.1015625000000) * x8 + (-0.0582275390625) * x9 + (0.0330810546875) * x10 + (-0.0189208984375) * x11
            let y2: Float =
                (-0.0189208984375) * x0 + (0.0330810546875) * x1 + (-0.0582275390625) * x2 + (0.1015625000000) * x3
                + (-0.2003173828125) * x4 + (0.7797851562500) * x5 + (0.4650878906250) * x6 + (-0.1665039062500) * x7
                + (0.0891113281250) * x8 + (-0.0517578125000) * x9 + (0.0292968750000) * x10 + (-0.0291748046875) * x11
            let y3: Float =
                (-0.0083007812500) * x0 + (0.0148925781250) * x1 + (-0.0266113281250) * x2 + (0.0476074218750) * x3
                + (-0.1022949218750) * x4 + (0.9721679687500) * x5 + (0.1373291015625) * x6 + (-0.0594482421875) * x7
                + (0.0332031250000) * x8 + (-0.0196533203125) * x9 + (0.0109863281250) * x10 + (0.0017089843750) * x11
            var peak = peaks[frame]
            peak = Swift.max(peak, x0.magnitude)
            peak = Swift.max(peak, y0.magnitude)
            peak = Swift.max(peak, y1.magnitude)
            peak = Swift.max(peak, y2.magnitude)
            peaks[frame] = Swift.max(peak, y3.magnitude)
        }
    }

    /// The largest `|value|` among `count` floats (four running maxima, which the optimizer
    /// keeps in one vector register).
    static func largestMagnitude(_ values: UnsafePointer<Float>, count: Int) -> Float {
        var (a, b, c, d): (Float, Float, Float, Float) = (0, 0, 0, 0)
        var index = 0
        while index + 4 <= count {
            a = Swift.max(a, values[index].magnitude)
            b = Swift.max(b, values[index + 1].magnitude)
            c = Swift.max(c, values[index + 2].magnitude)
            d = Swift.max(d, values[index + 3].magnitude)
            index += 4
        }
        while index < count {
            a = Swift.max(a, values[index].magnitude)
            index += 1
        }
        return Swift.max(Swift.max(a, b), Swift.max(c, d))
    }
}
