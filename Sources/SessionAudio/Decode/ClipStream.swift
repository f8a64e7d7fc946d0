import Foundation
package import SessionTimeline

/// A source of interleaved float frames at its own rate and channel count.
protocol FrameSource: AnyObject {
    var sampleRate: SampleRate { get }
    var channelCount: ChannelCount { get }
    /// Writes up to `maximumFrames` frames into `samples` from index 0; returns 0 only at the end.
    func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int
}

extension AudioFileDecoder: FrameSource {}

/// Frames already in memory, such as the synthesized bell.
final class MemoryFrameSource: FrameSource {
    let sampleRate: SampleRate
    let channelCount: ChannelCount
    private let samples: [Float]
    private var position = 0

    init(samples: [Float], sampleRate: SampleRate, channelCount: ChannelCount) {
        self.samples = samples
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    func read(into buffer: inout [Float], maximumFrames: Int) -> Int {
        let channelCount = channelCount.count
        let frames = min(maximumFrames, (samples.count - position) / channelCount)
        if buffer.count < frames * channelCount { buffer = [Float](repeating: 0, count: frames * channelCount) }
        buffer.replaceSubrange(
            0..<(frames * channelCount),
            with: samples[position..<(position + frames * channelCount)]
        )
        position += frames * channelCount
        return frames
    }
}

/// A clip as it goes into the output: decoded, converted to the output's channel count and
/// sample rate, exactly `outputFrames` long, with its edges made click-free.
///
/// The stream checks the source against its measured length (`sourceFrames`): a file that
/// decodes shorter or longer than measured is an error, never a silently different output.
/// The resampled length is fixed in advance (see `SampleRate.frames(converting:from:)`); the
/// resampler's last frame or two are trimmed or padded with zeros to meet it.
///
/// Edges (unless turned off with `edgeFades: false`): if the first frame's largest absolute sample exceeds ``edgeThreshold`` (about −54 dBFS),
/// the first ``fadeDuration`` seconds are faded in with a raised-cosine gain; the same holds
/// for the last frame and a fade-out. Clips that start and end near zero pass untouched.
package final class ClipStream {
    /// The level above which an edge sample would click against silence.
    package static let edgeThreshold: Float = 1.0 / 512
    /// The length of an edge fade, when one is needed.
    package static let fadeDuration = 0.005

    private let source: any FrameSource
    private let path: String?
    private let expectedSourceFrames: Int64
    private let outputChannels: Int
    private let outputFrames: Int64
    private let fadeFrames: Int64
    private let resampler: Resampler?
    private static let blockFrames = 16_384
    /// Source frames decoded per pull: a block, or fewer when upsampling, so that one pull never
    /// produces much more than a block of output whatever the ratio of rates.
    private let sourceBlockFrames: Int

    private var decoded: [Float] = []
    private var converted: [Float] = []
    /// Converted frames not yet handed out: `pending[pendingStart...]`.
    private var pending: [Float] = []
    private var pendingStart = 0
    private var sourceFramesRead: Int64 = 0
    private var emitted: Int64 = 0
    private var finished = false

    /// Whether the start was faded in; known once the first frames are read.
    package private(set) var fadedIn = false
    /// Whether the end was faded out; known once the stream is finished.
    package private(set) var fadedOut = false

    /// What the ``SpeechLeveler`` took off so far; `nil` for a stream that is not leveled.
    package var leveling: LimiterActivity? {
        guard let leveler = source as? SpeechLeveler else { return nil }
        return LimiterActivity(
            maxReductionDecibels: leveler.largestReductionDecibels,
            secondsOverOneDecibel: Double(leveler.framesReducedOverOneDecibel) / Double(leveler.sampleRate.hertz)
        )
    }

    /// A stream of the file `decoder` reads, which measured `sourceFrames` frames.
    ///
    /// With `edgeFades` false, the edges pass untouched whatever their level: for a caller that
    /// joins the stream to other audio itself, as ``LoopStream`` joins a file's end to its start.
    /// With a `levelingReference` (the file's integrated loudness, LUFS), a speech clip goes
    /// through the ``SpeechLeveler`` at its own rate, before anything else.
    package convenience init(
        decoder: AudioFileDecoder,
        sourceFrames: Frames,
        outputRate: SampleRate,
        outputChannels: ChannelCount,
        outputFrames: Frames,
        edgeFades: Bool = true,
        levelingReference: Double? = nil
    ) throws(AudioError) {
        try self.init(
            source: levelingReference.map { SpeechLeveler(decoder, reference: $0) } ?? decoder,
            path: decoder.path,
            sourceFrames: sourceFrames,
            outputRate: outputRate,
            outputChannels: outputChannels,
            outputFrames: outputFrames,
            edgeFades: edgeFades
        )
    }

    /// A stream of interleaved frames in memory; leveled as speech with a `levelingReference`.
    package convenience init(
        samples: [Float],
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        outputRate: SampleRate,
        outputChannels: ChannelCount,
        outputFrames: Frames,
        levelingReference: Double? = nil
    ) throws(AudioError) {
        let source = MemoryFrameSource(samples: samples, sampleRate: sampleRate, channelCount: channelCount)
        try self.init(
            source: levelingReference.map { SpeechLeveler(source, reference: $0) } ?? source,
            path: nil,
            sourceFrames: Frames(Int64(samples.count / channelCount.count)),
            outputRate: outputRate,
            outputChannels: outputChannels,
            outputFrames: outputFrames
        )
    }

    /// A stream of any source, such as a bed synthesized for as long as it plays.
    init(
        source: any FrameSource,
        path: String?,
        sourceFrames: Frames,
        outputRate: SampleRate,
        outputChannels: ChannelCount,
        outputFrames: Frames,
        edgeFades: Bool = true
    ) throws(AudioError) {
        // Below this line frame counts are plain integers: they index buffers handed to C.
        self.source = source
        self.path = path
        expectedSourceFrames = sourceFrames.count
        self.outputChannels = outputChannels.count
        self.outputFrames = outputFrames.count
        fadeFrames =
            edgeFades ? min(Int64((Double(outputRate.hertz) * Self.fadeDuration).rounded()), outputFrames.count / 2) : 0
        sourceBlockFrames = max(1, min(Self.blockFrames, Self.blockFrames * source.sampleRate.hertz / outputRate.hertz))
        resampler =
            source.sampleRate == outputRate
            ? nil
            : try Resampler(
                inputRate: source.sampleRate.hertz,
                outputRate: outputRate.hertz,
                channelCount: outputChannels.count
            )
    }

    /// Writes up to `maximumFrames` frames into `samples` from index 0, growing it if needed.
    /// Returns the number of frames written; 0 only once all `outputFrames` have been read.
    package func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        while !finished && emittableFrames < maximumFrames {
            try pull()
        }
        let frames = min(emittableFrames, maximumFrames)
        guard frames > 0 else { return 0 }
        let count = frames * outputChannels
        if samples.count < count { samples = [Float](repeating: 0, count: count) }
        if emitted == 0 && fadeFrames > 0 {
            fadedIn = Self.edgeIsLoud(pending, frame: pendingStart / outputChannels, channels: outputChannels)
        }
        Self.take(count, from: &pending, at: &pendingStart, into: &samples)
        applyFades(to: &samples, frames: frames, startingAt: emitted)
        emitted += Int64(frames)
        return frames
    }

    /// Frames that may be handed out now: all that are pending once the source is finished,
    /// otherwise only those before the fade-out region, whose gain is not yet known.
    private var emittableFrames: Int {
        let pendingFrames = pendingCount / outputChannels
        if finished { return pendingFrames }
        return max(0, min(pendingFrames, Int(outputFrames - fadeFrames - emitted)))
    }

    /// Decodes one block and converts it into `pending`; at the end of the source, flushes the
    /// resampler and fixes the length.
    private func pull() throws(AudioError) {
        let frames = try source.read(into: &decoded, maximumFrames: sourceBlockFrames)
        sourceFramesRead += Int64(frames)
        if sourceFramesRead > expectedSourceFrames {
            throw AudioError(
                .cannotDecode,
                path: path,
                reason:
                    "the file decodes to more than the \(expectedSourceFrames) frames measured before rendering; was it replaced?"
            )
        }
        if frames == 0 {
            guard sourceFramesRead == expectedSourceFrames else {
                throw AudioError(
                    .truncated,
                    path: path,
                    reason:
                        "the file decodes to \(sourceFramesRead) frames, fewer than the \(expectedSourceFrames) measured before rendering"
                )
            }
            try resampler?.flush(appendingTo: &pending)
            let have = emitted + Int64(pendingCount / outputChannels)
            if have < outputFrames {
                pending.append(contentsOf: repeatElement(0, count: Int(outputFrames - have) * outputChannels))
            }
            finished = true
            trimToOutputLength()
            let lastFrame = pending.count / outputChannels - 1
            fadedOut =
                fadeFrames > 0 && pendingCount > 0
                && Self.edgeIsLoud(pending, frame: lastFrame, channels: outputChannels)
            return
        }
        // Same channel count: no conversion copy.
        let channelsMatch = source.channelCount.count == outputChannels
        if !channelsMatch {
            ChannelMixer.convert(
                decoded,
                frames: frames,
                from: source.channelCount.count,
                to: outputChannels,
                into: &converted
            )
        }
        if let resampler {
            try resampler.process(channelsMatch ? decoded : converted, frames: frames, appendingTo: &pending)
        } else if channelsMatch {
            pending.append(contentsOf: decoded[0..<(frames * outputChannels)])
        } else {
            pending.append(contentsOf: converted[0..<(frames * outputChannels)])
        }
        trimToOutputLength()
    }

    private var pendingCount: Int { pending.count - pendingStart }

    /// Copies the `count` samples of `queue` from `start` to the front of `samples` (which holds
    /// them) and moves `start` past them, emptying the queue's front now and then: how a stage
    /// that makes more than it is asked for hands its samples out.
    package static func take(_ count: Int, from queue: inout [Float], at start: inout Int, into samples: inout [Float])
    {
        let first = start
        samples.withUnsafeMutableBufferPointer { target in
            queue.withUnsafeBufferPointer { source in
                _ = target.update(fromContentsOf: source[first..<(first + count)])
            }
        }
        start += count
        if start == queue.count {
            queue.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 1 << 18 {
            queue.removeFirst(start)
            start = 0
        }
    }

    private func trimToOutputLength() {
        let excess = emitted + Int64(pendingCount / outputChannels) - outputFrames
        if excess > 0 { pending.removeLast(Int(excess) * outputChannels) }
    }

    private func applyFades(to samples: inout [Float], frames: Int, startingAt start: Int64) {
        guard fadeFrames > 0 else { return }
        let end = start + Int64(frames)
        if fadedIn && start < fadeFrames {
            for position in start..<min(end, fadeFrames) {
                scale(&samples, frame: Int(position - start), by: Self.fadeGain(step: position, of: fadeFrames))
            }
        }
        let fadeOutStart = outputFrames - fadeFrames
        if fadedOut && end > fadeOutStart {
            for position in max(start, fadeOutStart)..<end {
                scale(
                    &samples,
                    frame: Int(position - start),
                    by: Self.fadeGain(step: outputFrames - 1 - position, of: fadeFrames)
                )
            }
        }
    }

    private func scale(_ samples: inout [Float], frame: Int, by gain: Float) {
        for channel in 0..<outputChannels {
            samples[frame * outputChannels + channel] *= gain
        }
    }

    /// The raised-cosine gain `½(1 − cos(π (step + 1) / (length + 1)))`: near 0 at step 0, near 1 at the last step.
    static func fadeGain(step: Int64, of length: Int64) -> Float {
        Float(0.5 * (1 - cos(Double.pi * Double(step + 1) / Double(length + 1))))
    }

    static func edgeIsLoud(_ samples: [Float], frame: Int, channels: Int) -> Bool {
        (0..<channels).contains { abs(samples[frame * channels + $0]) > edgeThreshold }
    }
}

/// Converts interleaved frames between channel counts.
///
/// Mono to many copies the channel; many to mono averages them; otherwise output channel `i`
/// is input channel `i`, with missing channels silent and extra channels dropped.
enum ChannelMixer {
    static func convert(
        _ input: [Float],
        frames: Int,
        from inputChannels: Int,
        to outputChannels: Int,
        into output: inout [Float]
    ) {
        let count = frames * outputChannels
        if output.count < count { output = [Float](repeating: 0, count: count) }
        input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                if inputChannels == outputChannels {
                    _ = target.update(fromContentsOf: source[0..<count])
                } else if outputChannels == 1 {
                    let scale = 1 / Float(inputChannels)
                    for frame in 0..<frames {
                        var sum: Float = 0
                        for channel in 0..<inputChannels { sum += source[frame * inputChannels + channel] }
                        target[frame] = sum * scale
                    }
                } else {
                    for frame in 0..<frames {
                        for channel in 0..<outputChannels {
                            let sourceChannel = inputChannels == 1 ? 0 : channel
                            target[frame * outputChannels + channel] =
                                sourceChannel < inputChannels ? source[frame * inputChannels + sourceChannel] : 0
                        }
                    }
                }
            }
        }
    }
}
