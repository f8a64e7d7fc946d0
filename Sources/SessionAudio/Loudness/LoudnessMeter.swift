internal import CEbur128
import Foundation
package import SessionTimeline

/// Measures the EBU R128 integrated loudness (ITU-R BS.1770-4, gated) of interleaved float frames
/// with libebur128. Owns its `ebur128_state` and frees it in `deinit`.
///
/// The state keeps a histogram of block loudnesses (`EBUR128_MODE_HISTOGRAM`), so its memory does
/// not grow with the length measured, and the result is within 0.1 LU of the exact gated mean.
/// Channels are weighted by libebur128's default map (for mono and stereo the same as ffmpeg's
/// `ebur128` filter): a mono file is one channel, not counted twice as dual mono.
package final class LoudnessMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    /// The rate the frames are at.
    package let sampleRate: SampleRate
    /// The number of interleaved channels in each frame.
    package let channelCount: ChannelCount

    /// The loudest 400 ms added so far (see ``loudestMomentary``), as libebur128's energy; 0 before
    /// any, and always 0 for a meter made without `momentary`.
    private var loudestMomentaryEnergy = 0.0
    /// The loudest 100 ms block yet, as energy, and the frames added when the last block within
    /// ``strikeDecayDecibels`` of it ended (see ``strikeFrameCount``).
    private var loudestBlockEnergy = 0.0
    private var strikeEnd: Int64 = 0
    /// Frames added so far, with `momentary`.
    private var framesAdded: Int64 = 0
    /// Frames to add before the momentary loudness is read again.
    private var framesToNextHop: Int
    /// How often the momentary loudness is read, in frames: every 10 ms.
    private let hop: Int?

    /// The corresponding libebur128 call is `ebur128_init` with `EBUR128_MODE_I | EBUR128_MODE_HISTOGRAM`,
    /// `EBUR128_MODE_S` with `shortTerm` (``shortTermLoudness``), and `EBUR128_MODE_M` with
    /// `momentary` (``loudestMomentary``).
    /// - Throws: ``AudioError`` (`unsupportedFormat`) for a rate or channel count libebur128 refuses.
    package init(
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        shortTerm: Bool = false,
        momentary: Bool = false
    ) throws(AudioError) {
        let mode = Int32(
            EBUR128_MODE_I.rawValue | EBUR128_MODE_HISTOGRAM.rawValue | (shortTerm ? EBUR128_MODE_S.rawValue : 0)
                | (momentary ? EBUR128_MODE_M.rawValue : 0)
        )
        guard let state = ebur128_init(UInt32(channelCount.count), UInt(sampleRate.hertz), mode) else {
            throw AudioError(
                .unsupportedFormat,
                path: nil,
                reason: "libebur128 cannot measure \(channelCount.count) channels at \(sampleRate.hertz) Hz"
            )
        }
        self.state = state
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        hop = momentary ? max(1, sampleRate.hertz / 100) : nil
        framesToNextHop = hop ?? 0
    }

    deinit {
        var state: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&state)
    }

    /// Measures `frames` interleaved frames from the start of `samples`.
    ///
    /// The corresponding libebur128 call is `ebur128_add_frames_float`. In histogram mode it
    /// allocates nothing, so it cannot fail; a failure would be a broken library (a precondition).
    package func add(_ samples: UnsafeBufferPointer<Float>, frames: Int) {
        precondition(frames >= 0 && frames * channelCount.count <= samples.count, "fewer samples than frames")
        guard frames > 0, let base = samples.baseAddress else { return }
        guard let hop else { return addFrames(base, frames) }
        // In steps that end on the hops, reading the last 400 ms at each.
        var done = 0
        while done < frames {
            let step = min(framesToNextHop, frames - done)
            addFrames(base + done * channelCount.count, step)
            done += step
            framesAdded += Int64(step)
            framesToNextHop -= step
            if framesToNextHop == 0 {
                framesToNextHop = hop
                noteMomentary()
            }
        }
    }

    private func addFrames(_ base: UnsafePointer<Float>, _ frames: Int) {
        let result = ebur128_add_frames_float(state, base, frames)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_add_frames_float failed with \(result)")
    }

    /// Keeps the last 400 ms's loudness if it is the loudest yet, and follows the last 100 ms
    /// for the strike.
    ///
    /// The corresponding libebur128 calls are `ebur128_loudness_momentary` and
    /// `ebur128_loudness_window` (100 ms).
    private func noteMomentary() {
        var loudness = -Double.infinity
        var result = ebur128_loudness_momentary(state, &loudness)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_momentary failed with \(result)")
        loudestMomentaryEnergy = max(loudestMomentaryEnergy, Self.energy(loudness))
        result = ebur128_loudness_window(state, 100, &loudness)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_window failed with \(result)")
        // Streaming: a block louder than all before moves the strike's end to it, and so do the
        // blocks after it still within the decay of it; what came before it no longer counts.
        let block = Self.energy(loudness)
        if block > loudestBlockEnergy {
            loudestBlockEnergy = block
            strikeEnd = framesAdded
        } else if block > 0, block >= loudestBlockEnergy * pow(10, -Self.strikeDecayDecibels / 10) {
            strikeEnd = framesAdded
        }
    }

    /// BS.1770's loudness as energy, `10^((L + 0.691) / 10)`; 0 for silence (−∞ LUFS), so that
    /// loudness can be compared without special cases.
    private static func energy(_ loudness: Double) -> Double {
        loudness.isFinite ? pow(10, (loudness + 0.691) / 10) : 0
    }

    /// How far a sound falls from its loudest 100 ms before its strike is over, dB.
    package static let strikeDecayDecibels = 10.0

    /// Measures the first `frames` interleaved frames of `samples`.
    package func add(_ samples: [Float], frames: Int) {
        samples.withUnsafeBufferPointer { add($0, frames: frames) }
    }

    /// Measures every frame of `samples` (interleaved; its count a multiple of the channel count).
    package func add(_ samples: [Float]) {
        samples.withUnsafeBufferPointer { add($0, frames: $0.count / channelCount.count) }
    }

    /// The integrated loudness of everything added so far, in LUFS; `nil` when no 400 ms block
    /// passes the gates (silence, or less than 400 ms added).
    ///
    /// The corresponding libebur128 call is `ebur128_loudness_global`.
    package var integratedLoudness: Double? {
        var loudness = -Double.infinity
        let result = ebur128_loudness_global(state, &loudness)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_global failed with \(result)")
        return loudness.isFinite ? loudness : nil
    }

    /// The loudest 400 ms of everything added so far, LUFS (EBU Tech 3341's maximum momentary
    /// loudness, read every 10 ms); `nil` below −70 LUFS, or for a meter made without `momentary`.
    ///
    /// The window counts silence before the start, so a sound shorter than 400 ms is measured as
    /// it sounds in silence: a 150 ms beep as its energy over 400 ms. That is what levels a short
    /// cue, which integrated loudness cannot measure at all (its one block would be under 400 ms).
    /// The end needs no padding: once the window slides past the last frame its energy only falls.
    package var loudestMomentary: Double? {
        guard hop != nil else { return nil }
        if framesToNextHop != hop { noteMomentary() }
        let loudness = -0.691 + 10 * log10(loudestMomentaryEnergy)
        return loudness.isFinite && loudness >= -70 ? loudness : nil
    }

    /// How long the sound's strike lasts, in frames from the first: to the end of the last 100 ms
    /// block within ``strikeDecayDecibels`` of its loudest one (read every 10 ms); `nil` for
    /// silence, or for a meter made without `momentary`.
    ///
    /// Speech that starts while a gong still rings this loud is masked by it: the planner lets
    /// a gong's strike pass before a clip starts (``AudioSourceInfo/strikeFrames``).
    package var strikeFrameCount: Int64? {
        guard hop != nil else { return nil }
        if framesToNextHop != hop { noteMomentary() }
        return loudestBlockEnergy > 0 ? strikeEnd : nil
    }

    /// The short-term loudness (the last 3 s, silence before the start) in LUFS; `nil` below
    /// −70 LUFS. Only for a meter made with `shortTerm`.
    ///
    /// The corresponding libebur128 call is `ebur128_loudness_shortterm`.
    package var shortTermLoudness: Double? {
        var loudness = -Double.infinity
        let result = ebur128_loudness_shortterm(state, &loudness)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_shortterm failed with \(result)")
        return loudness.isFinite && loudness >= -70 ? loudness : nil
    }
}
