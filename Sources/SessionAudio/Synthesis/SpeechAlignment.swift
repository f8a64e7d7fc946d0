import Foundation

/// How two renderings of the same speech line up in time: each moment of one (the reference)
/// and the moment of the other (the target) that says the same, found by dynamic time warping
/// over ``BandEnergies``.
///
/// This is how a clip eSpeak NG spoke before, without its marks, gets them back: eSpeak speaks
/// the text again with its events, and the events' samples are carried to the clip's through
/// the alignment. The two are the same speech but not the same samples (the clip went through an
/// MP3 encoder, or was made by another eSpeak build), so a sample
/// correlation finds nothing, while the spectral envelopes every 5 ms stay close. The distance
/// along the path is each step's root-mean-square difference of the bands, in dB, a diagonal
/// step counted twice, over the two lengths together: on the fixture clips, 0.33–0.63 dB between
/// a clip and its text spoken again, 4.1–5.2 dB between a clip and another text. A mean over
/// ``maximumMeanDistance`` means the clip is not this speech, and no alignment is made.
package struct SpeechAlignment: Sendable {
    /// The largest mean distance, in dB, along the path for the two to be the same speech:
    /// three times the largest the same speech measured, half the smallest of another text.
    static let maximumMeanDistance: Float = 2

    /// The search's reach away from the straight line between the two ends, beyond the
    /// difference of their lengths, in frames: 0.3 s.
    static let reachFrames = 60

    /// For each frame of the reference, the frame of the target it lines up with (never decreasing).
    private let targetFrames: [Int32]
    private let referenceHop: Int
    private let targetHop: Int
    private let targetSampleCount: Int
    /// The mean distance along the path, dB.
    package let meanDistance: Float

    /// The alignment of `reference` with `target`, or `nil` when they are not the same speech:
    /// lengths more than 10 % (plus a second) apart, or a mean distance over ``maximumMeanDistance``.
    init?(reference: BandEnergies, target: BandEnergies, maximumMeanDistance: Float = maximumMeanDistance) {
        let (n, m) = (reference.frameCount, target.frameCount)
        guard n > 0, m > 0, abs(n - m) <= n / 10 + BandEnergies.framesPerSecond else { return nil }
        let reach = abs(n - m) + Self.reachFrames
        let width = 2 * reach + 1
        // The first target frame of row i's band: around the straight line from (0, 0) to (n-1, m-1).
        func bandStart(_ i: Int) -> Int { (n > 1 ? i * (m - 1) / (n - 1) : 0) - reach }
        // Each cell's step into it: 0 diagonal, 1 from the row above, 2 from the left.
        var steps = [UInt8](repeating: 0, count: n * width)
        let infinity = Float.greatestFiniteMagnitude
        var previous = [Float](repeating: infinity, count: width)
        var current = [Float](repeating: infinity, count: width)
        for i in 0..<n {
            let start = bandStart(i)
            let previousStart = i > 0 ? bandStart(i - 1) : 0
            for k in 0..<width {
                let j = start + k
                current[k] = infinity
                guard j >= 0, j < m else { continue }
                let distance = reference.distance(i, to: target, j)
                if i == 0 && j == 0 {
                    current[k] = distance
                    continue
                }
                // The symmetric step pattern: a diagonal step counts its distance twice, as two
                // single steps would, so the path follows the speech rather than cutting corners.
                var best = infinity
                var step: UInt8 = 0
                if i > 0 {
                    let above = j - previousStart
                    if above - 1 >= 0, above - 1 < width, previous[above - 1] < infinity {
                        (best, step) = (previous[above - 1] + 2 * distance, 0)
                    }
                    if above >= 0, above < width, previous[above] + distance < best {
                        (best, step) = (previous[above] + distance, 1)
                    }
                }
                if k > 0, current[k - 1] + distance < best { (best, step) = (current[k - 1] + distance, 2) }
                guard best < infinity else { continue }
                current[k] = best
                steps[i * width + k] = step
            }
            swap(&previous, &current)
        }
        let endColumn = (m - 1) - bandStart(n - 1)
        guard endColumn >= 0, endColumn < width, previous[endColumn] < infinity else { return nil }
        var targetFrames = [Int32](repeating: 0, count: n)
        var (i, j) = (n - 1, m - 1)
        targetFrames[i] = Int32(j)
        while i > 0 || j > 0 {
            switch steps[i * width + (j - bandStart(i))] {
            case 0: (i, j) = (i - 1, j - 1)
            case 1: i -= 1
            default: j -= 1
            }
            // The first target frame of each reference frame's run: where it begins to be said.
            targetFrames[i] = Int32(j)
        }
        // The pattern's weights sum to n + m along any path.
        let meanDistance = previous[endColumn] / Float(n + m)
        guard meanDistance <= maximumMeanDistance else { return nil }
        self.targetFrames = Self.smoothed(targetFrames, targetCount: m)
        self.meanDistance = meanDistance
        referenceHop = reference.hop
        targetHop = target.hop
        targetSampleCount = target.sampleCount
    }

    /// `targetFrames` with each frame's offset (target − reference) replaced by the median of the
    /// offsets within ``smoothingFrames`` of it, kept in order and inside the target.
    ///
    /// In a silence both renderings share, every alignment costs the same, and the path may
    /// wander to either edge of it: an event at a pause's edge (a plosive's closure, before its
    /// burst) then lands up to 50 ms off, on the sound before. Speaking again shifts the speech
    /// by a few samples, the same over whole phrases, so the offsets around a moment say better
    /// where it is than the path at that one frame.
    static func smoothed(_ targetFrames: [Int32], targetCount: Int) -> [Int32] {
        let offsets = targetFrames.enumerated().map { Int($0.element) - $0.offset }
        var smoothed = [Int32](repeating: 0, count: targetFrames.count)
        var window: [Int] = []
        var last = 0
        for index in offsets.indices {
            let range = max(0, index - smoothingFrames)..<min(offsets.count, index + smoothingFrames + 1)
            window.removeAll(keepingCapacity: true)
            window.append(contentsOf: offsets[range])
            window.sort()
            let frame = min(targetCount - 1, max(last, index + window[window.count / 2]))
            smoothed[index] = Int32(frame)
            last = frame
        }
        return smoothed
    }

    /// How far either side of a frame ``smoothed(_:targetCount:)`` looks: 20 frames, 100 ms.
    static let smoothingFrames = 20

    /// The target's sample that lines up with the reference's `sample`: its frame's, plus the
    /// part of a frame it is past its frame's start, at the target's rate; never past the target's end.
    package func targetSample(_ sample: Int) -> Int {
        let frame = min(targetFrames.count - 1, max(0, sample / referenceHop))
        let within = Double(sample - frame * referenceHop) / Double(referenceHop)
        let target = (Double(targetFrames[frame]) + within) * Double(targetHop)
        return min(targetSampleCount, max(0, Int(target.rounded())))
    }
}

/// The log energy of speech in 24 bands from 100 Hz to 7.5 kHz, every 5 ms: what stays the same
/// when the same speech is spoken again or encoded to MP3, whatever the sample rate.
struct BandEnergies {
    static let framesPerSecond = 200
    static let bandCount = 24
    static let lowestHertz = 100.0
    static let highestHertz = 7_500.0
    /// The level silence reads as, dB: far under speech, so silence matches silence.
    static let floorDecibels: Float = -60

    /// Samples per frame.
    let hop: Int
    let sampleCount: Int
    let frameCount: Int
    /// `frameCount × bandCount` values, dB.
    private let values: [Float]

    /// The band energies of mono `samples` (−1…1) at `sampleRate`: frames of about 23 ms under a
    /// Hann window, centered every ``hop`` samples.
    init(samples: [Float], sampleRate: Int) throws(AudioError) {
        hop = max(1, sampleRate / Self.framesPerSecond)
        sampleCount = samples.count
        frameCount = (samples.count + hop - 1) / hop
        var length = 2
        while length < sampleRate * 23 / 1000 { length *= 2 }
        let transform = try RealFourierTransform(length: length)
        let window = (0..<length).map { Float(0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(length))) }
        // Each band's bins, at this rate: geometric edges, so each band is a like share of the voice.
        let binHertz = Double(sampleRate) / Double(length)
        let edges = (0...Self.bandCount).map {
            Self.lowestHertz * pow(Self.highestHertz / Self.lowestHertz, Double($0) / Double(Self.bandCount))
        }
        let bands = (0..<Self.bandCount).map { band in
            let first = Int((edges[band] / binHertz).rounded(.up))
            let end = Int((edges[band + 1] / binHertz).rounded(.up))
            return min(first, length / 2)..<min(max(end, first), length / 2 + 1)
        }
        let scale = 1 / Float(length * length)
        var values = [Float](repeating: Self.floorDecibels, count: frameCount * Self.bandCount)
        var frame = [Float](repeating: 0, count: length)
        var power = [Float](repeating: 0, count: length / 2 + 1)
        for index in 0..<frameCount {
            let first = index * hop - length / 2
            for offset in 0..<length {
                let sample = first + offset
                frame[offset] = sample >= 0 && sample < samples.count ? samples[sample] * window[offset] : 0
            }
            transform.power(of: &frame, into: &power)
            for (band, bins) in bands.enumerated() {
                var energy: Float = 0
                for bin in bins { energy += power[bin] }
                let decibels = 10 * log10(energy * scale + 1e-8)
                values[index * Self.bandCount + band] = max(Self.floorDecibels, decibels)
            }
        }
        self.values = values
    }

    /// The root-mean-square difference, dB, between frame `i` of these and frame `j` of `other`.
    func distance(_ i: Int, to other: BandEnergies, _ j: Int) -> Float {
        var sum: Float = 0
        let (a, b) = (i * Self.bandCount, j * Self.bandCount)
        for band in 0..<Self.bandCount {
            let difference = values[a + band] - other.values[b + band]
            sum += difference * difference
        }
        return (sum / Float(Self.bandCount)).squareRoot()
    }
}
