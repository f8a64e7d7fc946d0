import Dispatch
internal import SessionAudio
internal import SessionTimeline

/// What a render's output measured, as EBU R128 and BS.1770 define it.
struct OutputLoudness: Equatable {
    /// The whole output's integrated loudness, LUFS.
    var program: Double?
    /// Its loudness range, LU.
    var range: Double?
    /// Its largest short-term loudness, LUFS.
    var maxShortTerm: Double?
    /// The integrated loudness of the speech items' spans, LUFS.
    var speech: Double?
    /// The speech loudness of each phase, in order.
    var phaseSpeech: [Double?]
}

/// The output's loudness, measured on a thread of its own: the program (integrated, range, the
/// largest short-term loudness) and the speech (the spans of the speech items, phase by phase),
/// with ``BlockLoudness``, which filters each sample once; and, when asked, its true peak.
///
/// The mixer hands finished blocks over, gathered to at least ``handOverFrames`` (each hand-over
/// wakes the meter's thread, which costs more than measuring a short block of silence), and goes
/// on mixing; at most ``blocksInFlight`` hand-overs wait, so memory stays bounded.
final class SessionMeters: @unchecked Sendable {
    // @unchecked: `pending` is touched only by the thread that adds; everything else but `slots`
    // and `queue` (thread-safe) only on `queue`.
    private var meter: BlockLoudness
    private let peakMeter: TruePeakMeter?
    private var pending: [Float] = []
    private let channelCount: ChannelCount
    private let queue = DispatchQueue(label: "render-session.loudness")
    private let slots: DispatchSemaphore
    /// The speech items' spans, in order, and the first that may still come.
    private let speech: [Range<Int64>]
    private var speechIndex = 0
    /// Where each phase starts, in order; speech belongs to the last phase started (group k + 1
    /// for phase k; group 0 is speech before the first).
    private let phaseStarts: [Int64]
    private var position: Int64 = 0

    /// How many hand-overs may wait to be measured before `add` waits for the meter.
    static let blocksInFlight = 2
    /// The fewest frames handed over at once (but the last): about 0.7 s at 48 kHz.
    static let handOverFrames = 32_768

    /// Meters for `lanes`' output: the program and its true peak, and with `measuresSpeech` the
    /// speech items' spans phase by phase.
    convenience init(lanes: MixLanes, measuresSpeech: Bool) {
        self.init(
            sampleRate: lanes.sampleRate,
            channelCount: lanes.channelCount,
            items: measuresSpeech ? lanes.items : [],
            phaseStarts: lanes.phaseStarts,
            measuresTruePeak: true
        )
    }

    /// Meters for audio at `sampleRate` whose speech is that of `items` (a timeline's narration
    /// lane; empty measures the program alone), phase by phase (`phaseStarts`, the phases' first
    /// frames in order), placed at `timelineRate` when that is not `sampleRate`; with
    /// `measuresTruePeak`, its true peak at its own rate too.
    init(
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        items: [TimelineItem],
        phaseStarts: [Frames],
        placedAt timelineRate: SampleRate? = nil,
        measuresTruePeak: Bool = false
    ) {
        self.channelCount = channelCount
        peakMeter = measuresTruePeak ? TruePeakMeter(channelCount: channelCount) : nil
        meter = BlockLoudness(sampleRate: sampleRate, channelCount: channelCount, speechGroups: phaseStarts.count + 1)
        // A decoder may give another rate than the timeline's (Opus decodes at 48 kHz): its
        // frames are then placed at the same times.
        let scale = Double(sampleRate.hertz) / Double((timelineRate ?? sampleRate).hertz)
        func placed(_ frame: Int64) -> Int64 { scale == 1 ? frame : Int64((Double(frame) * scale).rounded()) }
        speech = NarrationLane.spokenRanges(of: items).map { placed($0.lowerBound)..<placed($0.upperBound) }
        self.phaseStarts = phaseStarts.map { placed($0.count) }
        slots = DispatchSemaphore(value: Self.blocksInFlight)
    }

    /// Queues the first `frames` frames of `samples`, the output's next, to be measured.
    func add(_ samples: [Float], frames: Int) {
        pending.append(contentsOf: samples[0..<(frames * channelCount.count)])
        if pending.count >= Self.handOverFrames * channelCount.count { handOver() }
    }

    /// Sends what is pending to the meter's thread.
    private func handOver() {
        guard !pending.isEmpty else { return }
        slots.wait()
        let block = pending
        pending = []
        pending.reserveCapacity(block.count)
        queue.async { [self] in
            measure(block, frames: block.count / channelCount.count)
            slots.signal()
        }
    }

    /// The true peak of everything added, dBTP (`-infinity` for silence); `nil` unless asked for.
    var truePeakDecibels: Double? {
        handOver()
        return queue.sync { peakMeter?.truePeakDecibels }
    }

    /// Everything added, measured, once it has all been.
    var loudness: OutputLoudness {
        handOver()
        return queue.sync {
            OutputLoudness(
                program: meter.integratedLoudness,
                range: meter.loudnessRange,
                maxShortTerm: meter.maximumShortTermLoudness,
                speech: meter.speechLoudness,
                phaseSpeech: phaseStarts.indices.map { meter.speechLoudness(ofGroup: $0 + 1) }
            )
        }
    }

    /// Measures the block, each stretch of speech in it as speech of its phase.
    private func measure(_ block: [Float], frames: Int) {
        peakMeter?.add(block, frames: frames)
        let start = position
        let end = start + Int64(frames)
        var done = start
        while done < end {
            while speechIndex < speech.count, speech[speechIndex].upperBound <= done { speechIndex += 1 }
            let span = speechIndex < speech.count ? speech[speechIndex] : nil
            if let span, span.lowerBound <= done {
                let phase = phaseStarts.lastIndex { $0 <= done }.map { $0 + 1 } ?? 0
                let phaseEnd = phase < phaseStarts.count ? phaseStarts[phase] : end
                let until = min(end, span.upperBound, phaseEnd)
                meter.add(block, from: Int(done - start), frames: Int(until - done), speechGroup: phase)
                done = until
            } else {
                let until = min(end, span?.lowerBound ?? end)
                meter.add(block, from: Int(done - start), frames: Int(until - done))
                done = until
            }
        }
        position = end
    }
}
