package import SessionTimeline

/// The default closing bell: a singing bowl on G3 struck softly (``Bowl/bell``), synthesized on
/// demand at the output's rate, identical every time and on every machine (``PortableMath``).
///
/// Five inharmonic modes (ratios 1 : 2.76 : 5.40 : 8.93 : 13.34 over 196 Hz, as measured on
/// real bowls), each a pair of partials a fraction of a hertz apart so that the tone beats
/// gently (4.4 dB deep), the fundamental decaying by 60 dB in 22 s so that it rings on over a
/// bed for the last ten seconds, higher modes faster. A 3 ms raised-cosine attack and a 3 s
/// cosine release to exactly zero keep both ends click-free. Peak level −6 dBFS. Twelve seconds
/// at any sample rate.
package enum BuiltinBell {
    /// The bell's length in seconds.
    package static let durationSeconds = 12
    /// How long the bell's release to zero lasts, at its end.
    static let releaseSeconds = 3.0

    /// The bell's length at `sampleRate`: exactly ``durationSeconds`` × rate frames.
    package static func frameCount(sampleRate: SampleRate) -> Frames {
        Frames(Int64(durationSeconds * sampleRate.hertz))
    }

    /// The bell as mono float frames at `sampleRate`: made once per rate in a process (a render
    /// measures the bell, then plays it), kept for the few rates a process uses.
    package static func samples(sampleRate: SampleRate) -> [Float] {
        if let made = made.withLock({ $0[sampleRate.hertz] }) { return made }
        let samples = synthesized(sampleRate: sampleRate)
        made.withLock { made in
            if made.count >= 4 { made.removeAll() }
            made[sampleRate.hertz] = samples
        }
        return samples
    }

    /// The bells made so far, by rate.
    private static let made = Locked([Int: [Float]]())

    private static func synthesized(sampleRate: SampleRate) -> [Float] {
        let rate = Double(sampleRate.hertz)
        var mix = [Double](repeating: 0, count: Int(frameCount(sampleRate: sampleRate).count))
        // The bell has no thud: its noise is never drawn.
        var noise = Noise(seed: 0)
        Bowl.bell.strike(at: 0, velocity: 1, into: &mix, noise: &noise, sampleRate: rate)
        Envelope.release(&mix, seconds: releaseSeconds, sampleRate: rate)
        // −20 log10 2 dBFS: a peak of exactly 0.5.
        return Envelope.normalized(mix, peakDecibels: -6.020_599_913_279_624)
    }
}
