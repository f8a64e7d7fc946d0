package import SessionTimeline

/// A built-in bed made for as long as a session plays it, so that it never repeats.
///
/// A bed looped from a file repeats sample for sample every period: the built-in beds' 24 s
/// files did (the forest replayed the same ten bird calls 27 times in ten minutes). A
/// synthesized bed need not. Its texture (the rain, the drone, the forest's wind and stream) is
/// the bed's 24 s synthesis without fades, played as seeded segments of 4 to 10 s (the drone's 8
/// to 16 s) from seeded places in it, each joined to the next by an equal-power crossfade of 1 s
/// (the drone's 3 s); the forest's birds sing live, each call one of 32 songs at a seeded time
/// and distance, so the forest never comes round again as a whole. Its autocorrelation has no
/// peak over 0.5 at any lag under 60 s (``SynthesizedBedTests``). It costs one synthesis of the
/// 24 s texture per process (0.16 s for rain, 0.3 s for the drone, 0.45 s for the forest with
/// its songs, in a release build) and a copy per frame, whatever the session's length.
///
/// The bed starts with the file's 0.5 s fade-in and is scaled as the file is: its first 24 s,
/// ended with the file's fade-out, are the library's file (``SynthesizedSound/samples()``),
/// whose loudness the session measures; the rest continues at that scale for ever.
///
/// Mono at 44,100 Hz; `frameLimit` frames, then the end (a ``FrameSource`` for ``ClipStream``,
/// which converts it to the output's rate and channels).
final class SynthesizedBed: FrameSource {
    let sampleRate = SynthesizedSound.sampleRate
    let channelCount = ChannelCount.mono

    /// The bed's texture and the scale that levels it, made once per process.
    private struct Made {
        let texture: [Double]
        let scale: Double
    }

    private static let made = Locked([SynthesizedSound: Made]())

    /// A segment of the texture: where it starts in it, how long it plays (its last
    /// ``fadeFrames`` crossfaded into the next), and how far it has played.
    private struct Segment {
        var start: Int
        var length: Int
        var position: Int
    }

    private let texture: [Double]
    private let scale: Double
    private let frameLimit: Int
    private let fadeFrames: Int
    private let segmentFrames: ClosedRange<Int>
    private let fadeIn: [Double]
    private var noise: Noise
    private var current: Segment
    private var next: Segment
    private var birds: Birds?
    private var produced = 0
    private var block: [Double] = []

    /// The bed `sound` (rain, drone or forest), `frameLimit` frames long, at the library file's scale.
    convenience init(_ sound: SynthesizedSound, frameLimit: Int) {
        let made = Self.made(sound)
        self.init(sound, texture: made.texture, scale: made.scale, frameLimit: frameLimit, birdsEndBefore: nil)
    }

    private init(
        _ sound: SynthesizedSound,
        texture: [Double],
        scale: Double,
        frameLimit: Int,
        birdsEndBefore: Int?
    ) {
        precondition([.rain, .drone, .forest].contains(sound), "\(sound) is not a synthesized bed")
        let rate = Int(sampleRate.hertz)
        self.texture = texture
        self.scale = scale
        self.frameLimit = frameLimit
        let isDrone = sound == .drone
        fadeFrames = (isDrone ? 3 : 1) * rate
        segmentFrames = isDrone ? (8 * rate)...(16 * rate) : (4 * rate)...(10 * rate)
        let fade = fadeFrames
        fadeIn = (0..<fade).map { PortableMath.sin(PortableMath.halfPi * (Double($0) + 0.5) / Double(fade)) }
        noise = Noise(
            seed: sound == .rain ? 0x5241_494E_5345_4753 : isDrone ? 0x4452_4F4E_5345_4753 : 0x464F_5245_5345_4753
        )
        current = Segment(start: 0, length: 0, position: 0)
        next = current
        current = drawSegment(first: true)
        next = drawSegment(first: false)
        birds = sound == .forest ? Birds(endBefore: birdsEndBefore) : nil
    }

    /// The bed's texture and scale, synthesized on first use in a process.
    private static func made(_ sound: SynthesizedSound) -> Made {
        if let made = made.withLock({ $0[sound] }) { return made }
        let texture: [Double]
        let count = Int(sound.frameCount.count)
        switch sound {
        case .rain: texture = Rain.samples(count: count)
        case .drone: texture = Drone.samples(count: count)
        default: texture = Forest.samples(count: count)
        }
        // The file's first 24 s at scale 1, faded out as the file is: its peak sets the scale.
        var first = rawSamples(sound, texture: texture, count: count)
        Envelope.release(&first, seconds: SynthesizedSound.bedFadeSeconds)
        var peak = 0.0
        for sample in first { peak = max(peak, abs(sample)) }
        let made = Made(texture: texture, scale: PortableMath.gain(decibels: SynthesizedSound.peakDecibels) / peak)
        Self.made.withLock { $0[sound] = made }
        return made
    }

    /// The library file's samples before normalization: the bed's first `count` frames at scale 1,
    /// no bird within 1 s of the end; the caller fades them out.
    static func fileSamples(_ sound: SynthesizedSound) -> [Double] {
        let made = made(sound)
        return rawSamples(sound, texture: made.texture, count: Int(sound.frameCount.count))
    }

    private static func rawSamples(_ sound: SynthesizedSound, texture: [Double], count: Int) -> [Double] {
        let bed = SynthesizedBed(
            sound,
            texture: texture,
            scale: 1,
            frameLimit: count,
            birdsEndBefore: count - Int(SynthesizedSound.sampleRate.hertz)
        )
        var samples = [Double](repeating: 0, count: count)
        bed.generate(into: &samples, frames: count)
        return samples
    }

    func read(into samples: inout [Float], maximumFrames: Int) -> Int {
        let frames = min(maximumFrames, frameLimit - produced)
        guard frames > 0 else { return 0 }
        if samples.count < frames { samples = [Float](repeating: 0, count: frames) }
        if block.count < frames { block = [Double](repeating: 0, count: frames) }
        generate(into: &block, frames: frames)
        for index in 0..<frames { samples[index] = Float(block[index] * scale) }
        return frames
    }

    /// The next `frames` frames at scale 1, from index 0 of `output`.
    ///
    /// A segment is copied in runs: alone up to its crossfade, then crossfaded with the next up to
    /// its end (a loop per frame that asked which it was in cost a seventh of a layered render).
    private func generate(into output: inout [Double], frames: Int) {
        texture.withUnsafeBufferPointer { texture in
            fadeIn.withUnsafeBufferPointer { fade in
                output.withUnsafeMutableBufferPointer { output in
                    var index = 0
                    while index < frames {
                        let crossfadeStart = current.length - fadeFrames
                        let source = current.start + current.position
                        if current.position < crossfadeStart {
                            let run = min(frames - index, crossfadeStart - current.position)
                            for offset in 0..<run { output[index + offset] = texture[source + offset] }
                            index += run
                            current.position += run
                        } else {
                            let run = min(frames - index, current.length - current.position)
                            let overlap = current.position - crossfadeStart
                            for offset in 0..<run {
                                let into = overlap + offset
                                output[index + offset] =
                                    texture[source + offset] * fade[fadeFrames - 1 - into]
                                    + texture[next.start + into] * fade[into]
                            }
                            index += run
                            current.position += run
                        }
                        if current.position == current.length {
                            // The next segment has played its first `fadeFrames` inside the crossfade.
                            current = Segment(start: next.start, length: next.length, position: fadeFrames)
                            next = drawSegment(first: false)
                        }
                    }
                }
            }
        }
        // The bed's own fade-in, over its first half second.
        let fadeInFrames = Int(SynthesizedSound.bedFadeSeconds * Double(sampleRate.hertz))
        for index in 0..<max(0, min(frames, fadeInFrames - produced)) {
            output[index] *= Envelope.rise(produced + index, of: fadeInFrames)
        }
        produced += frames
        birds?.add(into: &output, frames: frames)
    }

    /// A seeded segment: its length within ``segmentFrames``, its start anywhere it fits; the
    /// very first starts at the texture's start.
    private func drawSegment(first: Bool) -> Segment {
        let (lengthDraw, startDraw) = (noise.unit(), noise.unit())
        let length = segmentFrames.lowerBound + Int(lengthDraw * Double(segmentFrames.count - 1))
        let start = first ? 0 : Int(startDraw * Double(texture.count - length))
        return Segment(start: start, length: length, position: 0)
    }
}

/// The forest's birds, call after call, for as long as the bed plays: from 1 s on, 0.8 to 4.4 s
/// from one call's start to the next's, each one of ``songs`` at a seeded distance (0 to −14 dB),
/// softened above 9 kHz.
///
/// A bird repeats its song; a forest of them does not repeat as a whole. The 32 songs (each of
/// ``Forest``'s four kinds of call at eight seeded pitches, ±8 %, and lengths) are synthesized
/// once per process and drawn at seeded times and distances, so that an hour of forest costs
/// what its first minute does: synthesizing every call anew cost a second in ten minutes.
private struct Birds {
    private static let rate = Double(SynthesizedSound.sampleRate.hertz)

    /// Every song at level 1.
    private static let songs: [[Double]] = {
        var noise = Noise(seed: 0x534F_4E47)
        return (0..<32).map { index in
            let draw = (noise.unit(), noise.unit())
            let notes = Forest.call(kind: index % 4, pitch: 0.92 + 0.16 * draw.0, notes: 2 + Int(draw.1 * 3))
            let length = notes.map { $0.delay + $0.seconds }.max() ?? 0
            var samples = [Double](repeating: 0, count: Int(length * rate) + 1)
            for note in notes {
                Forest.add(note, at: Int(note.delay * rate), level: 1, into: &samples)
            }
            return samples
        }
    }()

    private var noise = Noise(seed: 0x4249_5244)
    private var soften = Biquad.lowPass(9_000, q: 0.5)
    /// No call may end at or after this frame (the library file's last second); `nil`: calls go on.
    private let endBefore: Int?
    /// The start of the next call, in seconds from the bed's start.
    private var nextStart = 1.0
    private var finished = false
    /// Calls sounding: their song, its level and the frame they start at.
    private var calls: [(song: Int, level: Double, start: Int)] = []
    /// The frame the next output block starts at.
    private var position = 0
    private var block: [Double] = []

    init(endBefore: Int?) {
        self.endBefore = endBefore
    }

    /// Adds the birds of the next `frames` frames into `output` from index 0.
    mutating func add(into output: inout [Double], frames: Int) {
        let end = position + frames
        let songs = Self.songs
        while !finished && Int(nextStart * Self.rate) < end {
            let draw = (noise.unit(), noise.unit(), noise.unit())
            let song = min(songs.count - 1, Int(draw.0 * Double(songs.count)))
            let start = Int(nextStart * Self.rate)
            if let endBefore, start + songs[song].count >= endBefore {
                finished = true
                break
            }
            calls.append((song, 0.45 * PortableMath.gain(decibels: -14 * draw.1), start))
            nextStart += 0.8 + 3.6 * draw.2
        }
        if block.count < frames { block = [Double](repeating: 0, count: frames) }
        for index in 0..<frames { block[index] = 0 }
        for call in calls {
            let samples = songs[call.song]
            let from = max(position, call.start)
            let to = min(end, call.start + samples.count)
            guard from < to else { continue }
            for frame in from..<to { block[frame - position] += samples[frame - call.start] * call.level }
        }
        calls.removeAll { $0.start + songs[$0.song].count <= end }
        for index in 0..<frames { output[index] += soften.process(block[index]) }
        position = end
    }
}

extension ClipStream {
    /// The built-in bed `sound` (rain, drone or forest) made for `frames` frames at `outputRate`
    /// and `outputChannels`: ``SynthesizedBed`` at 44,100 Hz, converted as a clip is, no edge
    /// fades (the bed fades in itself, and the session's envelope ends it).
    package static func synthesizedBed(
        _ sound: SynthesizedSound,
        frames: Frames,
        outputRate: SampleRate,
        outputChannels: ChannelCount
    ) throws(AudioError) -> ClipStream {
        let sourceFrames = SynthesizedSound.sampleRate.frames(converting: frames, from: outputRate)
        return try ClipStream(
            source: SynthesizedBed(sound, frameLimit: Int(sourceFrames.count)),
            path: nil,
            sourceFrames: sourceFrames,
            outputRate: outputRate,
            outputChannels: outputChannels,
            outputFrames: frames,
            edgeFades: false
        )
    }
}
