import SessionTimeline

/// The short signals of timer, breathing and workout sessions: glides, soft notes, beeps and
/// chimes, made of a few harmonics of one pitch.
///
/// A tone's phase is carried from sample to sample, so a glide changes pitch without a jump, and
/// every tone starts and ends with a raised-cosine fade, so none clicks. Like the gongs, they use
/// ``PortableMath`` only, so every machine makes the same samples.
enum CueTones {
    /// A tone's colour: harmonics of its pitch (1 is the pitch itself) and their amplitudes.
    struct Timbre {
        let partials: [(harmonic: Double, amplitude: Double)]

        /// Round, with little above the octave: breathing cues should guide, not startle.
        static let soft = Timbre(partials: [(1, 1), (2, 0.2), (3, 0.05)])
        /// A clear electronic beep; its odd harmonics carry over music and through small speakers.
        static let beep = Timbre(partials: [(1, 1), (3, 0.15), (5, 0.04)])
        /// A bird's note: nearly pure, a touch of the octave and the twelfth.
        static let bird = Timbre(partials: [(1, 1), (2, 0.12), (3, 0.04)])

        /// The tone's value at `phase` radians of its pitch.
        func value(atPhase phase: Double) -> Double {
            var sum = 0.0
            for partial in partials { sum += partial.amplitude * PortableMath.sin(partial.harmonic * phase) }
            return sum
        }
    }

    /// The fade at either end of a beep: 5 ms, short enough to keep a countdown's beat sharp.
    static let beepFadeSamples = 220

    /// A breath: `count` samples gliding from `frequency` by `semitones`, the pitch moving
    /// fastest mid-way (a raised cosine on a log scale), the level moving in a straight line from
    /// `levels.start` to `levels.end`, faded in over `attackSeconds` and out over `releaseSeconds`.
    static func glide(
        count: Int,
        from frequency: Double,
        semitones: Double,
        levels: (start: Double, end: Double),
        attackSeconds: Double,
        releaseSeconds: Double
    ) -> [Double] {
        let (attack, release) = (Int(attackSeconds * rate), Int(releaseSeconds * rate))
        var output = [Double](repeating: 0, count: count)
        var phase = 0.0
        for index in 0..<count {
            let progress = Envelope.rise(index, of: count - 1)
            let pitch = frequency * PortableMath.exp(progress * semitones / 12 * PortableMath.ln2)
            let level = levels.start + (levels.end - levels.start) * Double(index) / Double(count - 1)
            output[index] = Timbre.soft.value(atPhase: phase) * level * edges(index, count, attack, release)
            phase += PortableMath.twoPi * pitch / rate
            if phase >= PortableMath.twoPi { phase -= PortableMath.twoPi }
        }
        return output
    }

    /// A soft note of `count` samples at `frequency`: a 30 ms swell, then a decay with a time
    /// constant of `decaySeconds`, faded out over the last 60 ms. Two of them at different
    /// pitches tell the holds after breathing in and out apart.
    static func softNote(count: Int, frequency: Double, decaySeconds: Double) -> [Double] {
        let (attack, release) = (Int(0.03 * rate), Int(0.06 * rate))
        let decay = PortableMath.exp(-1 / (decaySeconds * rate))
        let step = PortableMath.twoPi * frequency / rate
        var output = [Double](repeating: 0, count: count)
        var level = 1.0
        for index in 0..<count {
            output[index] =
                Timbre.soft.value(atPhase: Double(index) * step) * level * edges(index, count, attack, release)
            level *= decay
        }
        return output
    }

    /// Adds a beep at `frequency` from sample `start` for `length` samples, at full level between
    /// its 5 ms fades; the beep ends at exactly zero on its last sample.
    static func addBeep(into mix: inout [Double], at start: Int, length: Int, frequency: Double) {
        let step = PortableMath.twoPi * frequency / rate
        for index in 0..<min(length, mix.count - start) {
            let gain = edges(index, length, beepFadeSamples, beepFadeSamples)
            mix[start + index] += Timbre.beep.value(atPhase: Double(index) * step) * gain
        }
    }

    /// Adds a struck note at `frequency` from sample `start`, ringing to the end of `mix`: a
    /// 4 ms attack, the pitch decaying with a time constant of `decaySeconds`, its second and
    /// third harmonics 2.5 and 4 times faster, as a struck metal bar's brightness fades first.
    static func addChime(into mix: inout [Double], at start: Int, frequency: Double, decaySeconds: Double) {
        let attack = Int(0.004 * rate)
        let partials: [(harmonic: Double, amplitude: Double, speed: Double)] = [
            (1, 1, 1), (2, 0.35, 2.5), (3, 0.12, 4),
        ]
        for partial in partials {
            let step = PortableMath.twoPi * frequency * partial.harmonic / rate
            let decay = PortableMath.exp(-partial.speed / (decaySeconds * rate))
            var level = partial.amplitude
            for index in 0..<(mix.count - start) {
                let gain = index < attack ? Envelope.rise(index, of: attack) : 1
                mix[start + index] += PortableMath.sin(Double(index) * step) * level * gain
                level *= decay
            }
        }
    }

    /// The gain at sample `index` of `length`: rising over the first `attack` samples from exactly
    /// 0, falling over the last `release` to exactly 0 on the last sample, 1 between.
    static func edges(_ index: Int, _ length: Int, _ attack: Int, _ release: Int) -> Double {
        let fromEnd = length - 1 - index
        var gain = 1.0
        if index < attack { gain *= Envelope.rise(index, of: attack) }
        if fromEnd < release { gain *= Envelope.rise(fromEnd, of: release) }
        return gain
    }

    /// The rate every cue is made at, as a `Double`.
    private static let rate = Double(SynthesizedSound.sampleRate.hertz)
}
