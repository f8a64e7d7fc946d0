package import SessionTimeline

/// The thresholds ``SessionVerifier`` judges a file by, chosen per kind of format.
///
/// Lossless files give back exactly what was rendered, so their silence must be digital zero.
/// A lossy codec spreads sound a little around every edge (an MP3 granule's MDCT window, Opus's
/// lookahead and its energy decay, a Vorbis block), so next to a sound edge a codec guard is not
/// judged, and elsewhere silence only has to stay below −60 dBFS. docs/verify.md records what was
/// measured to choose each guard.
package struct VerificationRules: Sendable, Equatable {
    /// Whether the rules are the lossy ones.
    package var isLossy: Bool
    /// A silent frame's largest allowed absolute sample: 0 for lossless, −60 dBFS for lossy.
    package var silenceCeiling: Float
    /// Frames before a sound's start that are not judged as silence (the codec's pre-echo).
    package var guardBeforeSound: Frames
    /// Frames after a sound's end that are not judged as silence (the codec's ringing and decay).
    package var guardAfterSound: Frames
    /// The smallest absolute sample that counts as clipped.
    package var clippingLevel: Float

    /// The level an item's sound starts at: −40 dBFS, well above a codec's noise and well below speech.
    package static let onsetLevel: Float = 0.01
    /// An item sounds if some 20 ms window of it reaches −50 dBFS RMS.
    package static let soundingPowerDecibels: Double = -50
    /// The length of the windows ``soundingPowerDecibels`` is measured over, in seconds.
    package static let windowSeconds: Double = 0.02
    /// How much later than its clip says an item's sound may start, in seconds, beyond the guard:
    /// room for the resampler's filter and the limiter, far below the shifts worth reporting.
    package static let onsetToleranceSeconds: Double = 0.02
    /// How late an item's first sound may come when its clip's own lead-in cannot be read (the
    /// clip file is gone, or the bell is built in): spoken clips start within 50 ms, so 250 ms
    /// still catches a clip moved by a few hundred milliseconds.
    package static let unknownLeadSeconds: Double = 0.25

    /// The rules for `format` at `sampleRate`; `nil` (another container) is judged as lossless.
    package init(format: AudioFileFormat?, sampleRate: SampleRate) {
        switch format {
        case .mp3:
            // One MPEG-1 frame (1,152), two MPEG-2 frames: lame at 64–128 kb/s spread an abrupt
            // noise burst by at most 373 frames at −60 dBFS, speech by 39.
            self.init(lossy: true, before: 1_152, after: 1_152)
        case .opus:
            // Opus at 48 kHz: pre-echo of at most 279 frames (one 20 ms frame covers it); after
            // an abrupt stop its energy decays for up to 118 ms above −60 dBFS, hence 150 ms.
            self.init(lossy: true, before: 960, after: 7_200)
        case .vorbis:
            // One long Vorbis block: at most 817 frames measured at q0 and q3.
            self.init(lossy: true, before: 2_048, after: 2_048)
        case .m4a, .m4b:
            // AAC's 2,048-frame MDCT window reaches a packet either side of a sound's edge.
            self.init(lossy: true, before: 2_048, after: 2_048)
        case .wav, .flac, nil:
            self.init(lossy: false, before: 0, after: 0)
        }
    }

    private init(lossy: Bool, before: Int64, after: Int64) {
        isLossy = lossy
        silenceCeiling = lossy ? 0.001 : 0
        guardBeforeSound = Frames(before)
        guardAfterSound = Frames(after)
        // 16-bit full scale is 32767/32768; a lossy decoder's own output may pass 1 only on overshoot.
        clippingLevel = lossy ? 0.999 : 32_767.0 / 32_768.0
    }
}
