import Foundation
package import SessionTimeline

/// The true peak of decoded audio as a player at 48 kHz meets it: resampled to 48 kHz with
/// libsoxr (when at another rate), then measured by ``TruePeakMeter``.
///
/// Phones and most players run at 48 kHz, so a 22,050 Hz file reaches the converter resampled,
/// and the resampler's filter makes peaks between the file's samples that a 4× meter at 22,050 Hz
/// underestimates. ffmpeg's `ebur128` filter measures the same way (it resamples to 48 kHz first),
/// so the figure agrees with the meter users check with.
package final class PlaybackPeakMeter {
    /// The rate the meter measures at.
    package static let playbackRate: SampleRate = 48_000

    private let resampler: Resampler?
    private let meter: TruePeakMeter
    private var resampled: [Float] = []
    private var finished = false

    /// - Parameter threshold: the level (dBTP) whose crossings ``overs(countedAt:)`` notes;
    ///   `nil` for none.
    /// - Throws: ``AudioError`` (`cannotResample`) when libsoxr refuses the rates.
    package init(
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        notingOver threshold: Double? = nil
    )
        throws(AudioError)
    {
        meter = TruePeakMeter(channelCount: channelCount, notingOver: threshold)
        resampler =
            sampleRate == Self.playbackRate
            ? nil
            : try Resampler(
                inputRate: sampleRate.hertz,
                outputRate: Self.playbackRate.hertz,
                channelCount: channelCount.count
            )
    }

    /// Measures the first `frames` interleaved frames of `samples`.
    package func add(_ samples: [Float], frames: Int) throws(AudioError) {
        guard let resampler else {
            meter.add(samples, frames: frames)
            return
        }
        resampled.removeAll(keepingCapacity: true)
        try resampler.process(samples, frames: frames, appendingTo: &resampled)
        meter.add(resampled)
    }

    /// The true peak of everything added, in dBTP; `-infinity` for silence.
    package func finish() throws(AudioError) -> Double {
        if let resampler, !finished {
            resampled.removeAll(keepingCapacity: true)
            try resampler.flush(appendingTo: &resampled)
            meter.add(resampled)
        }
        finished = true
        return meter.truePeakDecibels
    }

    /// Where the audio went over the threshold, once finished: each stretch of
    /// ``TruePeakFilter/blockFrames`` at 48 kHz that did, by its first frame counted at `rate`
    /// (the audio's own, or the timeline's a decoded file is placed on; libsoxr keeps the audio
    /// and the 48 kHz frames aligned) and its true peak in dBTP; `nil` when more were over than
    /// ``TruePeakMeter/oversKept``.
    package func overs(countedAt rate: SampleRate) -> [(frame: Int64, peakDecibels: Double)]? {
        guard meter.oversMissed == 0 else { return nil }
        let (rate, playback) = (Int64(rate.hertz), Int64(Self.playbackRate.hertz))
        return meter.overs.map { ($0.frame * rate / playback, 20 * log10(Double($0.peak))) }
    }
}
