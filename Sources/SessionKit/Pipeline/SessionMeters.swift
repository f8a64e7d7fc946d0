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
/// largest short-term loudness) and the speech (the spans of the speech items, phase by phase).
///
/// libebur128 filters every sample (about 12 ns a sample here, as long as the rest of a layered
/// render together), so the mixer hands each finished block over and goes on mixing; on two cores
/// the measurement then costs almost no wall time. At most ``blocksInFlight`` blocks wait, so
/// memory stays bounded.
///
/// Speech is measured by one meter per phase, fed only the frames of the speech items in it; the
/// whole speech loudness gates all their blocks together (`ebur128_loudness_global_multiple`), so
/// no sample is filtered twice. The short-term loudness is taken every second once 3 s have gone
/// by: the points libebur128's loudness range is made of.
final class SessionMeters: @unchecked Sendable {
    // @unchecked: everything but `slots` and `queue` (thread-safe) is touched only on `queue`.
    private let program: LoudnessMeter
    private let channelCount: ChannelCount
    private let sampleRate: SampleRate
    private let queue = DispatchQueue(label: "render-session.loudness")
    private let slots: DispatchSemaphore
    /// The speech items' spans, in order, and the first that may still come.
    private let speech: [Range<Int64>]
    private var speechIndex = 0
    /// Where each phase starts, in order; a speech frame belongs to the last phase started.
    private let phaseStarts: [Int64]
    /// One meter per phase (one more for speech before the first), made when the phase first speaks.
    private var phaseMeters: [LoudnessMeter?]
    private var position: Int64 = 0
    private var nextShortTerm: Int64
    private var maxShortTerm: Double?

    /// How many blocks may wait to be measured before `add` waits for the meter.
    static let blocksInFlight = 4

    /// Meters for `lanes`' output: the program, and with `measuresSpeech` the speech items' spans
    /// phase by phase (`phaseStarts`, the phases' first frames in order).
    init(lanes: MixLanes, phaseStarts: [Frames], measuresSpeech: Bool) throws(AudioError) {
        sampleRate = lanes.sampleRate
        channelCount = lanes.channelCount
        program = try LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount, measuresRange: true)
        speech = measuresSpeech ? NarrationLane.spokenRanges(of: lanes) : []
        self.phaseStarts = phaseStarts.map(\.count)
        phaseMeters = Array(repeating: nil, count: phaseStarts.count + 1)
        nextShortTerm = 3 * Int64(sampleRate.hertz)
        slots = DispatchSemaphore(value: Self.blocksInFlight)
    }

    /// Queues the first `frames` frames of `samples`, the output's next, to be measured.
    func add(_ samples: [Float], frames: Int) {
        slots.wait()
        let block = Array(samples[0..<(frames * channelCount.count)])
        queue.async { [self] in
            measure(block, frames: frames)
            slots.signal()
        }
    }

    /// Everything added, measured, once it has all been.
    var loudness: OutputLoudness {
        queue.sync {
            let meters = phaseMeters.compactMap { $0 }
            return OutputLoudness(
                program: program.integratedLoudness,
                range: program.loudnessRange,
                maxShortTerm: maxShortTerm,
                speech: LoudnessMeter.integratedLoudness(of: meters),
                phaseSpeech: phaseStarts.indices.map { phaseMeters[$0 + 1]?.integratedLoudness }
            )
        }
    }

    private func measure(_ block: [Float], frames: Int) {
        let start = position
        let end = start + Int64(frames)
        // The program, stopping at each second from 3 s on to take the short-term loudness.
        var done = start
        while done < end {
            let until = min(end, nextShortTerm)
            program.add(block, from: Int(done - start), frames: Int(until - done))
            done = until
            if done == nextShortTerm {
                if let shortTerm = program.shortTermLoudness {
                    maxShortTerm = max(maxShortTerm ?? shortTerm, shortTerm)
                }
                nextShortTerm += Int64(sampleRate.hertz)
            }
        }
        // The speech spans in this block, each phase's part to its meter.
        while speechIndex < speech.count, speech[speechIndex].upperBound <= start { speechIndex += 1 }
        var index = speechIndex
        while index < speech.count, speech[index].lowerBound < end {
            var from = max(start, speech[index].lowerBound)
            let to = min(end, speech[index].upperBound)
            while from < to {
                let phase = phaseStarts.lastIndex { $0 <= from }.map { $0 + 1 } ?? 0
                let phaseEnd = phase < phaseStarts.count ? phaseStarts[phase] : Int64.max
                let until = min(to, phaseEnd)
                meter(phase).add(block, from: Int(from - start), frames: Int(until - from))
                from = until
            }
            index += 1
        }
        position = end
    }

    /// The speech meter of phase slot `index` (0: before the first phase).
    private func meter(_ index: Int) -> LoudnessMeter {
        if let meter = phaseMeters[index] { return meter }
        // The program meter was made at this rate and channel count, so libebur128 takes them.
        guard let meter = try? LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount) else {
            preconditionFailure("libebur128 refused a rate and channel count it took before")
        }
        phaseMeters[index] = meter
        return meter
    }
}
