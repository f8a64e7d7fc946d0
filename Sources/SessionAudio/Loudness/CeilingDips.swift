import Foundation
package import SessionTimeline

/// Short, gentle gain dips after the limiter at the moments a file's codec took over the ceiling:
/// how a lossy file that decoded over the ceiling is encoded again without making the rest of it
/// quieter.
///
/// A dip holds its depth from ``hold`` before the first moment to ``hold`` after the last, and
/// glides there and back over ``ramp`` on each side, linearly in gain: about 0.2 s in all for a
/// single moment, a few thousandths of a dB of the loudness of a minute of speech. Where dips
/// overlap, their gains multiply: a second correction deepens the first where it did not hold. A
/// gain that only moves this slowly, never above 1, cannot make a peak of its own between samples.
package struct CeilingDips: Sendable {
    /// One stretch lowered: its held frames and its depth (dB, negative).
    package struct Dip: Sendable, Equatable {
        package var held: Range<Int64>
        package var decibels: Double

        /// ``decibels`` as a gain.
        var linearDepth: Double { pow(10, decibels / 20) }
    }

    /// The dips, by start.
    package private(set) var dips: [Dip] = []
    /// How long a dip holds around its moments, in frames: 50 ms.
    package let hold: Int64
    /// How long a dip glides in and out, in frames: as long as it holds, 50 ms.
    package var ramp: Int64 { hold }

    /// No dips yet, for audio at `sampleRate`.
    package init(sampleRate: SampleRate) {
        hold = Int64(sampleRate.hertz / 20)
    }

    /// Whether there are no dips.
    package var isEmpty: Bool { dips.isEmpty }

    /// The most any frame is lowered, dB (negative); 0 without dips. (Where dips overlap they
    /// multiply, so the deepest frame is at one end of some dip's held part.)
    package var deepestDecibels: Double {
        dips.flatMap { [$0.held.lowerBound, $0.held.upperBound - 1] }.map(decibels(at:)).min() ?? 0
    }

    /// The frames some dip lowers (its ramps included, overlaps counted once).
    package var loweredFrames: Int64 {
        var (total, reached) = (Int64(0), Int64.min)
        for dip in dips {
            let start = max(dip.held.lowerBound - ramp, reached)
            let end = dip.held.upperBound + ramp
            if end > start { total += end - start }
            reached = max(reached, end)
        }
        return total
    }

    /// Adds dips at `moments` (frame, and by how many dB that moment went over), each lowering it
    /// by its excess plus `margin`, on top of whatever dip lies there already. Moments closer than
    /// ``hold`` to each other share one dip, as deep as the deepest of them needs.
    /// - Returns: the frames the new dips lower, ramps included: all that changes.
    @discardableResult
    package mutating func lower(at moments: [(frame: Int64, excess: Double)], margin: Double) -> [Range<Int64>] {
        var added: [Dip] = []
        for moment in moments.sorted(by: { $0.frame < $1.frame }) {
            let depth = -moment.excess - margin
            let held = (moment.frame - hold)..<(moment.frame + hold)
            if let last = added.last, held.lowerBound <= last.held.upperBound {
                added[added.count - 1] = Dip(
                    held: last.held.lowerBound..<max(last.held.upperBound, held.upperBound),
                    decibels: min(last.decibels, depth)
                )
            } else {
                added.append(Dip(held: held, decibels: depth))
            }
        }
        dips = (dips + added).sorted { $0.held.lowerBound < $1.held.lowerBound }
        return added.map { ($0.held.lowerBound - ramp)..<($0.held.upperBound + ramp) }
    }

    /// The gain the dips give frame `frame`, dB (0 outside them).
    package func decibels(at frame: Int64) -> Double {
        dips.reduce(0) { $0 + 20 * log10(Self.gain(of: $1, depth: $1.linearDepth, at: frame, ramp: ramp)) }
    }

    /// Dip `dip`'s gain at `frame` (linear): `depth` (the dip's ``Dip/linearDepth``) inside the
    /// held frames, gliding to 1 over `ramp` frames on either side, 1 elsewhere.
    private static func gain(of dip: Dip, depth: Double, at frame: Int64, ramp: Int64) -> Double {
        let distance: Int64
        if frame < dip.held.lowerBound {
            distance = dip.held.lowerBound - frame
        } else if frame >= dip.held.upperBound {
            distance = frame - dip.held.upperBound + 1
        } else {
            return depth
        }
        guard distance < ramp else { return 1 }
        return depth + (1 - depth) * Double(distance) / Double(ramp)
    }

    /// Applies the dips to `frames` interleaved frames of `channels` at the start of `samples`,
    /// which are the audio's frames `start ..< start + frames`.
    package func apply(to samples: inout [Float], frames: Int, channels: Int, at start: Int64) {
        let end = start + Int64(frames)
        // Dips are sorted by start, so those that reach this block lie before the first that
        // starts (ramp included) after it; a linear walk is enough for the few a file has.
        for dip in dips where dip.held.lowerBound - ramp < end && dip.held.upperBound + ramp > start {
            let first = max(start, dip.held.lowerBound - ramp)
            let last = min(end, dip.held.upperBound + ramp)
            let depth = dip.linearDepth
            samples.withUnsafeMutableBufferPointer { samples in
                for frame in first..<last {
                    let gain = Float(Self.gain(of: dip, depth: depth, at: frame, ramp: ramp))
                    let offset = Int(frame - start) * channels
                    for channel in 0..<channels { samples[offset + channel] *= gain }
                }
            }
        }
    }
}
