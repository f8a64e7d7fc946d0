import Foundation
package import SessionTimeline

/// The default closing bell: a struck singing bowl, synthesized on demand, identical every time.
///
/// Five inharmonic modes of a bowl (ratios 1 : 2.76 : 5.40 : 8.93 : 13.34 over a 196 Hz
/// fundamental, as measured on real bowls), each a pair of partials a fraction of a hertz apart so
/// that the tone beats gently, each decaying exponentially (higher modes faster). A 4 ms
/// raised-cosine attack and a 1.5 s cosine release to exactly zero keep both ends click-free.
/// Peak level −6 dBFS. Eight seconds at any sample rate.
package enum BuiltinBell {
    /// The bell's length in seconds.
    package static let durationSeconds = 8

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
        let count = Int(frameCount(sampleRate: sampleRate).count)
        let rate = Double(sampleRate.hertz)
        var mix = [Double](repeating: 0, count: count)
        let fundamental = 196.0
        // (frequency ratio, amplitude, time to decay by 60 dB in seconds, beat in hertz)
        let modes: [(ratio: Double, amplitude: Double, decay: Double, beat: Double)] = [
            (1.000, 1.00, 9.0, 0.55),
            (2.756, 0.55, 6.0, 0.90),
            (5.404, 0.26, 3.4, 1.30),
            (8.933, 0.12, 2.0, 1.70),
            (13.34, 0.05, 1.1, 2.10),
        ]
        mix.withUnsafeMutableBufferPointer { output in
            for mode in modes {
                for side in [-0.5, 0.5] {
                    let frequency = fundamental * mode.ratio + side * mode.beat
                    guard frequency < rate / 2 else { continue }
                    // A damped complex oscillator: one rotation and one decay per frame.
                    let omega = 2 * Double.pi * frequency / rate
                    let damping = pow(10, -3 / (mode.decay * rate))
                    let stepReal = cos(omega) * damping
                    let stepImaginary = sin(omega) * damping
                    var real = 0.0
                    var imaginary = mode.amplitude / 2
                    for index in 0..<count {
                        output[index] += imaginary
                        let nextReal = real * stepReal - imaginary * stepImaginary
                        imaginary = real * stepImaginary + imaginary * stepReal
                        real = nextReal
                    }
                }
            }
        }
        let attack = Int(0.004 * rate)
        let release = Int(1.5 * rate)
        var peak = 0.0
        for index in 0..<count {
            var gain = 1.0
            if index < attack {
                gain = 0.5 * (1 - cos(Double.pi * Double(index) / Double(attack)))
            }
            let fromEnd = count - 1 - index
            if fromEnd < release {
                gain *= 0.5 * (1 - cos(Double.pi * Double(fromEnd) / Double(release)))
            }
            mix[index] *= gain
            peak = max(peak, abs(mix[index]))
        }
        let scale = peak > 0 ? 0.5 / peak : 0
        return mix.map { Float($0 * scale) }
    }
}
