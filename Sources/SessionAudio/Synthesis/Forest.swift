import SessionTimeline

/// A forest: wind in the leaves, a faint stream in the distance, and now and then a bird (the
/// birds are ``SynthesizedBed``'s, drawn live over this texture).
///
/// The wind is band-limited noise in two layers, the leaves' hiss and a low body, both swelling
/// and easing with slow gusts, the hiss fluttering as leaves do while a gust lasts. The stream
/// is quieter noise around 1 kHz with dense, dull droplets in it (``Rain``'s droplets, low and
/// soft). The birds are four kinds of call (chirps, a whistle, a trill, a two-note call), each a
/// few notes with a pitch contour and two harmonics, at seeded times about 2.6 s apart and at
/// seeded distances.
enum Forest {
    /// The samples of the bed's texture, wind and stream, `count` of them, before normalization.
    static func samples(count: Int) -> [Double] {
        var noise = Noise(seed: 0x464F_5245)
        var mix = [Double](repeating: 0, count: count)
        addWind(&mix, noise: &noise)
        var stream = [Double](repeating: 0, count: count)
        Rain.addDroplets(&stream, perSecond: 60, lowest: 500, octaves: 1.2, level: 0.05, noise: &noise)
        var (streamHigh, streamLow, dullStream) = (Biquad.highPass(350), Biquad.lowPass(1_800), Biquad.lowPass(2_000))
        var dcBlock = Biquad.highPass(25)
        for index in 0..<count {
            let water =
                streamLow.process(streamHigh.process(noise.bipolar())) * 0.03 + dullStream.process(stream[index])
            mix[index] = dcBlock.process(mix[index] + water)
        }
        return mix
    }

    /// Leaves and wind: hiss from 500 Hz to 6 kHz and a body from 60 to 350 Hz, both following
    /// a gust level that moves towards a new random target every 1.5 s (time constant 1.2 s);
    /// the hiss flutters by up to ±30 % while the gust is strong, a new flutter every 60 ms.
    private static func addWind(_ mix: inout [Double], noise: inout Noise) {
        var (leavesHigh, leavesLow, leavesSoft) = (Biquad.highPass(500), Biquad.lowPass(6_000), Biquad.lowPass(10_000))
        var (bodyLow, bodyLower, bodyHigh) = (Biquad.lowPass(350), Biquad.lowPass(350), Biquad.highPass(60))
        var (gust, gustTarget, flutter, flutterTarget) = (0.5, 0.5, 0.0, 0.0)
        let gustSmoothing = 1 - PortableMath.exp(-1 / (1.2 * rate))
        let flutterSmoothing = 1 - PortableMath.exp(-1 / (0.03 * rate))
        let warmUp = Int(2 * rate)
        for index in -warmUp..<mix.count {
            let step = index + warmUp
            if step % 66_150 == 0 { gustTarget = noise.unit() }
            if step % 2_646 == 0 { flutterTarget = noise.bipolar() }
            gust += (gustTarget - gust) * gustSmoothing
            flutter += (flutterTarget - flutter) * flutterSmoothing
            let leaves = leavesSoft.process(leavesLow.process(leavesHigh.process(noise.bipolar())))
            let body = bodyHigh.process(bodyLower.process(bodyLow.process(noise.bipolar())))
            guard index >= 0 else { continue }
            let rustle = (0.35 + 0.65 * gust) * (1 + 0.3 * flutter * gust)
            mix[index] = leaves * 0.3 * rustle + body * (0.5 + 0.8 * gust)
        }
    }

    /// A bird's note: from `from` to `to` hertz over `seconds` (the pitch moving on a log scale,
    /// fastest mid-way when `gliding`, else evenly), faded in over `attack` and out over
    /// `release` seconds, with a vibrato of `vibrato` (a fraction of the pitch) at 24 Hz.
    struct Note {
        var delay: Double
        var seconds: Double
        var from: Double
        var to: Double
        var level: Double = 1
        var attack = 0.006
        var release = 0.02
        var vibrato = 0.0
    }

    /// A call's notes, by kind, for a bird whose pitch is `pitch` times the kind's usual one.
    static func call(kind: Int, pitch: Double, notes: Int) -> [Note] {
        switch kind {
        case 0:
            // Chirps: short sweeps up, each a little softer.
            return (0..<notes).map { index in
                Note(
                    delay: Double(index) * 0.15,
                    seconds: 0.06,
                    from: 2_800 * pitch,
                    to: 4_600 * pitch,
                    level: 1 - 0.12 * Double(index)
                )
            }
        case 1:
            // A whistle falling a little, with a quick higher note after it.
            return [
                Note(
                    delay: 0,
                    seconds: 0.36,
                    from: 3_200 * pitch,
                    to: 2_600 * pitch,
                    attack: 0.03,
                    release: 0.08,
                    vibrato: 0.012
                ),
                Note(
                    delay: 0.42,
                    seconds: 0.12,
                    from: 3_700 * pitch,
                    to: 3_600 * pitch,
                    level: 0.7,
                    attack: 0.01,
                    vibrato: 0.012
                ),
            ]
        case 2:
            // A trill: quick notes, each falling, swelling and fading over the call.
            let count = 8 + notes * 2
            return (0..<count).map { index in
                let place = Double(index) / Double(count - 1)
                return Note(
                    delay: Double(index) * 0.055,
                    seconds: 0.035,
                    from: 5_200 * pitch,
                    to: 4_300 * pitch,
                    level: 0.45 + 0.55 * PortableMath.sin(PortableMath.pi * place),
                    attack: 0.004,
                    release: 0.012
                )
            }
        default:
            // Two notes, a high one and a lower one gliding down: "tee-yoo".
            return [
                Note(delay: 0, seconds: 0.18, from: 4_100 * pitch, to: 4_200 * pitch, attack: 0.015, release: 0.03),
                Note(delay: 0.22, seconds: 0.26, from: 3_400 * pitch, to: 2_800 * pitch, level: 0.85, release: 0.09),
            ]
        }
    }

    /// Adds `note` from sample `start`: ``CueTones/Timbre/bird``, its phase carried from sample
    /// to sample so that the glide does not jump.
    static func add(_ note: Note, at start: Int, level: Double, into output: inout [Double]) {
        let length = Int(note.seconds * rate)
        let (attack, release) = (Int(note.attack * rate), Int(note.release * rate))
        let logRatio = naturalLog(note.to / note.from)
        let vibratoStep = PortableMath.twoPi * 24 / rate
        var phase = 0.0
        for index in 0..<min(length, output.count - start) {
            let progress = Double(index) / Double(length - 1)
            let pitch =
                note.from * PortableMath.exp(progress * logRatio)
                * (1 + note.vibrato * PortableMath.sin(Double(index) * vibratoStep))
            let gain = CueTones.edges(index, length, attack, release) * note.level * level
            output[start + index] += CueTones.Timbre.bird.value(atPhase: phase) * gain
            phase += PortableMath.twoPi * pitch / rate
            if phase >= PortableMath.twoPi { phase -= PortableMath.twoPi }
        }
    }

    /// The rate the bed is made at, as a `Double`.
    private static let rate = Double(SynthesizedSound.sampleRate.hertz)

    /// ln `x` for x > 0: ``Drone/naturalLog(_:)`` of `x` or of its reciprocal.
    private static func naturalLog(_ x: Double) -> Double {
        x >= 1 ? Drone.naturalLog(x) : -Drone.naturalLog(1 / x)
    }
}
