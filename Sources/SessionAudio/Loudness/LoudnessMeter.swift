internal import CEbur128
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

    /// The corresponding libebur128 call is `ebur128_init` with `EBUR128_MODE_I | EBUR128_MODE_HISTOGRAM`,
    /// and `EBUR128_MODE_S` with `shortTerm` (``shortTermLoudness``).
    /// - Throws: ``AudioError`` (`unsupportedFormat`) for a rate or channel count libebur128 refuses.
    package init(sampleRate: SampleRate, channelCount: ChannelCount, shortTerm: Bool = false) throws(AudioError) {
        let mode = Int32(
            EBUR128_MODE_I.rawValue | EBUR128_MODE_HISTOGRAM.rawValue | (shortTerm ? EBUR128_MODE_S.rawValue : 0)
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
        let result = ebur128_add_frames_float(state, base, frames)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_add_frames_float failed with \(result)")
    }

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
