import Foundation
internal import SessionAudio
internal import SessionTimeline

/// The loudest moments of a mix's output, kept while a measuring pass reads it: the half
/// seconds with the highest sample peaks (where a limiter holds many at its ceiling, the densest
/// of them: their peak plus their RMS), each with the half second before it (the context a
/// codec's transform and a decoder's pre-roll need). Memory is fixed: ``count`` moments.
///
/// A codec's overshoot is close to noise laid on the signal, and its largest in a file is the
/// largest of many draws: on the 10-minute fixture in eSpeak NG at Opus 24 kb/s, 8 moments
/// missed it by 0.5 dB, 24 by 0.1–0.2.
final class LoudestMoments {
    /// How many moments are kept: enough that the session's few hardest peaks are among them.
    static let count = 24
    /// A moment's length, seconds (and its context's).
    static let momentSeconds = 0.5

    private let channels: Int
    private let blockSamples: Int
    private var previous: [Float] = []
    private var current: [Float] = []
    private var currentPeak: Float = 0
    private var currentEnergy: Float = 0
    /// The moments kept, context first, with the score that put each here.
    private var kept: [(score: Float, samples: [Float])] = []

    init(sampleRate: SampleRate, channelCount: ChannelCount) {
        channels = channelCount.count
        blockSamples = max(1, Int(Double(sampleRate.hertz) * Self.momentSeconds)) * channels
        current.reserveCapacity(blockSamples)
    }

    /// Adds the next `frames` frames of the output.
    func add(_ samples: [Float], frames: Int) {
        var index = 0
        let end = frames * channels
        while index < end {
            let take = min(end - index, blockSamples - current.count)
            for sample in samples[index..<(index + take)] {
                currentPeak = max(currentPeak, abs(sample))
                currentEnergy += sample * sample
            }
            current.append(contentsOf: samples[index..<(index + take)])
            index += take
            if current.count == blockSamples { closeBlock() }
        }
    }

    /// The moments, loudest first, once the whole output is added.
    func finish() -> [[Float]] {
        if !current.isEmpty { closeBlock() }
        return kept.sorted { $0.score > $1.score }.map(\.samples)
    }

    private func closeBlock() {
        defer {
            swap(&previous, &current)
            current.removeAll(keepingCapacity: true)
            currentPeak = 0
            currentEnergy = 0
        }
        guard currentPeak > 0 else { return }
        let score = currentPeak + (currentEnergy / Float(current.count)).squareRoot()
        if kept.count == Self.count {
            guard let weakest = kept.indices.min(by: { kept[$0].score < kept[$1].score }),
                kept[weakest].score < score
            else { return }
            kept.remove(at: weakest)
        }
        kept.append((score, previous + current))
    }
}

/// What a lossy codec does to a session, found by encoding and decoding a few seconds of it: the
/// ``LoudestMoments`` of its mix, each faded in and out and followed by a little silence, so that
/// no moment's edge is a click the codec spreads. A render sets its limiter's room and its gain
/// from this once, before encoding the whole file once (docs/sound.md, "One loudness in every
/// format").
enum CodecProbe {
    /// What the probe measured.
    struct Result: Equatable {
        /// The decoded probe's true peak as a 48 kHz player meets it, dBTP; `-infinity` for silence.
        var decodedPeak: Double
        /// The decoded probe's integrated loudness less the probe's before encoding, LU (negative:
        /// the codec took loudness off, mostly with the highs it drops); 0 when unmeasurable.
        var loudnessChange: Double
    }

    /// The fade at each edge of a moment, seconds.
    static let fadeSeconds = 0.01
    /// The silence after each moment, seconds: longer than an Opus or AAC frame's overlap.
    static let gapSeconds = 0.06

    /// Encodes `moments` (interleaved at `sampleRate`) as `encoder` says to a temporary file,
    /// decodes it and measures it; the file is removed.
    /// - Throws: ``SessionError`` (`cannotWrite`) when the temporary cannot be written or decoded.
    static func run(
        _ moments: [[Float]],
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        encoder: EncoderSettings
    ) throws(SessionError) -> Result {
        // Settings the session's rate cannot take (an MP3 bit rate whose frame cannot hold the
        // gapless tag) are not probed: the output refuses them, naming itself and what is allowed.
        guard encoder.problem(sampleRate: sampleRate.hertz, channelCount: channelCount.count) == nil else {
            return Result(decodedPeak: -.infinity, loudnessChange: 0)
        }
        let channels = channelCount.count
        let fade = max(1, Int(Double(sampleRate.hertz) * fadeSeconds))
        let gap = [Float](repeating: 0, count: Int(Double(sampleRate.hertz) * gapSeconds) * channels)
        var probe: [Float] = []
        for moment in moments {
            let frames = moment.count / channels
            let start = probe.count
            probe.append(contentsOf: moment)
            for frame in 0..<min(fade, frames / 2) {
                let gain = Float(frame) / Float(fade)
                for channel in 0..<channels {
                    probe[start + frame * channels + channel] *= gain
                    probe[start + (frames - 1 - frame) * channels + channel] *= gain
                }
            }
            probe.append(contentsOf: gap)
        }
        guard !probe.isEmpty else { return Result(decodedPeak: -.infinity, loudnessChange: 0) }
        let path = NSTemporaryDirectory() + "/render-session-probe-\(UUID().uuidString).\(encoder.format.fileExtension)"
        var source = SampleFrames(probe, sampleRate: sampleRate, channelCount: channelCount)
        let written = try AudioOutput.write(
            &source,
            to: OutputTarget(destination: .path(path), kind: .replace(path: path)),
            encoder: encoder,
            metadata: AudioMetadata()
        )
        guard let file = written.pending else { return Result(decodedPeak: -.infinity, loudnessChange: 0) }
        defer { file.discard() }
        do throws(AudioError) {
            let before = try LoudnessMeter(sampleRate: sampleRate, channelCount: channelCount)
            before.add(probe)
            let decoder = try AudioFileDecoder(path: file.temporaryPath, opusThroughLibavcodec: true)
            let peak = try PlaybackPeakMeter(sampleRate: decoder.sampleRate, channelCount: decoder.channelCount)
            let after = try LoudnessMeter(sampleRate: decoder.sampleRate, channelCount: decoder.channelCount)
            var buffer: [Float] = []
            while true {
                let frames = try decoder.read(into: &buffer, maximumFrames: AudioOutput.blockFrames)
                if frames == 0 { break }
                try peak.add(buffer, frames: frames)
                after.add(buffer, frames: frames)
            }
            var change = 0.0
            if let loudness = after.integratedLoudness, let reference = before.integratedLoudness,
                loudness.isFinite, reference.isFinite
            {
                change = loudness - reference
            }
            return Result(decodedPeak: try peak.finish(), loudnessChange: change)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot probe the \(encoder.format) encoder: \(error.reason)",
                underlyingError: error
            )
        }
    }
}
