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

    /// Whether ``loudnessRange`` and ``shortTermLoudness`` can be asked.
    package let measuresRange: Bool

    /// The corresponding libebur128 call is `ebur128_init` with `EBUR128_MODE_I | EBUR128_MODE_HISTOGRAM`,
    /// and `EBUR128_MODE_LRA` (which keeps the short-term window too) when `measuresRange`.
    /// - Throws: ``AudioError`` (`unsupportedFormat`) for a rate or channel count libebur128 refuses.
    package init(sampleRate: SampleRate, channelCount: ChannelCount, measuresRange: Bool = false) throws(AudioError) {
        var mode = EBUR128_MODE_I.rawValue | EBUR128_MODE_HISTOGRAM.rawValue
        if measuresRange { mode |= EBUR128_MODE_LRA.rawValue }
        self.measuresRange = measuresRange
        guard let state = ebur128_init(UInt32(channelCount.count), UInt(sampleRate.hertz), Int32(mode)) else {
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

    /// Measures `frames` interleaved frames of `samples` from frame `offset` on.
    package func add(_ samples: [Float], from offset: Int, frames: Int) {
        let channels = channelCount.count
        samples.withUnsafeBufferPointer { all in
            add(UnsafeBufferPointer(rebasing: all[offset * channels..<(offset + frames) * channels]), frames: frames)
        }
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

    /// The loudness range (EBU Tech 3342) of everything added so far, in LU; `nil` when too little
    /// passed the gates to tell.
    ///
    /// The corresponding libebur128 call is `ebur128_loudness_range`.
    package var loudnessRange: Double? {
        precondition(measuresRange, "a meter made without measuresRange has no loudness range")
        var range = 0.0
        let result = ebur128_loudness_range(state, &range)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_range failed with \(result)")
        return range.isFinite ? range : nil
    }

    /// The short-term loudness (the last 3 seconds) in LUFS; `nil` for silence.
    ///
    /// The corresponding libebur128 call is `ebur128_loudness_shortterm`.
    package var shortTermLoudness: Double? {
        precondition(measuresRange, "a meter made without measuresRange has no short-term loudness")
        var loudness = -Double.infinity
        let result = ebur128_loudness_shortterm(state, &loudness)
        precondition(result == Int32(EBUR128_SUCCESS.rawValue), "ebur128_loudness_shortterm failed with \(result)")
        return loudness.isFinite ? loudness : nil
    }

    /// The integrated loudness of everything added to all of `meters` together, as if it had been
    /// one meter's (one gating over all their blocks), in LUFS; `nil` when no block passes the gates.
    ///
    /// The corresponding libebur128 call is `ebur128_loudness_global_multiple`.
    package static func integratedLoudness(of meters: [LoudnessMeter]) -> Double? {
        guard !meters.isEmpty else { return nil }
        var states: [UnsafeMutablePointer<ebur128_state>?] = meters.map(\.state)
        var loudness = -Double.infinity
        let result = withExtendedLifetime(meters) {
            ebur128_loudness_global_multiple(&states, states.count, &loudness)
        }
        precondition(
            result == Int32(EBUR128_SUCCESS.rawValue),
            "ebur128_loudness_global_multiple failed with \(result)"
        )
        return loudness.isFinite ? loudness : nil
    }
}
