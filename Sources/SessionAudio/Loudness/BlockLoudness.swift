import Foundation
package import SessionTimeline

/// ITU-R BS.1770-4 K-weighting for one channel: the high-shelf "head" filter and the RLB high-pass
/// in cascade, designed for any rate from their analog prototypes by the bilinear transform, as
/// libebur128 designs them (the same constants), run in double precision.
struct KWeighting {
    private let shelf: (b0: Double, b1: Double, b2: Double, a1: Double, a2: Double)
    private let highPass: (a1: Double, a2: Double)
    private var shelfState = (0.0, 0.0)
    private var highPassState = (0.0, 0.0)

    init(sampleRate: Double) {
        var f0 = 1_681.974_450_955_533
        let gain = 3.999_843_853_973_347
        var q = 0.707_175_236_955_419_6
        var k = tan(Double.pi * f0 / sampleRate)
        let vh = pow(10, gain / 20)
        let vb = pow(vh, 0.499_666_774_154_541_6)
        var a0 = 1 + k / q + k * k
        shelf = (
            (vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0,
            2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0
        )
        f0 = 38.135_470_876_024_44
        q = 0.500_327_037_323_877_3
        k = tan(Double.pi * f0 / sampleRate)
        a0 = 1 + k / q + k * k
        highPass = (2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0)
    }

    /// The next output sample (direct form II transposed, both stages).
    @inline(__always)
    mutating func process(_ input: Double) -> Double {
        let shelved = shelf.b0 * input + shelfState.0
        shelfState.0 = shelf.b1 * input - shelf.a1 * shelved + shelfState.1
        shelfState.1 = shelf.b2 * input - shelf.a2 * shelved
        // The high-pass's numerator is 1, −2, 1.
        let output = shelved + highPassState.0
        highPassState.0 = -2 * shelved - highPass.a1 * output + highPassState.1
        highPassState.1 = shelved - highPass.a2 * output
        return output
    }

    /// Whether the filter has all but forgotten its input: every part of its state is under
    /// 10⁻¹² (−240 dB). Silence that follows then filters to less than 10⁻²¹ of energy in all,
    /// a hundred trillion times under BS.1770's absolute gate; ``settle()`` makes it exactly 0.
    var isSettled: Bool {
        max(shelfState.0.magnitude, shelfState.1.magnitude, highPassState.0.magnitude, highPassState.1.magnitude)
            < 1e-12
    }

    /// Forgets the input: the state of a filter fed silence long enough.
    mutating func settle() {
        shelfState = (0, 0)
        highPassState = (0, 0)
    }
}

/// BS.1770's gated integration of one stream of K-weighted energy, kept as a histogram so that its
/// memory does not grow with the length measured: 400 ms blocks every 100 ms, the absolute gate at
/// −70 LUFS, the relative gate 10 LU under the gated mean. Blocks are binned by loudness in steps
/// of 0.05 LU (the relative gate falls inside one bin, whose blocks all count or not: an error
/// well under 0.05 LU); each bin keeps its count and its energies' sum, so the mean is exact otherwise.
struct GatedLoudness {
    /// The mean square energies of the stream's 100 ms sub-blocks, the last four.
    private var recent: [Double] = []
    private var counts = [Int](repeating: 0, count: Self.binCount)
    private var energies = [Double](repeating: 0, count: Self.binCount)
    private var total = 0.0
    private var blocks = 0

    /// Bins of 0.05 LU from −70 LUFS up to +30.
    static let binCount = 2_000
    static let binsPerLU = 20.0

    /// Takes the next 100 ms sub-block's mean weighted energy; every one from the fourth on ends a
    /// 400 ms block.
    mutating func add(subBlock energy: Double) {
        recent.append(energy)
        if recent.count > 4 { recent.removeFirst() }
        guard recent.count == 4 else { return }
        let block = (recent[0] + recent[1] + recent[2] + recent[3]) / 4
        guard let bin = Self.bin(of: block) else { return }
        counts[bin] += 1
        energies[bin] += block
        total += block
        blocks += 1
    }

    /// The bin of a block's energy; `nil` under the absolute gate.
    static func bin(of energy: Double) -> Int? {
        let loudness = BlockLoudness.lufs(energy)
        guard loudness >= -70 else { return nil }
        return min(binCount - 1, Int((loudness + 70) * binsPerLU))
    }

    /// The gated integrated loudness of `streams` together, LUFS; `nil` when no block passes.
    static func integrated(_ streams: [GatedLoudness]) -> Double? {
        let blocks = streams.reduce(0) { $0 + $1.blocks }
        guard blocks > 0 else { return nil }
        let relative = BlockLoudness.lufs(streams.reduce(0) { $0 + $1.total } / Double(blocks)) - 10
        let first = max(0, Int(((relative + 70) * binsPerLU).rounded(.down)))
        var energy = 0.0
        var count = 0
        for stream in streams {
            for bin in first..<binCount where stream.counts[bin] > 0 {
                // The first bin holds blocks on both sides of the gate: only those at or above it.
                count += stream.counts[bin]
                energy += stream.energies[bin]
            }
        }
        return count > 0 ? BlockLoudness.lufs(energy / Double(count)) : nil
    }

    /// Forgets every block, keeping its storage.
    mutating func reset() {
        recent.removeAll(keepingCapacity: true)
        for bin in 0..<Self.binCount where counts[bin] > 0 {
            counts[bin] = 0
            energies[bin] = 0
        }
        total = 0
        blocks = 0
    }

    /// Takes `other`'s blocks in with these, as if they had been added here.
    mutating func merge(_ other: GatedLoudness) {
        for bin in 0..<Self.binCount where other.counts[bin] > 0 {
            counts[bin] += other.counts[bin]
            energies[bin] += other.energies[bin]
        }
        total += other.total
        blocks += other.blocks
    }
}

/// A BS.1770-4 / EBU R128 meter of one stream of interleaved frames, by hand rather than
/// libebur128 for speed: it filters each sample once, and everything else works on 100 ms
/// sub-blocks. It gives the integrated loudness (gated), the loudness range (EBU Tech 3342: 3 s
/// short-term loudness every 100 ms, gated at −70 LUFS and 20 LU under their mean, the 10th to
/// the 95th percentile) and the largest short-term loudness; and, for frames flagged as speech,
/// the integrated loudness of the speech alone, the flagged frames joined end to end, per group
/// (a session's phases, which come in order) and over all. Memory does not grow with the length
/// measured: a group's blocks join the others' once the next group starts, and only its figure
/// is kept.
///
/// Channels are weighted as libebur128's default map weights them: left, right and centre 1, the
/// fourth (LFE) 0, the fifth and sixth (surrounds) 1.41, any more 0; mono counts once.
package struct BlockLoudness {
    /// The rate of the frames.
    package let sampleRate: SampleRate
    /// The number of interleaved channels in each frame.
    package let channelCount: ChannelCount
    private var filters: [KWeighting]
    private let weights: [Double]
    /// Frames in a 100 ms sub-block: `(rate + 5) / 10`, as libebur128 counts them.
    private let subBlockFrames: Int

    private var program = Stream()
    private var shortTerm: [Double] = []
    private var rangeCounts = [Int](repeating: 0, count: GatedLoudness.binCount)
    private var rangeTotal = 0.0
    private var rangeBlocks = 0
    private var loudestShortTerm: Double?
    /// The speech of the group being measured, the blocks of those before it, and their figures.
    private var speech = Stream()
    private var speechGroup = 0
    private var earlierSpeech = GatedLoudness()
    private var earlierGroupLoudness: [Double?] = []

    /// One stream of sub-blocks being filled, and the blocks made of them.
    private struct Stream {
        var sum = 0.0
        var frames = 0
        var gated = GatedLoudness()
    }

    /// A meter whose speech is kept in `speechGroups` groups (1 for one figure), numbered from 0.
    package init(sampleRate: SampleRate, channelCount: ChannelCount, speechGroups: Int = 1) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        filters = Array(repeating: KWeighting(sampleRate: Double(sampleRate.hertz)), count: channelCount.count)
        let map: [Double] = [1, 1, 1, 0, 1.41, 1.41]
        weights = (0..<channelCount.count).map { $0 < map.count ? map[$0] : 0 }
        subBlockFrames = (sampleRate.hertz + 5) / 10
        earlierGroupLoudness.reserveCapacity(max(1, speechGroups))
    }

    /// `−0.691 + 10 log10(energy)`: BS.1770's loudness of a mean weighted energy.
    static func lufs(_ energy: Double) -> Double {
        -0.691 + 10 * log10(energy)
    }

    /// Measures `frames` interleaved frames of `samples` from frame `offset` on; with `speechGroup`,
    /// they are speech of that group too. Groups come in order: once a group's speech is added,
    /// no earlier group's may be.
    package mutating func add(_ samples: [Float], from offset: Int = 0, frames: Int, speechGroup: Int? = nil) {
        precondition(
            offset >= 0 && (offset + frames) * channelCount.count <= samples.count,
            "fewer samples than frames"
        )
        if let speechGroup, speechGroup != self.speechGroup {
            precondition(speechGroup > self.speechGroup, "speech groups in order")
            startSpeechGroup(speechGroup)
        }
        var done = 0
        while done < frames {
            // Up to the end of the sub-block being filled (of the program, and of the speech).
            var count = min(frames - done, subBlockFrames - program.frames)
            if speechGroup != nil { count = min(count, subBlockFrames - speech.frames) }
            let energy = weightedEnergy(samples, from: offset + done, frames: count)
            program.sum += energy
            program.frames += count
            if program.frames == subBlockFrames { endProgramSubBlock() }
            if speechGroup != nil {
                speech.sum += energy
                speech.frames += count
                if speech.frames == subBlockFrames { endSpeechSubBlock() }
            }
            done += count
        }
    }

    /// Frames whose silence is looked for at once: digital silence with every filter settled
    /// filters to nothing, so a session's pauses cost one scan instead of the filters' work.
    private static let silenceRun = 64

    /// The sum over `frames` frames from `offset` of each frame's channel-weighted K-filtered square.
    /// The filters are taken out of `self` for the loop, and mono and stereo kept in locals: the
    /// loop then touches no array it must check for sharing.
    private mutating func weightedEnergy(_ samples: [Float], from offset: Int, frames: Int) -> Double {
        let channels = channelCount.count
        var sum = 0.0
        samples.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            var filters: [KWeighting] = []
            swap(&filters, &self.filters)
            defer { swap(&filters, &self.filters) }
            var run = offset
            let end = offset + frames
            while run < end {
                let stop = min(end, run + Self.silenceRun)
                if filters.allSatisfy(\.isSettled),
                    SampleBlock.isSilent(base + run * channels, count: (stop - run) * channels)
                {
                    for channel in filters.indices { filters[channel].settle() }
                    run = stop
                    continue
                }
                switch channels {
                case 1:
                    var filter = filters[0]
                    for index in run..<stop {
                        let filtered = filter.process(Double(base[index]))
                        sum += filtered * filtered
                    }
                    filters[0] = filter
                case 2:
                    var (left, right) = (filters[0], filters[1])
                    for frame in run..<stop {
                        let l = left.process(Double(base[2 * frame]))
                        let r = right.process(Double(base[2 * frame + 1]))
                        sum += l * l + r * r
                    }
                    (filters[0], filters[1]) = (left, right)
                default:
                    for channel in 0..<channels where weights[channel] > 0 {
                        var filter = filters[channel]
                        var channelSum = 0.0
                        for frame in run..<stop {
                            let filtered = filter.process(Double(base[frame * channels + channel]))
                            channelSum += filtered * filtered
                        }
                        filters[channel] = filter
                        sum += weights[channel] * channelSum
                    }
                }
                run = stop
            }
        }
        return sum
    }

    private mutating func endProgramSubBlock() {
        let subBlock = program.sum / Double(subBlockFrames)
        program.sum = 0
        program.frames = 0
        program.gated.add(subBlock: subBlock)
        shortTerm.append(subBlock)
        if shortTerm.count > 30 { shortTerm.removeFirst() }
        if shortTerm.count == 30 { addShortTerm(shortTerm.reduce(0, +) / 30) }
    }

    private mutating func endSpeechSubBlock() {
        speech.gated.add(subBlock: speech.sum / Double(subBlockFrames))
        speech.sum = 0
        speech.frames = 0
    }

    /// Ends the group being measured (a sub-block it left unfinished is not counted, as at the
    /// end) and starts `group`, which comes after it.
    private mutating func startSpeechGroup(_ group: Int) {
        while earlierGroupLoudness.count < speechGroup { earlierGroupLoudness.append(nil) }
        earlierGroupLoudness.append(GatedLoudness.integrated([speech.gated]))
        earlierSpeech.merge(speech.gated)
        speech.gated.reset()
        speech.sum = 0
        speech.frames = 0
        speechGroup = group
    }

    private mutating func addShortTerm(_ energy: Double) {
        let loudness = Self.lufs(energy)
        loudestShortTerm = max(loudestShortTerm ?? loudness, loudness)
        guard let bin = GatedLoudness.bin(of: energy) else { return }
        rangeCounts[bin] += 1
        rangeTotal += energy
        rangeBlocks += 1
    }

    /// The integrated loudness of everything added, LUFS; `nil` when no block passes the gates.
    package var integratedLoudness: Double? { GatedLoudness.integrated([program.gated]) }

    /// The integrated loudness of the speech of every group together; `nil` without any.
    package var speechLoudness: Double? { GatedLoudness.integrated([earlierSpeech, speech.gated]) }

    /// The integrated loudness of one group's speech; `nil` without any.
    package func speechLoudness(ofGroup group: Int) -> Double? {
        if group == speechGroup { return GatedLoudness.integrated([speech.gated]) }
        return group < earlierGroupLoudness.count ? earlierGroupLoudness[group] : nil
    }

    /// The largest short-term loudness, LUFS; `nil` before 3 s.
    package var maximumShortTermLoudness: Double? { loudestShortTerm }

    /// The loudness range, LU; `nil` when no short-term value passes the gates.
    package var loudnessRange: Double? {
        guard rangeBlocks > 0 else { return nil }
        let relative = Self.lufs(rangeTotal / Double(rangeBlocks)) - 20
        let first = max(0, Int(((relative + 70) * GatedLoudness.binsPerLU).rounded(.down)))
        let gated = rangeCounts[first...].reduce(0, +)
        guard gated > 0 else { return nil }
        func percentile(_ fraction: Double) -> Double {
            let wanted = Int((Double(gated - 1) * fraction).rounded(.down))
            var seen = 0
            for bin in first..<GatedLoudness.binCount {
                seen += rangeCounts[bin]
                if seen > wanted { return (Double(bin) + 0.5) / GatedLoudness.binsPerLU - 70 }
            }
            return Double(GatedLoudness.binCount) / GatedLoudness.binsPerLU - 70
        }
        return percentile(0.95) - percentile(0.10)
    }
}
