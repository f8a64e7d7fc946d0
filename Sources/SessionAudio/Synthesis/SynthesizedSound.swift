package import SessionTimeline

/// The project's own sounds: two gongs, a closing gong, four beds, and the cues of timer,
/// breathing and workout sessions, synthesized in pure Swift, identical to the last bit on every
/// run and every machine.
///
/// All are mono at 44,100 Hz, with their loudest sample at −3 dBFS (but `silent`), no DC, and both ends at
/// exactly zero. Randomness comes from ``SeededGenerator`` with a fixed seed per sound; sines,
/// cosines and exponentials from ``PortableMath``, never the C library, whose last bits differ
/// between systems.
///
/// - `gong`: one strike of a singing bowl (216 Hz, ``Bowl``): six inharmonic modes, each a pair of
///   partials a fraction of a hertz apart, so that the tone beats gently as a real bowl does; the
///   fundamental decays by 60 dB in 24 s, higher modes faster; a short metallic strike and a soft
///   mallet thud at the start. 14 s, the last 4 s a release to zero.
/// - `triple-gong`: the same bowl struck three times, 2.5 s apart, each strike a little softer and
///   ringing on under the next (the `gong-dreimal` of a meditation timer). 18 s.
/// - `completion`: a larger, deeper bowl (131 Hz) with longer decays (30 s), for the end. 20 s.
/// - `rain`: a bed of soft rain: a gusting wash of band-limited noise, a low rumble, and
///   droplets (short rising chirps, as air bubbles sound) near and far.
/// - `drone`: a low warm drone on C2 (65.4 Hz): twelve harmonics, each three very narrow bands of
///   noise, so the tone is steady but alive.
/// - `forest`: a bed of a forest (``Forest``): wind in the leaves, gusting, a faint stream, and a
///   bird calling every few seconds, four kinds of call at seeded times.
///
/// A session plays the three beds above as ``SynthesizedBed`` makes them, for as long as it
/// lasts and never repeating; each file is the first 24 s of that bed, faded out, for measuring
/// and for apps that loop it themselves.
/// - `silent`: a bed of digital silence, every sample 0: seed 002's keepalive bed (its app plays
///   1 s of silence, `silence.m4a`, so that it keeps playing in the background). 1 s, meant to
///   loop; it is the one sound that does not peak at −3 dBFS.
///
/// The cues carry the names a meditation timer's breathing and workout screens ask for (seed 003):
///
/// - `einatmen`: breathe in, a soft tone gliding up a fifth, D4 to A4, and swelling. 0.8 s.
/// - `halten-ein`: hold after breathing in, a short soft note on A4, where the breath ended. 0.4 s.
/// - `ausatmen`: breathe out, the glide down, A4 to D4, fading. 1 s.
/// - `halten-aus`: hold after breathing out, the soft note on D4. 0.4 s.
/// - `auftakt`: get ready, three struck notes rising, C5 E5 G5. 1 s.
/// - `kurz`: a countdown's short beep, A5. 0.15 s.
/// - `lang`: the long beep between work and rest, a fifth higher, E6. 0.6 s.
/// - `last-round`: two short beeps and a long one on C6. 1 s.
/// - `ausklang`: the end, struck notes falling G5 E5 C5 C4 and ringing on as a chord. 3 s.
///
/// The gongs start with a 3 ms attack and end with a release to zero; the beds fade in and out
/// over ``bedFadeSeconds``. A bed's two ends are uncorrelated noise-like sound, so an equal-power
/// crossfade between its end and its start (``LoopStream``) keeps its level. The cues fade in and
/// out over a few milliseconds (``CueTones``).
package enum SynthesizedSound: String, CaseIterable, Sendable {
    case gong
    case tripleGong = "triple-gong"
    case completion
    case rain
    case drone
    case forest
    case silent
    case inhale = "einatmen"
    case holdIn = "halten-ein"
    case exhale = "ausatmen"
    case holdOut = "halten-aus"
    case countIn = "auftakt"
    case shortBeep = "kurz"
    case longBeep = "lang"
    case lastRound = "last-round"
    case closing = "ausklang"

    /// The rate every sound is made at.
    package static let sampleRate: SampleRate = 44_100
    /// The level of every sound's loudest sample, in dBFS.
    package static let peakDecibels = -3.0
    /// How long a bed fades in at its start and out at its end, in seconds.
    package static let bedFadeSeconds = 0.5

    /// The sound's length in milliseconds, a multiple of 10 so that it is a whole number of frames.
    package var durationMilliseconds: Int {
        switch self {
        case .gong: 14_000
        case .tripleGong: 18_000
        case .completion: 20_000
        case .rain, .drone, .forest: 24_000
        case .silent: 1_000
        case .inhale: 800
        case .holdIn, .holdOut: 400
        case .exhale: 1_000
        case .countIn: 1_000
        case .shortBeep: 150
        case .longBeep: 600
        case .lastRound: 1_000
        case .closing: 3_000
        }
    }

    /// The sound's length: ``durationMilliseconds`` × 44.1 frames.
    package var frameCount: Frames {
        Frames(Int64(durationMilliseconds * Self.sampleRate.hertz / 1_000))
    }

    /// Whether the sound is a bed, made to be looped under a session.
    package var isBed: Bool { [.rain, .drone, .forest, .silent].contains(self) }

    /// Whether the sound is a cue: a short signal of a timer, breathing or workout session.
    package var isCue: Bool { !isBed && ![.gong, .tripleGong, .completion].contains(self) }

    /// The sound as mono float samples at ``sampleRate``: ``frameCount`` of them.
    package func samples() -> [Float] {
        let count = Int(frameCount.count)
        var mix: [Double]
        switch self {
        case .gong:
            mix = [Double](repeating: 0, count: count)
            var noise = Noise(seed: 0x474F_4E47)
            Bowl.small.strike(at: 0, velocity: 1, into: &mix, noise: &noise)
            Envelope.release(&mix, seconds: 4)
        case .tripleGong:
            mix = [Double](repeating: 0, count: count)
            var noise = Noise(seed: 0x4452_4549)
            for (index, velocity) in [1.0, 0.88, 0.8].enumerated() {
                Bowl.small.strike(at: index * 110_250, velocity: velocity, into: &mix, noise: &noise)
            }
            Envelope.release(&mix, seconds: 4)
        case .completion:
            mix = [Double](repeating: 0, count: count)
            var noise = Noise(seed: 0x454E_4445)
            Bowl.large.strike(at: 0, velocity: 1, into: &mix, noise: &noise)
            Envelope.release(&mix, seconds: 5)
        case .rain, .drone, .forest:
            // The first 24 s of the bed a session plays (it fades in), faded out.
            mix = SynthesizedBed.fileSamples(self)
            Envelope.release(&mix, seconds: Self.bedFadeSeconds)
        case .silent:
            // Normalizing leaves it as it is: a peak of 0 scales by 0.
            mix = [Double](repeating: 0, count: count)
        case .inhale:
            mix = CueTones.glide(
                count: count,
                from: 293.665,
                semitones: 7,
                levels: (0.75, 1),
                attackSeconds: 0.12,
                releaseSeconds: 0.2
            )
        case .exhale:
            mix = CueTones.glide(
                count: count,
                from: 440,
                semitones: -7,
                levels: (1, 0.6),
                attackSeconds: 0.06,
                releaseSeconds: 0.35
            )
        case .holdIn:
            mix = CueTones.softNote(count: count, frequency: 440, decaySeconds: 0.15)
        case .holdOut:
            mix = CueTones.softNote(count: count, frequency: 293.665, decaySeconds: 0.15)
        case .countIn:
            mix = [Double](repeating: 0, count: count)
            for (index, frequency) in [523.251, 659.255, 783.991].enumerated() {
                CueTones.addChime(into: &mix, at: index * 9_702, frequency: frequency, decaySeconds: 0.3)
            }
            Envelope.release(&mix, seconds: 0.2)
        case .shortBeep, .longBeep:
            mix = [Double](repeating: 0, count: count)
            CueTones.addBeep(into: &mix, at: 0, length: count, frequency: self == .shortBeep ? 880 : 1_318.51)
        case .lastRound:
            mix = [Double](repeating: 0, count: count)
            // Short, short, long: 0.12 s beeps at 0 and 0.2 s, the last from 0.4 s to the end.
            CueTones.addBeep(into: &mix, at: 0, length: 5_292, frequency: 1_046.502)
            CueTones.addBeep(into: &mix, at: 8_820, length: 5_292, frequency: 1_046.502)
            CueTones.addBeep(into: &mix, at: 17_640, length: count - 17_640, frequency: 1_046.502)
        case .closing:
            mix = [Double](repeating: 0, count: count)
            for (index, frequency) in [783.991, 659.255, 523.251, 261.626].enumerated() {
                CueTones.addChime(into: &mix, at: index * 8_820, frequency: frequency, decaySeconds: 1)
            }
            Envelope.release(&mix, seconds: 1)
        }
        return Envelope.normalized(mix, peakDecibels: Self.peakDecibels)
    }
}

/// The sample rate of every synthesized sound, as a `Double`.
private let rate = 44_100.0

/// White noise from a ``SeededGenerator``: a fixed sequence for a seed.
struct Noise {
    private var generator: SeededGenerator

    init(seed: UInt64) {
        generator = SeededGenerator(seed: seed)
    }

    /// Uniform in [0, 1), from the top 53 bits of the next value.
    mutating func unit() -> Double {
        Double(generator.next() >> 11) * 0x1p-53
    }

    /// Uniform in [−1, 1).
    mutating func bipolar() -> Double {
        unit() * 2 - 1
    }
}

/// A second-order filter from Robert Bristow-Johnson's Audio EQ Cookbook, in direct form I.
struct Biquad {
    private let b0, b1, b2, a1, a2: Double
    private var x1 = 0.0
    private var x2 = 0.0
    private var y1 = 0.0
    private var y2 = 0.0

    private init(b0: Double, b1: Double, b2: Double, a0: Double, a1: Double, a2: Double) {
        self.b0 = b0 / a0
        self.b1 = b1 / a0
        self.b2 = b2 / a0
        self.a1 = a1 / a0
        self.a2 = a2 / a0
    }

    static func lowPass(_ frequency: Double, q: Double = 0.707, at sampleRate: Double = rate) -> Biquad {
        let omega = 2 * PortableMath.pi * frequency / sampleRate
        let (cosine, alpha) = (PortableMath.cos(omega), PortableMath.sin(omega) / (2 * q))
        return Biquad(
            b0: (1 - cosine) / 2,
            b1: 1 - cosine,
            b2: (1 - cosine) / 2,
            a0: 1 + alpha,
            a1: -2 * cosine,
            a2: 1 - alpha
        )
    }

    static func highPass(_ frequency: Double, q: Double = 0.707, at sampleRate: Double = rate) -> Biquad {
        let omega = 2 * PortableMath.pi * frequency / sampleRate
        let (cosine, alpha) = (PortableMath.cos(omega), PortableMath.sin(omega) / (2 * q))
        return Biquad(
            b0: (1 + cosine) / 2,
            b1: -(1 + cosine),
            b2: (1 + cosine) / 2,
            a0: 1 + alpha,
            a1: -2 * cosine,
            a2: 1 - alpha
        )
    }

    /// A band-pass with 0 dB at `frequency` and a bandwidth of `bandwidth` hertz; no DC.
    static func bandPass(_ frequency: Double, bandwidth: Double) -> Biquad {
        let omega = 2 * PortableMath.pi * frequency / rate
        let alpha = PortableMath.sin(omega) * bandwidth / (2 * frequency)
        return Biquad(b0: alpha, b1: 0, b2: -alpha, a0: 1 + alpha, a1: -2 * PortableMath.cos(omega), a2: 1 - alpha)
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        (x2, x1, y2, y1) = (x1, x, y1, y)
        return y
    }
}

/// Gains over a whole sound.
enum Envelope {
    /// The raised-cosine rise `½(1 − cos(π i / length))`: 0 at step 0, rising to 1 at `length`.
    static func rise(_ step: Int, of length: Int) -> Double {
        0.5 * (1 - PortableMath.cos(PortableMath.pi * Double(step) / Double(length)))
    }

    /// Fades the last `seconds` out with a raised cosine, to exactly 0 at the last sample.
    static func release(_ samples: inout [Double], seconds: Double, sampleRate: Double = rate) {
        let length = Int(seconds * sampleRate)
        let count = samples.count
        for fromEnd in 0..<min(length, count) {
            samples[count - 1 - fromEnd] *= rise(fromEnd, of: length)
        }
    }

    /// `samples` scaled so that the largest magnitude is `peakDecibels` dBFS, as floats.
    static func normalized(_ samples: [Double], peakDecibels: Double) -> [Float] {
        var peak = 0.0
        for sample in samples { peak = max(peak, abs(sample)) }
        let scale = peak > 0 ? PortableMath.gain(decibels: peakDecibels) / peak : 0
        return samples.map { Float($0 * scale) }
    }
}

/// A singing bowl: its modes, and how a strike sounds.
///
/// A bowl is heard for its long, steady fundamental: a real one rings for half a minute or more,
/// its modes beating gently where the rim's slight asymmetry splits each into two partials.
/// Each mode here is such a pair, 80 % of its amplitude half a beat below and 20 % half a beat
/// above, so the beat swings the level by 20 log10(1.0 / 0.6) = 4.4 dB (a 55/45 pair swung it
/// by 20 dB, a tremolo no bowl has); the fundamental takes 24 s or more to decay by 60 dB, so
/// it is still above the default rain bed 8 s after the strike; higher modes decay faster.
struct Bowl {
    /// A mode of vibration: a frequency ratio to the fundamental, an amplitude, the time to decay
    /// by 60 dB, and the beat between the pair of partials a bowl's slight asymmetry splits it into.
    struct Mode {
        let ratio: Double
        let amplitude: Double
        let decaySeconds: Double
        let beatHertz: Double
    }

    let fundamental: Double
    /// The modes that ring.
    let modes: [Mode]
    /// High modes that sound only at the strike: the metal's brief clang.
    let strikeModes: [Mode]
    /// The level of the mallet's thud, low-passed noise lasting a few milliseconds.
    let thud: Double

    /// The shares of a mode's amplitude in its lower and upper partial.
    static let pairShares = (lower: 0.8, upper: 0.2)

    /// A small bowl; mode ratios as measured on Tibetan bowls (1 : 2.77 : 5.18 : 8.16 : …).
    static let small = Bowl(
        fundamental: 216,
        modes: [
            Mode(ratio: 1, amplitude: 1, decaySeconds: 24, beatHertz: 0.62),
            Mode(ratio: 2.77, amplitude: 0.62, decaySeconds: 16, beatHertz: 1.1),
            Mode(ratio: 5.18, amplitude: 0.3, decaySeconds: 10, beatHertz: 1.9),
            Mode(ratio: 8.16, amplitude: 0.14, decaySeconds: 6, beatHertz: 2.6),
            Mode(ratio: 11.7, amplitude: 0.06, decaySeconds: 3.5, beatHertz: 3.3),
            Mode(ratio: 15.7, amplitude: 0.025, decaySeconds: 2, beatHertz: 4.1),
        ],
        strikeModes: [
            Mode(ratio: 20.3, amplitude: 0.03, decaySeconds: 0.18, beatHertz: 0),
            Mode(ratio: 25.6, amplitude: 0.02, decaySeconds: 0.12, beatHertz: 0),
            Mode(ratio: 31.1, amplitude: 0.012, decaySeconds: 0.08, beatHertz: 0),
        ],
        thud: 0.05
    )

    /// A large bowl, an octave and a bit lower, ringing longer and beating slower.
    static let large = Bowl(
        fundamental: 131,
        modes: [
            Mode(ratio: 1, amplitude: 1, decaySeconds: 30, beatHertz: 0.41),
            Mode(ratio: 2.71, amplitude: 0.7, decaySeconds: 20, beatHertz: 0.83),
            Mode(ratio: 5.05, amplitude: 0.36, decaySeconds: 12, beatHertz: 1.4),
            Mode(ratio: 7.97, amplitude: 0.17, decaySeconds: 7, beatHertz: 2.2),
            Mode(ratio: 11.4, amplitude: 0.07, decaySeconds: 4, beatHertz: 2.9),
            Mode(ratio: 15.3, amplitude: 0.03, decaySeconds: 2.2, beatHertz: 3.5),
        ],
        strikeModes: [
            Mode(ratio: 21.7, amplitude: 0.025, decaySeconds: 0.25, beatHertz: 0),
            Mode(ratio: 28.2, amplitude: 0.015, decaySeconds: 0.15, beatHertz: 0),
        ],
        thud: 0.06
    )

    /// The closing bell (``BuiltinBell``): a bowl on G3 (196 Hz) struck softly, no clang and no
    /// thud; ratios 1 : 2.76 : 5.40 : 8.93 : 13.34, as measured on real bowls.
    static let bell = Bowl(
        fundamental: 196,
        modes: [
            Mode(ratio: 1, amplitude: 1, decaySeconds: 22, beatHertz: 0.55),
            Mode(ratio: 2.756, amplitude: 0.55, decaySeconds: 14, beatHertz: 0.9),
            Mode(ratio: 5.404, amplitude: 0.26, decaySeconds: 8, beatHertz: 1.3),
            Mode(ratio: 8.933, amplitude: 0.12, decaySeconds: 4.5, beatHertz: 1.7),
            Mode(ratio: 13.34, amplitude: 0.05, decaySeconds: 2.5, beatHertz: 2.1),
        ],
        strikeModes: [],
        thud: 0
    )

    /// The attack of a strike: a 3 ms raised cosine, so the onset does not click.
    static let attackSeconds = 0.003

    /// Adds a strike at sample `start` with `velocity` (1 is a full strike) to `mix`, made at
    /// `sampleRate` hertz; the bowl rings to the end of `mix`.
    func strike(
        at start: Int,
        velocity: Double,
        into mix: inout [Double],
        noise: inout Noise,
        sampleRate: Double = rate
    ) {
        let length = mix.count - start
        guard length > 0 else { return }
        var strike = [Double](repeating: 0, count: length)
        let shares = Self.pairShares
        for mode in modes {
            let center = mode.ratio * fundamental
            addPartial(
                center - mode.beatHertz / 2,
                shares.lower * mode.amplitude,
                mode.decaySeconds,
                sampleRate,
                &strike
            )
            addPartial(
                center + mode.beatHertz / 2,
                shares.upper * mode.amplitude,
                mode.decaySeconds,
                sampleRate,
                &strike
            )
        }
        // A harder strike brings out the high modes more.
        for mode in strikeModes {
            addPartial(mode.ratio * fundamental, mode.amplitude * velocity, mode.decaySeconds, sampleRate, &strike)
        }
        if thud > 0 {
            var (thudLow, thudLower) = (Biquad.lowPass(1_400, at: sampleRate), Biquad.lowPass(1_400, at: sampleRate))
            var thudHigh = Biquad.highPass(90, at: sampleRate)
            let thudSamples = min(length, Int(0.1 * sampleRate))
            let thudDecay = PortableMath.exp(-1 / (0.006 * sampleRate))
            var thudLevel = thud * 4
            for index in 0..<thudSamples {
                strike[index] += thudHigh.process(thudLower.process(thudLow.process(noise.bipolar()))) * thudLevel
                thudLevel *= thudDecay
            }
        }
        let attackSamples = Int(Self.attackSeconds * sampleRate)
        for index in 0..<length {
            let attack = index < attackSamples ? Envelope.rise(index, of: attackSamples) : 1
            mix[start + index] += strike[index] * attack * velocity
        }
    }

    /// Adds a sine at `frequency` starting at phase 0 and decaying by 60 dB in `decaySeconds`,
    /// made by a rotating, shrinking complex number: one multiplication per sample.
    private func addPartial(
        _ frequency: Double,
        _ amplitude: Double,
        _ decaySeconds: Double,
        _ sampleRate: Double,
        _ output: inout [Double]
    ) {
        guard frequency > 0, frequency < sampleRate / 2 else { return }
        let omega = 2 * PortableMath.pi * frequency / sampleRate
        let damping = PortableMath.exp(-3 * PortableMath.ln10 / (decaySeconds * sampleRate))
        let (stepReal, stepImaginary) = (PortableMath.cos(omega) * damping, PortableMath.sin(omega) * damping)
        var (real, imaginary) = (amplitude, 0.0)
        // Below −140 dB the partial stops: its remaining tail could not be heard in any format.
        let samples = min(output.count, Int(decaySeconds * 140 / 60 * sampleRate))
        output.withUnsafeMutableBufferPointer { output in
            for index in 0..<samples {
                output[index] += imaginary
                (real, imaginary) = (
                    real * stepReal - imaginary * stepImaginary, real * stepImaginary + imaginary * stepReal
                )
            }
        }
    }
}

/// Soft rain: a wash, a rumble, and droplets.
enum Rain {
    static func samples(count: Int) -> [Double] {
        var noise = Noise(seed: 0x5241_494E)
        var mix = [Double](repeating: 0, count: count)
        addWash(&mix, noise: &noise)
        // Near droplets: sparse, bright, clear; far ones: dense, quiet, dull.
        var near = [Double](repeating: 0, count: count)
        addDroplets(&near, perSecond: 9, lowest: 1_500, octaves: 1.7, level: 0.5, noise: &noise)
        var far = [Double](repeating: 0, count: count)
        addDroplets(&far, perSecond: 55, lowest: 1_200, octaves: 1.9, level: 0.16, noise: &noise)
        var (dullFar, dullNear) = (Biquad.lowPass(3_200), Biquad.lowPass(7_500))
        var dcBlock = Biquad.highPass(25)
        for index in 0..<count {
            let droplets = dullFar.process(far[index]) + dullNear.process(near[index])
            mix[index] = dcBlock.process(mix[index] + droplets)
        }
        return mix
    }

    /// Band-limited noise (400 Hz to 5 kHz) and a low rumble (40 to 220 Hz), swelling and easing
    /// by about ±2 dB over a few seconds as rain does in gusts.
    private static func addWash(_ mix: inout [Double], noise: inout Noise) {
        var (washHigh, washLow, washSoft) = (Biquad.highPass(400), Biquad.lowPass(5_000), Biquad.lowPass(9_000, q: 0.5))
        var (rumbleLow, rumbleLower, rumbleHigh) = (Biquad.lowPass(220), Biquad.lowPass(220), Biquad.highPass(40))
        var gust = 0.0
        var gustTarget = 0.0
        let gustSmoothing = 1 - PortableMath.exp(-1 / (1.6 * rate))
        let warmUp = Int(rate)
        for index in -warmUp..<mix.count {
            if (index + warmUp) % 35_280 == 0 { gustTarget = noise.bipolar() }
            gust += (gustTarget - gust) * gustSmoothing
            let hiss = washSoft.process(washLow.process(washHigh.process(noise.bipolar())))
            let low = rumbleHigh.process(rumbleLower.process(rumbleLow.process(noise.bipolar())))
            if index >= 0 { mix[index] = (hiss * 0.5 + low * 1.2) * (1 + 0.25 * gust) }
        }
    }

    /// Adds droplets at about `perSecond` a second: each a decaying sine whose pitch rises by a
    /// fifth of itself over its decay, between `lowest` and `octaves` above, with loudness
    /// spread over 35 dB so most are quiet. Places are drawn per 10 ms slot, at most one a slot.
    static func addDroplets(
        _ output: inout [Double],
        perSecond: Double,
        lowest: Double,
        octaves: Double,
        level: Double,
        noise: inout Noise
    ) {
        let slot = 441
        let chance = perSecond * Double(slot) / rate
        var slotStart = 0
        while slotStart < output.count {
            defer { slotStart += slot }
            let draw = (noise.unit(), noise.unit(), noise.unit(), noise.unit(), noise.unit())
            guard draw.0 < chance else { continue }
            let start = slotStart + Int(draw.1 * Double(slot))
            let frequency = lowest * PortableMath.exp(draw.2 * octaves * PortableMath.ln2)
            let decaySeconds = 0.011 * (lowest / frequency) * (0.7 + 0.6 * draw.3)
            let amplitude = level * PortableMath.gain(decibels: -35 * draw.4 * draw.4)
            addDroplet(&output, at: start, frequency: frequency, decaySeconds: decaySeconds, amplitude: amplitude)
        }
    }

    /// One droplet: 0.4 ms attack, exponential decay over `decaySeconds` (time constant), rising
    /// pitch; its rotation is recomputed every 32 samples as the pitch rises.
    private static func addDroplet(
        _ output: inout [Double],
        at start: Int,
        frequency: Double,
        decaySeconds: Double,
        amplitude: Double
    ) {
        let length = min(output.count - start, Int(decaySeconds * 7 * rate))
        guard length > 0 else { return }
        let attack = 18
        let decay = PortableMath.exp(-1 / (decaySeconds * rate))
        var (real, imaginary) = (amplitude, 0.0)
        var step = (real: 1.0, imaginary: 0.0)
        var envelope = 1.0
        for index in 0..<length {
            if index % 32 == 0 {
                let elapsed = Double(index) / rate
                let omega = 2 * PortableMath.pi * frequency * (1 + 0.2 * elapsed / decaySeconds) / rate
                step = (PortableMath.cos(omega), PortableMath.sin(omega))
            }
            let gain = index < attack ? Envelope.rise(index, of: attack) : 1
            output[start + index] += imaginary * envelope * gain
            (real, imaginary) = (
                real * step.real - imaginary * step.imaginary, real * step.imaginary + imaginary * step.real
            )
            envelope *= decay
        }
    }
}

/// A low warm drone: a harmonic series on C2, each harmonic three narrow bands of noise.
enum Drone {
    static let fundamental = 65.406

    static func samples(count: Int) -> [Double] {
        // The resonators need a few of their time constants (1/(π × bandwidth)) to settle.
        let warmUp = Int(10 * rate)
        var noise = Noise(seed: 0x4452_4F4E)
        let excitation = (0..<(count + warmUp)).map { _ in noise.bipolar() }
        var mix = [Double](repeating: 0, count: count)
        var band = [Double](repeating: 0, count: count)
        for harmonic in 1...12 {
            let order = Double(harmonic)
            // 1/n, rolled off further above the fourth harmonic for warmth.
            let amplitude =
                PortableMath.exp(-1.1 * naturalLog(order)) * (harmonic <= 4 ? 1 : PortableMath.exp(-0.2 * (order - 4)))
            let center = fundamental * order
            // Three bands 3 cents apart, each 0.15 Hz wide, like three voices slightly out of
            // tune: the low harmonics swell over many seconds, the high ones shimmer, never in step.
            for cents in [-3.0, 0, 3] {
                let frequency = center * PortableMath.exp(cents / 1_200 * PortableMath.ln2)
                var first = Biquad.bandPass(frequency, bandwidth: 0.15)
                var second = first
                var power = 0.0
                for index in 0..<(count + warmUp) {
                    let value = second.process(first.process(excitation[index]))
                    if index >= warmUp {
                        band[index - warmUp] = value
                        power += value * value
                    }
                }
                let scale = amplitude / 3 / (power / Double(count)).squareRoot()
                for index in 0..<count { mix[index] += band[index] * scale }
            }
        }
        return mix
    }

    /// ln `x` for x ≥ 1, by Newton's method on ``PortableMath/exp(_:)``.
    static func naturalLog(_ x: Double) -> Double {
        var y = 0.0
        for _ in 0..<40 { y -= 1 - x / PortableMath.exp(y) }
        return y
    }
}
