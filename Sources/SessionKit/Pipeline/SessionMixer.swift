import Foundation
internal import SessionAudio
internal import SessionTimeline

/// The finished sound of a mix's lanes, block by block: the narration lane at its gains, every
/// overlay mixed in at its gain and envelope, and, with loudness on, the true-peak limiter and the
/// meters that report what came out. Memory stays the same whatever the session's length.
final class SessionMixer {
    private let lanes: MixLanes
    private let channels: Int
    private var narration: NarrationLane
    private var overlays: OverlayLane
    private let limiter: TruePeakLimiter?
    private let loudnessMeters: SessionMeters?

    /// The limiter's release, seconds: short, because normalized TTS is peaky and a long release
    /// would hold speech under the target (on the fixture: 100 ms costs 0.5–1.0 LU, 50 ms less).
    static let limiterRelease = 0.05

    /// Dips after the limiter where an encoding of this mix decoded over the ceiling.
    private let dips: CeilingDips?
    /// Frames mixed so far (before the limiter's delay), and handed out (after it).
    private var mixed: Int64 = 0
    private var handedOut: Int64 = 0
    private var finished = false
    private var mix: [Float] = []

    /// The mixer of `lanes`; with `measuresSpeech` off, only the program is measured (a pass that
    /// finds the program's loudness and writes nothing). The limiter aims `ceilingHeadroom` dB
    /// under the lanes' ceiling (``LoudnessPlan/headroom``), and its output is lowered by `dips`
    /// (after the limiter, before the meters).
    init(_ lanes: MixLanes, measuresSpeech: Bool = true, ceilingHeadroom: Double = 0, dips: CeilingDips? = nil) {
        self.lanes = lanes
        self.dips = dips.flatMap { $0.isEmpty ? nil : $0 }
        channels = lanes.channelCount.count
        narration = NarrationLane(lanes)
        overlays = OverlayLane(lanes)
        if let ceiling = lanes.limiterCeiling {
            limiter = TruePeakLimiter(
                sampleRate: lanes.sampleRate,
                channelCount: lanes.channelCount,
                ceilingDecibels: ceiling - ceilingHeadroom,
                release: Self.limiterRelease
            )
            loudnessMeters = SessionMeters(lanes: lanes, measuresSpeech: measuresSpeech)
        } else {
            (limiter, loudnessMeters) = (nil, nil)
        }
    }

    /// What the output measured, once it is all read; `nil` with loudness off.
    var measurement: MixMeasurement? {
        guard let loudnessMeters, let limiter, let truePeak = loudnessMeters.truePeakDecibels else { return nil }
        return MixMeasurement(
            loudness: loudnessMeters.loudness,
            truePeak: truePeak,
            limiter: LimiterActivity(
                maxReductionDecibels: limiter.largestReductionDecibels,
                secondsOverOneDecibel: Double(limiter.framesReducedOverOneDecibel) / Double(lanes.sampleRate.hertz)
            ),
            leveler: lanes.levelsSpeech ? narration.leveling : nil
        )
    }

    /// Writes up to `maximumFrames` finished frames into `output` from index 0; returns 0 only at the end.
    func read(into output: inout [Float], maximumFrames: Int) throws(SessionError) -> Int {
        let total = lanes.totalFrames.count
        while true {
            if mixed < total {
                let frames = Int(min(Int64(maximumFrames), total - mixed))
                if mix.count < frames * channels { mix = [Float](repeating: 0, count: frames * channels) }
                try narration.fill(&mix, frames: frames, at: mixed)
                try overlays.add(into: &mix, frames: frames, at: mixed)
                mixed += Int64(frames)
                guard let limiter else {
                    swap(&output, &mix)
                    return frames
                }
                output.removeAll(keepingCapacity: true)
                let ready = limiter.process(mix, frames: frames, into: &output)
                if ready > 0 { return measured(&output, frames: ready) }
            } else if !finished, let limiter {
                finished = true
                output.removeAll(keepingCapacity: true)
                let ready = limiter.finish(into: &output)
                if ready > 0 { return measured(&output, frames: ready) }
            } else {
                return 0
            }
        }
    }

    private func measured(_ output: inout [Float], frames: Int) -> Int {
        dips?.apply(to: &output, frames: frames, channels: channels, at: handedOut)
        handedOut += Int64(frames)
        loudnessMeters?.add(output, frames: frames)
        return frames
    }
}

/// What a mix's output measured: its loudness, its true peak (dBTP), and the limiter's work.
struct MixMeasurement {
    var loudness: OutputLoudness
    var truePeak: Double
    var limiter: LimiterActivity
    /// What the speech leveler took off the clips; `nil` without leveling.
    var leveler: LimiterActivity?
}

extension SessionMixer: FrameSource {
    var sampleRate: SampleRate { lanes.sampleRate }
    var channelCount: ChannelCount { lanes.channelCount }
    var frameCount: Frames { lanes.totalFrames }

    /// The next block; one of digital silence is handed on as such, which a WAV file writes without
    /// converting and an MP3 file skips.
    func next(into buffer: inout [Float], maximumFrames: Int) throws(SessionError) -> FrameBlock {
        let frames = try read(into: &buffer, maximumFrames: maximumFrames)
        guard frames > 0 else { return .end }
        let silent = SampleBlock.isSilent(buffer, count: frames * channels)
        return silent ? .silence(Frames(Int64(frames))) : .samples(frames: frames)
    }
}

/// The narration lane as samples: each item's clip at its gain, silence between. Clips are read
/// ahead on another thread (``ClipReadAhead``): the next item's as soon as the one before is read.
struct NarrationLane {
    private let lanes: MixLanes
    private var itemIndex = 0
    private var stream: ClipReadAhead?
    /// The next item with audio after the current one, and its clip being read.
    private var upcoming: (index: Int, stream: ClipReadAhead)?
    private let readingQueue = DispatchQueue(label: "render-session.clips")
    private var scratch: [Float] = []
    private var builtinBell: [Float]?
    /// What the speech leveler took off the clips that ended so far.
    private(set) var leveling = LimiterActivity(maxReductionDecibels: 0, secondsOverOneDecibel: 0)

    init(_ lanes: MixLanes) {
        self.lanes = lanes
    }

    /// Writes the lane's frames `start ..< start + frames` into `buffer` from index 0.
    mutating func fill(_ buffer: inout [Float], frames: Int, at start: Int64) throws(SessionError) {
        let channels = lanes.channelCount.count
        var done = 0
        while done < frames {
            let frame = start + Int64(done)
            let item = lanes.items[itemIndex]
            let itemEnd = (item.startFrame + item.frameCount).count
            let wanted = Int(min(Int64(frames - done), itemEnd - frame))
            if let audio = item.audio, wanted > 0 {
                let stream = openStream()
                var got = 0
                while got < wanted {
                    let read: Int
                    do {
                        read = try stream.read(into: &scratch, maximumFrames: wanted - got)
                    } catch {
                        throw Self.failure(of: item, error)
                    }
                    guard read > 0 else {
                        throw SessionError(
                            .cannotWrite,
                            "Item \(item.index) (\(item.kind.rawValue)) ended at frame \(frame + Int64(got)), not at its planned end \(itemEnd)"
                        )
                    }
                    let offset = (done + got) * channels
                    SampleBlock.copy(
                        scratch,
                        count: read * channels,
                        gain: Float(audio.gain),
                        into: &buffer,
                        at: offset
                    )
                    got += read
                }
            } else {
                SampleBlock.zero(&buffer, from: done * channels, count: wanted * channels)
            }
            done += wanted
            if frame + Int64(wanted) == itemEnd {
                if let stream {
                    do throws(AudioError) {
                        if let activity = try stream.finish() { leveling = leveling.combined(with: activity) }
                    } catch {
                        throw Self.failure(of: item, error)
                    }
                }
                stream = nil
                if itemIndex + 1 < lanes.items.count { itemIndex += 1 }
            }
        }
    }

    /// A failure opening or reading `item`'s clip, naming it.
    private static func failure(of item: TimelineItem, _ error: AudioError) -> SessionError {
        SessionError(
            error.code == .cannotWrite ? .cannotWrite : .unusableClips,
            SessionRenderer.describe(item, error),
            underlyingError: error
        )
    }

    /// The current item's clip, being read since the item before it started (or from now), and
    /// the next item's started after it.
    private mutating func openStream() -> ClipReadAhead {
        if let stream { return stream }
        let opened: ClipReadAhead
        if let upcoming, upcoming.index == itemIndex {
            opened = upcoming.stream
        } else {
            opened = readAhead(itemIndex)
        }
        stream = opened
        upcoming = lanes.items[(itemIndex + 1)...].firstIndex { $0.audio != nil }.map { ($0, readAhead($0)) }
        return opened
    }

    /// Starts reading the clip of the item at `index` (one with audio) on the reading queue.
    private mutating func readAhead(_ index: Int) -> ClipReadAhead {
        let item = lanes.items[index]
        guard let audio = item.audio else { preconditionFailure("only items with audio are read") }
        if audio.source.path == nil && builtinBell == nil {
            builtinBell = BuiltinBell.samples(sampleRate: audio.source.sampleRate)
        }
        let (lanes, bell, frameCount) = (lanes, builtinBell, item.frameCount)
        return ClipReadAhead(channels: lanes.channelCount.count, queue: readingQueue) { () throws(AudioError) in
            var samples = bell
            return try NarrationLane.stream(of: audio, frameCount: frameCount, in: lanes, builtinBell: &samples)
        }
    }

    /// A stream of `audio`'s source at `lanes`'s rate and channel count, exactly `frameCount`
    /// frames (its item's length). The built-in bell is synthesized into `builtinBell` the first
    /// time and reused after.
    static func stream(
        of audio: ItemAudio,
        frameCount: Frames,
        in lanes: MixLanes,
        builtinBell: inout [Float]?
    ) throws(AudioError) -> ClipStream {
        let source = audio.source
        if let path = source.path {
            return try ClipStream(
                decoder: AudioFileDecoder(path: path, inside: source.libraryFolder),
                sourceFrames: source.frameCount,
                outputRate: lanes.sampleRate,
                outputChannels: lanes.channelCount,
                outputFrames: frameCount,
                levelingReference: source.levelingReference(on: lanes.levelsSpeech)
            )
        }
        let samples = builtinBell ?? BuiltinBell.samples(sampleRate: source.sampleRate)
        builtinBell = samples
        return try ClipStream(
            samples: samples,
            sampleRate: source.sampleRate,
            channelCount: .mono,
            outputRate: lanes.sampleRate,
            outputChannels: lanes.channelCount,
            outputFrames: frameCount
        )
    }

    /// The frame ranges where clips play (segments and interjections), which the bed ducks under.
    static func spokenRanges(of items: [TimelineItem]) -> [Range<Int64>] {
        items.filter { $0.kind == .segment || $0.kind == .interjection }.map {
            $0.startFrame.count..<($0.startFrame + $0.frameCount).count
        }
    }
}
