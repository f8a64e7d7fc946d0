package import SessionTimeline

/// A sound file looped without end and without a seam, at the output's rate and channel count.
///
/// One period, x, is the file converted as ``ClipStream`` converts it, `N` frames long
/// (`N = outputRate.frames(converting: sourceFrames, from: sourceRate)`), with no edge fades. With
/// a crossfade of `C` frames the output is
///
///     x[0..<C], then bodies for ever, each body x[C..<N−C] followed by the crossfade of
///     x[N−C..<N] (fading out) with x[0..<C] (fading in),
///
/// so every body after the first picks up at x[C], exactly where the faded-in x[0..<C] leaves
/// off, and every seam is continuous. The output repeats every `N − C` frames. The fades are
/// equal-power, `cos` and `sin` of `π/2 · (k + ½)/C` for `k` in `0..<C`, which keep the level of
/// sound whose end and start are unrelated (noise, rain, a drone of noise bands); they also sum
/// to at most √2, which a file whose end and start are one continuous tone would show as a swell.
///
/// Memory does not grow with time, nor past a bound with the file: a period of at most
/// ``cachedPeriodLimit`` samples (frames × channels, 4 MiB of floats) is decoded once and kept, so
/// a typical bed (a minute or two) costs one decode and one resampling for the whole
/// session; a longer file is decoded anew each period (a new ``ClipStream`` whose first `C` frames
/// are skipped), keeping only x[0..<C], the fade gains and one block.
package final class LoopStream {
    /// The most samples (frames × channels) of a period kept in memory rather than decoded again
    /// each time. Decoding and resampling a bed every period was 60% of a layered render.
    package static let cachedPeriodLimit = 1_048_576
    private static let blockFrames = 16_384

    /// The file being looped.
    package let path: String
    /// The folder a name found the file in, which it must lie inside each time it is opened.
    private let folder: String?
    /// The length of one period, `N`: the file's length at the output rate.
    package let periodFrames: Frames
    /// The crossfade at each seam, `C`: the one asked for, clamped by ``crossfadeFrames(periodFrames:preferred:)``.
    package let crossfade: Frames
    /// The output's channel count.
    package let outputChannels: ChannelCount

    private let sourceFrames: Frames
    private let outputRate: SampleRate
    private let channels: Int
    private let period: Int
    private let fade: Int
    /// x[0..<C], interleaved.
    private var head: [Float] = []
    /// The fade-in gains, `sin(π/2 · (k + ½)/C)`; the fade-out gain at `k` is the fade-in gain at `C − 1 − k`.
    private var fadeIn: [Float] = []
    /// The whole period, when it is at most ``cachedPeriodLimit`` frames.
    private var cachedPeriod: [Float]?
    private var stream: ClipStream?
    private var scratch: [Float] = []
    /// What the stream hands out in one read.
    private var block: [Float] = []
    /// The frame of the period that the next read from the period returns.
    private var position = 0
    /// How much of x[0..<C] the very start of the output has handed out.
    private var headEmitted = 0

    /// Loops the file at `path`, which measured `sourceFrames` frames, converted to `outputRate`
    /// and `outputChannels`, with seams crossfaded over `crossfade` frames (clamped so that a
    /// period holds two crossfades and a frame). `inside` is the folder a name found the file in
    /// (``AudioFileDecoder/init(path:inside:opusThroughLibavcodec:)``).
    package init(
        path: String,
        inside folder: String? = nil,
        sourceFrames: Frames,
        outputRate: SampleRate,
        outputChannels: ChannelCount,
        crossfade: Frames
    ) throws(AudioError) {
        let decoder = try AudioFileDecoder(path: path, inside: folder)
        let period = outputRate.frames(converting: sourceFrames, from: decoder.sampleRate)
        guard period > .zero else {
            throw AudioError(.noAudio, path: path, reason: "the file has no frames to loop")
        }
        self.path = path
        self.folder = folder
        self.sourceFrames = sourceFrames
        self.outputRate = outputRate
        self.outputChannels = outputChannels
        self.periodFrames = period
        self.crossfade = Self.crossfadeFrames(periodFrames: period, preferred: crossfade)
        // Below this line frame counts are plain integers: they index buffers.
        self.channels = outputChannels.count
        self.period = Int(period.count)
        self.fade = Int(self.crossfade.count)
        fadeIn = (0..<fade).map { step in
            Float(PortableMath.sin(PortableMath.halfPi * (Double(step) + 0.5) / Double(fade)))
        }
        stream = try ClipStream(
            decoder: decoder,
            sourceFrames: sourceFrames,
            outputRate: outputRate,
            outputChannels: outputChannels,
            outputFrames: period,
            edgeFades: false
        )
        if self.period * outputChannels.count <= Self.cachedPeriodLimit {
            var whole: [Float] = []
            try readFromStream(self.period, into: &whole)
            cachedPeriod = whole
            stream = nil
        }
        try readPeriod(fade, into: &head)
    }

    /// The crossfade to use for a period of `periodFrames`: `preferred`, clamped to
    /// `0…⌊(N − 1) / 2⌋` so that a period holds both ends' crossfades and at least one frame between.
    package static func crossfadeFrames(periodFrames: Frames, preferred: Frames) -> Frames {
        TimelineOverlay.Bed.loopCrossfade(period: periodFrames, preferred: preferred)
    }

    /// Writes exactly `maximumFrames` frames into `samples` from index 0, growing it if needed,
    /// and returns `maximumFrames`: the loop never ends.
    package func read(into samples: inout [Float], maximumFrames: Int) throws(AudioError) -> Int {
        let needed = maximumFrames * channels
        if samples.count < needed { samples = [Float](repeating: 0, count: needed) }
        var written = 0
        while written < maximumFrames {
            let room = maximumFrames - written
            if headEmitted < fade {
                // The very start: x[0..<C] as it is.
                let frames = min(room, fade - headEmitted)
                copy(head, from: headEmitted, frames: frames, into: &samples, at: written)
                headEmitted += frames
                written += frames
            } else if position < period - fade {
                let frames = min(room, period - fade - position, Self.blockFrames)
                try readPeriod(frames, into: &scratch)
                copy(scratch, from: 0, frames: frames, into: &samples, at: written)
                written += frames
            } else if position < period {
                // The seam: the period's end fading out over its start fading in.
                let seamStart = position - (period - fade)
                let frames = min(room, period - position, Self.blockFrames)
                try readPeriod(frames, into: &scratch)
                for frame in 0..<frames {
                    let step = seamStart + frame
                    let (gainIn, gainOut) = (fadeIn[step], fadeIn[fade - 1 - step])
                    for channel in 0..<channels {
                        samples[(written + frame) * channels + channel] =
                            scratch[frame * channels + channel] * gainOut + head[step * channels + channel] * gainIn
                    }
                }
                written += frames
            } else {
                try restartPeriod()
            }
        }
        return maximumFrames
    }

    /// The samples this stream keeps between reads; it does not grow once the first period is out.
    var retainedSampleCapacity: Int {
        head.capacity + fadeIn.capacity + scratch.capacity + block.capacity + (cachedPeriod?.capacity ?? 0)
    }

    /// Positions the period at x[C] again: for a kept period, by moving; otherwise by opening the
    /// file again and skipping its first `C` frames.
    private func restartPeriod() throws(AudioError) {
        position = 0
        if cachedPeriod == nil {
            let decoder = try AudioFileDecoder(path: path, inside: folder)
            stream = try ClipStream(
                decoder: decoder,
                sourceFrames: sourceFrames,
                outputRate: outputRate,
                outputChannels: outputChannels,
                outputFrames: periodFrames,
                edgeFades: false
            )
        }
        var skipped = 0
        while skipped < fade {
            let frames = min(fade - skipped, Self.blockFrames)
            try readPeriod(frames, into: &scratch)
            skipped += frames
        }
    }

    /// Reads the period's next `frames` frames into `buffer` from index 0.
    private func readPeriod(_ frames: Int, into buffer: inout [Float]) throws(AudioError) {
        if let cachedPeriod {
            if buffer.count < frames * channels { buffer = [Float](repeating: 0, count: frames * channels) }
            copy(cachedPeriod, from: position, frames: frames, into: &buffer, at: 0)
        } else {
            try readFromStream(frames, into: &buffer)
        }
        position += frames
    }

    /// Reads exactly `frames` frames from the stream into `buffer` from index 0.
    private func readFromStream(_ frames: Int, into buffer: inout [Float]) throws(AudioError) {
        guard let stream else { return }
        if buffer.count < frames * channels { buffer = [Float](repeating: 0, count: frames * channels) }
        var done = 0
        while done < frames {
            let got = try stream.read(into: &block, maximumFrames: frames - done)
            guard got > 0 else {
                throw AudioError(
                    .truncated,
                    path: path,
                    reason: "the loop's period ended after \(position + done) of its \(period) frames"
                )
            }
            copy(block, from: 0, frames: got, into: &buffer, at: done)
            done += got
        }
    }

    private func copy(
        _ source: [Float],
        from sourceFrame: Int,
        frames: Int,
        into target: inout [Float],
        at targetFrame: Int
    ) {
        let count = frames * channels
        let (from, to) = (sourceFrame * channels, targetFrame * channels)
        target.withUnsafeMutableBufferPointer { target in
            source.withUnsafeBufferPointer { source in
                _ = UnsafeMutableBufferPointer(rebasing: target[to..<(to + count)])
                    .update(fromContentsOf: source[from..<(from + count)])
            }
        }
    }
}
