import Dispatch
internal import SessionAudio
internal import SessionTimeline

/// The output's integrated loudness, measured on a thread of its own.
///
/// libebur128 filters every sample (about 12 ns a sample here, as long as the rest of a layered
/// render together), so the mixer hands each finished block over and goes on mixing; on two cores
/// the measurement then costs almost no wall time. At most ``blocksInFlight`` blocks wait, so
/// memory stays bounded.
final class BackgroundMeter: @unchecked Sendable {
    // @unchecked: `meter` is touched only on `queue`; `slots` and `queue` are thread-safe.
    private let meter: LoudnessMeter
    private let channelCount: Int
    private let queue = DispatchQueue(label: "render-session.loudness")
    private let slots: DispatchSemaphore

    /// How many blocks may wait to be measured before `add` waits for the meter.
    static let blocksInFlight = 4

    init(sampleRate: SampleRate, channelCount: ChannelCount) throws(AudioError) {
        meter = try LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount)
        self.channelCount = channelCount.count
        slots = DispatchSemaphore(value: Self.blocksInFlight)
    }

    /// Queues the first `frames` frames of `samples` to be measured.
    func add(_ samples: [Float], frames: Int) {
        slots.wait()
        let block = Array(samples[0..<(frames * channelCount)])
        queue.async { [self] in
            meter.add(block, frames: frames)
            slots.signal()
        }
    }

    /// The integrated loudness of everything added, once it has all been measured.
    var integratedLoudness: Double? {
        queue.sync { meter.integratedLoudness }
    }
}
