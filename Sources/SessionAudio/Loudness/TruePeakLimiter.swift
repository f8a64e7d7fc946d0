import Foundation
package import SessionTimeline

/// A look-ahead true-peak limiter: it lowers the gain just enough, and early enough, that the
/// output's true peak (as ``TruePeakMeter`` and ffmpeg's `ebur128=peak=true` measure it) stays at or
/// under a ceiling, with no overshoot; all channels share one gain (linked), so the image does not move.
///
/// How the gain is made, per input frame `n` with peak `p[n]` (``TruePeakFilter``: the largest of
/// the frame's samples and the interpolated values it completes, over all channels):
/// 1. required gain `need[n] = min(1, c / p[n])`, `c` the internal ceiling (``internalMargin`` under
///    the requested one, which covers the interpolator's error between its points, the gain's change
///    across the 12 taps and 16-bit rounding); it binds frames `n − 11 … n`, the filter's reach;
/// 2. a sliding minimum of `need` over the next `W + 11` frames (`W` the look-ahead in frames),
///    then a moving average of that over the last `W` frames: the gain glides down over `W` frames
///    and is at or under every frame's requirement (`g[k] ≤ need` for all that bind frame `k`);
/// 3. a release: when the average rises, the gain follows it with a one-pole filter of the release
///    time, so it only ever lowers the gain further.
///
/// The output is aligned with the input and as long: output frame `t` is input frame `t` times its
/// gain. ``latency`` frames are held back (`W + 10`); ``finish(into:)`` hands them out. When no gain
/// under 1 is pending, frames are copied through unchanged, bit for bit, and blocks whose largest
/// sample times the filter's largest gain stays under the ceiling are not oversampled at all.
package final class TruePeakLimiter {
    /// How far under the requested ceiling the limiter aims, in dB.
    package static let internalMargin = 0.2

    /// The rate of the frames.
    package let sampleRate: SampleRate
    /// The number of interleaved channels in each frame.
    package let channelCount: ChannelCount
    /// The ceiling the output's true peak stays under, in dBTP.
    package let ceilingDecibels: Double
    /// Frames held back: output lags input by this many frames until ``finish(into:)``.
    package let latency: Int
    /// The largest gain reduction applied so far, in dB (0 when nothing was limited).
    package private(set) var largestReductionDecibels: Double = 0
    /// How many frames so far were lowered by more than 1 dB: how long the limiter audibly worked.
    package private(set) var framesReducedOverOneDecibel: Int64 = 0

    /// Everything that changes as frames go through, in one value: inside its methods the
    /// per-frame work touches no class property (each such access is a run-time exclusivity check).
    private var core: LimiterCore
    private var finished = false

    /// - Parameters:
    ///   - ceilingDecibels: the largest true peak the output may have, in dBTP (e.g. -1).
    ///   - lookAhead: how long the gain takes to glide down before a peak, in seconds; also how much
    ///     of the delay is the limiter's (5 ms: about 110 frames at 22,050 Hz).
    ///   - release: the time constant of the gain's return towards 1, in seconds.
    package init(
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        ceilingDecibels: Double,
        lookAhead: Double = 0.005,
        release: Double = 0.1
    ) {
        precondition(ceilingDecibels.isFinite, "the ceiling must be a finite number of dB")
        precondition(lookAhead > 0 && lookAhead.isFinite, "the look-ahead must be a positive time")
        precondition(release > 0 && release.isFinite, "the release must be a positive time")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.ceilingDecibels = ceilingDecibels
        let window = max(1, Int((lookAhead * Double(sampleRate.hertz)).rounded()))
        latency = window + TruePeakFilter.historyLength - 1
        core = LimiterCore(
            channelCount: channelCount.count,
            ceiling: Float(pow(10, (ceilingDecibels - Self.internalMargin) / 20)),
            window: window,
            releaseCoefficient: 1 - exp(-1 / (release * Double(sampleRate.hertz)))
        )
    }

    /// Limits `frames` interleaved frames from the start of `input`, appending to `output` the frames
    /// that are ready; returns how many frames it appended. Output frame `t` is input frame `t`:
    /// the first call returns `frames − latency` (or 0), and every frame comes out in the end.
    @discardableResult
    package func process(_ input: UnsafeBufferPointer<Float>, frames: Int, into output: inout [Float]) -> Int {
        precondition(!finished, "process(_:frames:into:) after finish(into:)")
        precondition(frames >= 0 && frames * channelCount.count <= input.count, "fewer samples than frames")
        guard frames > 0, let base = input.baseAddress else { return 0 }
        defer { takeStatistics() }
        return core.process(base, frames: frames, latency: latency, into: &output)
    }

    /// Limits the first `frames` interleaved frames of `input`; see ``process(_:frames:into:)``.
    @discardableResult
    package func process(_ input: [Float], frames: Int, into output: inout [Float]) -> Int {
        input.withUnsafeBufferPointer { process($0, frames: frames, into: &output) }
    }

    /// Limits every frame of `input` (interleaved); see ``process(_:frames:into:)``.
    @discardableResult
    package func process(_ input: [Float], into output: inout [Float]) -> Int {
        input.withUnsafeBufferPointer { process($0, frames: $0.count / channelCount.count, into: &output) }
    }

    /// Ends the stream: appends the frames still held back to `output` and returns how many
    /// (``latency``, or all frames if fewer came in). The limiter takes no more input after this.
    @discardableResult
    package func finish(into output: inout [Float]) -> Int {
        precondition(!finished, "finish(into:) twice")
        finished = true
        defer { takeStatistics() }
        return core.finish(into: &output)
    }

    private func takeStatistics() {
        largestReductionDecibels = core.largestReductionDecibels
        framesReducedOverOneDecibel = core.framesReducedOverOneDecibel
    }
}

/// The limiter's moving parts; ``TruePeakLimiter`` describes what they do.
private struct LimiterCore {
    let channelCount: Int
    let ceiling: Float
    let window: Int
    let releaseCoefficient: Double
    var filter: TruePeakFilter
    var peaks: [Float]
    var largestReductionDecibels: Double = 0

    /// Input frames not yet output, interleaved; frame `max(0, outputPosition)` starts `delayHead`
    /// frames in.
    var delay: [Float] = []
    var delayHead = 0
    /// Frames received so far, and the next frame to output. The stream is taken to start with
    /// `window − 1` frames of silence (negative frame numbers, never output), so that the gain can
    /// glide down before the first frame as before any other.
    var inputCount = 0
    var outputPosition: Int

    /// A frame's required gain under 1.
    struct Requirement {
        var frame: Int
        var gain: Float
    }
    /// Requirements not yet in the sliding minimum's window, in frame order.
    var queue: [Requirement] = []
    var queueHead = 0
    /// The sliding minimum's candidates, gains rising from the front.
    var minimum: [Requirement] = []
    var minimumHead = 0
    /// The last `window` sliding minima, their sum, and where the next goes.
    var minima: [Float]
    var minimaSum: Double = 0
    var minimaSlot = 0
    /// Whether `minima` holds the values of the last `window` frames (not after a pass-through run).
    var minimaCurrent = false
    /// The last frame whose sliding minimum was under 1.
    var lastReducedMinimum = Int.min / 2
    /// The gain of the last frame output (in double precision: in single, the release's steps
    /// vanish in rounding before the gain reaches 1).
    var gain: Double = 1
    var smallestGain: Double = 1
    var framesReducedOverOneDecibel: Int64 = 0
    /// The gain 1 dB under unity.
    static let oneDecibelDown = 0.891_250_938_133_745_5

    init(channelCount: Int, ceiling: Float, window: Int, releaseCoefficient: Double) {
        self.channelCount = channelCount
        self.ceiling = ceiling
        self.window = window
        self.releaseCoefficient = releaseCoefficient
        filter = TruePeakFilter(channelCount: channelCount)
        peaks = [Float](repeating: 0, count: TruePeakFilter.blockFrames + 8)
        minima = [Float](repeating: 1, count: window)
        outputPosition = 1 - window
    }

    mutating func process(_ input: UnsafePointer<Float>, frames: Int, latency: Int, into output: inout [Float]) -> Int {
        analyse(input, frames: frames)
        delay.append(contentsOf: UnsafeBufferPointer(start: input, count: frames * channelCount))
        inputCount += frames
        return emit(until: inputCount - latency, into: &output)
    }

    mutating func finish(into output: inout [Float]) -> Int {
        // What follows the last frame is silence: the filter's tail still interpolates between the
        // last frames and it, and those values bind the last frames too.
        let silence = [Float](repeating: 0, count: TruePeakFilter.historyLength * channelCount)
        silence.withUnsafeBufferPointer {
            analyse($0.baseAddress!, frames: TruePeakFilter.historyLength, startingAt: inputCount)
        }
        return emit(until: inputCount, into: &output)
    }

    /// Finds the required gains of `frames` new frames and queues those under 1.
    mutating func analyse(_ samples: UnsafePointer<Float>, frames: Int, startingAt first: Int? = nil) {
        let channels = channelCount
        var frame = first ?? inputCount
        var start = 0
        while start < frames {
            let count = min(TruePeakFilter.blockFrames, frames - start)
            let block = samples + start * channels
            if filter.bound(block, frames: count) <= ceiling {
                filter.skip(block, frames: count)
            } else {
                peaks.withUnsafeMutableBufferPointer { peaks in
                    let peaks = peaks.baseAddress!
                    filter.framePeaks(block, frames: count, into: peaks)
                    for index in 0..<count where peaks[index] > ceiling {
                        queue.append(Requirement(frame: frame + index, gain: ceiling / peaks[index]))
                    }
                }
            }
            start += count
            frame += count
        }
    }

    /// Outputs frames from `outputPosition` up to `end` (exclusive), returning how many.
    mutating func emit(until end: Int, into output: inout [Float]) -> Int {
        guard end > outputPosition else { return 0 }
        let channels = channelCount
        let reach = window + TruePeakFilter.historyLength  // the sliding minimum's span
        var frame = outputPosition
        while frame < min(0, end) {
            // The silence before the first frame: only the gain moves.
            _ = nextGain(frame: frame, reach: reach)
            frame += 1
        }
        let produced = end - frame
        guard produced > 0 else {
            outputPosition = end
            return 0
        }
        output.reserveCapacity(output.count + produced * channels)
        // The held frames, out of `self` while the gain (in `self`) moves.
        var held: [Float] = []
        swap(&held, &delay)
        held.withUnsafeBufferPointer { held in
            var samples = held.baseAddress! + delayHead * channels  // frame `frame`'s
            while frame < end {
                while minimumHead < minimum.count && minimum[minimumHead].frame < frame { minimumHead += 1 }
                let nextRequirement = queueHead < queue.count ? queue[queueHead].frame : Int.max
                if gain == 1 && minimumHead == minimum.count && lastReducedMinimum < frame - window + 1
                    && nextRequirement > frame + reach - 1
                {
                    // Nothing pending: copy frames through until a requirement enters the window.
                    let stop = nextRequirement == Int.max ? end : min(end, nextRequirement - reach + 1)
                    output.append(contentsOf: UnsafeBufferPointer(start: samples, count: (stop - frame) * channels))
                    samples += (stop - frame) * channels
                    minimaCurrent = false
                    frame = stop
                    continue
                }
                if gain < 1 && minimaCurrent && minimumHead == minimum.count && lastReducedMinimum < frame - window
                    && nextRequirement > frame + reach - 1
                {
                    // Releasing, with every minimum in the window 1 and none coming: only the gain
                    // moves (as ``nextGain(frame:reach:)`` moves it), until a requirement enters
                    // the window or the gain is back at 1.
                    let stop = nextRequirement == Int.max ? end : min(end, nextRequirement - reach + 1)
                    let released = release(frames: stop - frame, samples: samples, into: &output)
                    samples += released * channels
                    frame += released
                    continue
                }
                let gain = Float(nextGain(frame: frame, reach: reach))
                for channel in 0..<channels { output.append(samples[channel] * gain) }
                samples += channels
                frame += 1
            }
        }
        swap(&held, &delay)
        delayHead += produced
        outputPosition = end
        compact()
        return produced
    }

    /// The gain of `frame`, from the requirements within reach of it.
    mutating func nextGain(frame: Int, reach: Int) -> Double {
        if !minimaCurrent {
            // After a pass-through run the minima of the last window were all 1 (or are about to
            // leave it): start again from there.
            for index in minima.indices { minima[index] = 1 }
            minimaSum = Double(window)
            minimaCurrent = true
        }
        while queueHead < queue.count && queue[queueHead].frame <= frame + reach - 1 {
            let requirement = queue[queueHead]
            while minimum.count > minimumHead && minimum[minimum.count - 1].gain >= requirement.gain {
                minimum.removeLast()
            }
            minimum.append(requirement)
            queueHead += 1
        }
        let slidingMinimum: Float = minimumHead < minimum.count ? minimum[minimumHead].gain : 1
        if slidingMinimum < 1 { lastReducedMinimum = frame }
        minimaSum += Double(slidingMinimum) - Double(minima[minimaSlot])
        minima[minimaSlot] = slidingMinimum
        minimaSlot = minimaSlot + 1 == window ? 0 : minimaSlot + 1
        let average = min(1, minimaSum / Double(window))
        if average <= gain {
            gain = average
        } else {
            gain += (average - gain) * releaseCoefficient
            // The one-pole release never quite arrives: settle at 1 once within 10⁻⁵ (−0.0001 dB).
            if average == 1 && gain > 1 - 1e-5 { gain = 1 }
        }
        if gain < smallestGain {
            smallestGain = gain
            largestReductionDecibels = -20 * log10(gain)
        }
        if gain < Self.oneDecibelDown { framesReducedOverOneDecibel += 1 }
        return gain
    }

    /// Outputs up to `frames` frames from `samples` while the gain returns towards 1 with nothing
    /// in the window under 1: the same steps as ``nextGain(frame:reach:)`` takes then (each new
    /// minimum is 1 and replaces a 1, so the window's sum stays as it is), without its bookkeeping.
    /// Stops after the frame whose gain reaches 1; returns how many frames it output.
    mutating func release(frames: Int, samples: UnsafePointer<Float>, into output: inout [Float]) -> Int {
        let channels = channelCount
        let average = min(1, minimaSum / Double(window))
        var gain = self.gain
        var reducedOverOneDecibel: Int64 = 0
        var done = 0
        while done < frames {
            if average <= gain {
                gain = average
            } else {
                gain += (average - gain) * releaseCoefficient
                if average == 1 && gain > 1 - 1e-5 { gain = 1 }
            }
            if gain < Self.oneDecibelDown { reducedOverOneDecibel += 1 }
            let frameGain = Float(gain)
            let frame = samples + done * channels
            for channel in 0..<channels { output.append(frame[channel] * frameGain) }
            done += 1
            if gain == 1 { break }
        }
        if gain < smallestGain {
            smallestGain = gain
            largestReductionDecibels = -20 * log10(gain)
        }
        self.gain = gain
        framesReducedOverOneDecibel += reducedOverOneDecibel
        minimaSlot = (minimaSlot + done) % window
        return done
    }

    /// Drops what is behind the output position from the buffers, now and then.
    mutating func compact() {
        let channels = channelCount
        if delayHead >= 8_192 && delayHead * 2 >= delay.count / channels {
            delay.removeFirst(delayHead * channels)
            delayHead = 0
        }
        if queueHead >= 1_024 && queueHead * 2 >= queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
        if minimumHead >= 1_024 && minimumHead * 2 >= minimum.count {
            minimum.removeFirst(minimumHead)
            minimumHead = 0
        }
    }
}
