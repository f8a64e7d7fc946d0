package import Foundation
internal import SessionAudio
package import SessionTimeline

/// Writes a timeline's sound and its JSON, each appearing only when both are complete.
enum SessionRenderer {
    /// Renders `timeline` encoded as `encoder` says, tagged with `metadata`, to `audio` (if any),
    /// its JSON to `timelineJSON` (if any) and its captions to `captions` (if any).
    ///
    /// - Parameter progress: called after each block with the frames written so far.
    /// - Returns: the timeline with how the audio was encoded and, when loudness is on, its
    ///   measured loudness.
    /// - Throws: ``SessionError`` naming the clip, file and cause; no partial file is left.
    @discardableResult
    static func render(
        _ timeline: Timeline,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        audio: OutputTarget?,
        timelineJSON: OutputTarget?,
        captions: CaptionTargets? = nil,
        progress: (Frames) -> Void
    ) throws(SessionError) -> Timeline {
        var pending: [AtomicFile] = []
        var audioFile: AtomicFile?
        let plan = try LoudnessPlan(timeline, encoder: encoder)
        var (timeline, headroom) = (plan.anchored, plan.headroom)
        var dips = CeilingDips(sampleRate: timeline.sampleRate)
        // An MP3 or AAC file encoded again with a few moments lowered encodes only the spans those
        // moments lie in (SpanReuse). Where the temporary folder cannot hold a file with no name,
        // every encoding is whole.
        let spans = encoder.format.isLossy && timeline.loudness != nil ? try? SpanReuse() : nil
        do {
            if let audio {
                for encoding in 0...Self.correctiveEncodings {
                    let (written, measurement) = try writeAudio(
                        of: MixLanes(timeline),
                        encoder: encoder,
                        metadata: metadata,
                        to: audio,
                        ceilingHeadroom: headroom,
                        dips: dips,
                        spans: spans,
                        progress: progress
                    )
                    timeline.encoding = written.encoding
                    guard let measurement, var loudness = timeline.loudness else {
                        audioFile = written.pending
                        break
                    }
                    loudness.record(measurement)
                    loudness.codecHeadroom = headroom
                    // A lossy file's figures are the decoder's: measured on the file as written.
                    if encoder.format.isLossy, let file = written.pending {
                        let decoded = try decodedMeasurement(of: file, timeline: timeline)
                        loudness.record(decoded)
                        if let peak = loudness.truePeak, peak > loudness.ceiling, encoding < Self.correctiveEncodings {
                            // The probe missed peaks of the whole file: encoded again with those
                            // moments lowered (docs/formats.md), or, where they are too many to
                            // tell, the whole mix made quieter (LoudnessPlan.correcting).
                            file.discard()
                            // (None noted with the peak over all the same is float rounding at the
                            // threshold: the same dips would give the same file.)
                            if let overs = decoded.overs, !overs.isEmpty {
                                let lowered = dips.lower(
                                    at: overs.map { ($0.frame, $0.peakDecibels - loudness.ceiling) },
                                    margin: LoudnessPlan.probeMargin
                                )
                                spans?.prepareNextEncoding(changedFrames: lowered)
                                timeline.loudness?.ceilingCorrection = dips.deepestDecibels
                                timeline.loudness?.ceilingCorrectedSeconds =
                                    Double(dips.loweredFrames) / Double(timeline.sampleRate.hertz)
                            } else {
                                (timeline, headroom) = LoudnessPlan.correcting(
                                    timeline,
                                    headroom: headroom,
                                    overshoot: peak - loudness.ceiling
                                )
                                spans?.forgetSpans()
                                timeline.loudness?.ceilingCorrectedSeconds = nil
                            }
                            continue
                        }
                    }
                    loudness.encodings = encoding + 1
                    timeline.loudness = loudness
                    audioFile = written.pending
                    break
                }
            }
            if let audioFile {
                pending.append(audioFile)
                timeline.audioFile = try Self.stamp(audioFile)
                if case .path(let path) = audio?.destination,
                    let stale = Self.staleSidecar(of: path, besides: timelineJSON)
                {
                    try Self.remove(staleSidecar: stale)
                }
            }
            if let timelineJSON, let file = try write(TimelineJSON.encode(timeline), to: timelineJSON) {
                pending.append(file)
            }
            if let captions {
                if let file = try write(captions.format.data(of: timeline), to: captions.captions) {
                    pending.append(file)
                }
                if let chapters = captions.chapters,
                    let file = try write(Data(Captions.chaptersWebVTT(timeline).utf8), to: chapters)
                {
                    pending.append(file)
                }
            }
            for file in pending { try file.commit() }
        } catch {
            for file in pending { file.discard() }
            throw error
        }
        return timeline
    }

    /// The size and SHA-256 of the audio written to `file`'s temporary, for its timeline.
    private static func stamp(_ file: AtomicFile) throws(SessionError) -> AudioFileStamp {
        switch BatchManifest.stamp(file.temporaryPath) {
        case .success(let stamp): return stamp
        case .failure(let unreadable):
            throw SessionError(
                .cannotWrite,
                "Cannot write \(file.destination): cannot read it back: \(unreadable.reason)"
            )
        }
    }

    /// The sidecar timeline beside `audio` (``SessionVerifier/sidecarTimelinePath(for:)``) when
    /// this render does not write it: it describes the file being replaced, and left in place
    /// `verify`, `show` and the page would take it for the new file's. `nil` when there is none
    /// (a FIFO or folder there is not a timeline, and is not touched).
    private static func staleSidecar(of audio: String, besides timeline: OutputTarget?) -> String? {
        let sidecar = SessionVerifier.sidecarTimelinePath(for: audio)
        if let timeline, OutputTarget.sameFile(timeline.destination, .path(sidecar)) { return nil }
        switch try? FileSystem.kindOfItem(at: sidecar) {
        case .regularFile, .symbolicLink: return sidecar
        default: return nil
        }
    }

    /// Removes a stale sidecar before anything is committed: should that fail, the render
    /// fails with the old audio and its timeline still together.
    private static func remove(staleSidecar path: String) throws(SessionError) {
        do {
            try FileSystem.removeFile(path)
        } catch {
            throw SessionError(
                .cannotWrite,
                "Cannot remove \(path), the timeline of the file this render replaces: \(error.reason(folder: (path as NSString).deletingLastPathComponent))",
                underlyingError: error
            )
        }
    }

    /// Writes `data` to `target`; returns the temporary still to be committed, if any.
    static func write(_ data: Data, to target: OutputTarget) throws(SessionError) -> AtomicFile? {
        let name = target.destination.description
        switch target.kind {
        case .replace(let path):
            return try AtomicFile.staged(data, for: path, named: name)
        case .standardOutput:
            try streamed { () throws(AudioError) in
                try DescriptorStream.standardOutput(name: name).write([UInt8](data))
            }
        case .stream(let path):
            try streamed { () throws(AudioError) in
                let stream = try DescriptorStream(opening: path, name: name)
                defer { stream.close() }
                try stream.write([UInt8](data))
            }
        }
        return nil
    }

    /// Runs `body`, turning its failure into a ``SessionError``.
    private static func streamed(_ body: () throws(AudioError) -> Void) throws(SessionError) {
        do {
            try body()
        } catch {
            throw SessionError(.cannotWrite, wrapping: error)
        }
    }

    /// How many times a lossy file is encoded again when its decoded true peak is over the
    /// ceiling all the same, each time the same mix made quieter by the overshoot
    /// (``LoudnessPlan/correcting(_:headroom:overshoot:)``). The codec probe predicts the room,
    /// so this is a safety net for the peaks it did not hold, not a loop; a codec is not exactly
    /// linear, so a second may be needed. The timeline counts the encodings
    /// (``TimelineLoudness/encodings``).
    static let correctiveEncodings = 2

    /// `file`'s temporary as decoded: its true peak as played at 48 kHz and its loudness, the
    /// speech where `timeline` places it.
    private static func decodedMeasurement(
        of file: AtomicFile,
        timeline: Timeline
    ) throws(SessionError) -> DecodedMeasurement {
        do {
            let decoder = try AudioFileDecoder(path: file.temporaryPath, opusThroughLibavcodec: true)
            let peak = try PlaybackPeakMeter(
                sampleRate: decoder.sampleRate,
                channelCount: decoder.channelCount,
                notingOver: timeline.loudness?.ceiling
            )
            let meters = SessionMeters(
                sampleRate: decoder.sampleRate,
                channelCount: decoder.channelCount,
                items: timeline.items,
                phaseStarts: timeline.phases.map(\.startFrame),
                placedAt: timeline.sampleRate
            )
            var buffer: [Float] = []
            while true {
                let frames = try decoder.read(into: &buffer, maximumFrames: AudioOutput.blockFrames)
                if frames == 0 { break }
                try peak.add(buffer, frames: frames)
                meters.add(buffer, frames: frames)
            }
            let truePeak = try peak.finish()
            // At the timeline's rate, which the decoder's is not always (Opus decodes at 48 kHz).
            let overs = peak.overs(countedAt: timeline.sampleRate)
            return DecodedMeasurement(loudness: meters.loudness, truePeak: truePeak, overs: overs)
        } catch {
            file.discard()
            throw SessionError(
                .cannotWrite,
                "Cannot measure \(file.destination) as decoded: \(error.reason)",
                underlyingError: error
            )
        }
    }

    /// Writes the sound of `lanes` to `target`; returns what was written and, with a limiter,
    /// what the output measured. The limiter aims `ceilingHeadroom` dB under the ceiling (by
    /// default the encoder's ``EncoderSettings/truePeakHeadroom(sampleRate:)``), `dips` lower the
    /// moments a codec took over it, and an MP3 or AAC writer copies the spans `spans` kept that
    /// did not change.
    static func writeAudio(
        of lanes: MixLanes,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        to target: OutputTarget,
        ceilingHeadroom: Double? = nil,
        dips: CeilingDips? = nil,
        spans: SpanReuse? = nil,
        progress: (Frames) -> Void = { _ in }
    ) throws(SessionError) -> (WrittenAudio, measurement: MixMeasurement?) {
        if lanes.isNarrationOnly {
            var items = NarrationItems(lanes)
            let written = try AudioOutput.write(
                &items,
                to: target,
                encoder: encoder,
                metadata: metadata,
                progress: progress
            )
            return (written, nil)
        }
        while true {
            var mixer = SessionMixer(
                lanes,
                ceilingHeadroom: ceilingHeadroom ?? encoder.truePeakHeadroom(sampleRate: lanes.sampleRate),
                dips: dips
            )
            do {
                let written = try AudioOutput.write(
                    &mixer,
                    to: target,
                    encoder: encoder,
                    metadata: metadata,
                    reusing: spans,
                    progress: progress
                )
                return (written, mixer.measurement)
            } catch {
                // A span no dip reached was fed other samples after all: nothing is copied, and
                // the file is encoded again whole (with nothing kept, no span can mismatch).
                guard let spans, spans.mismatch != nil else { throw error }
                spans.forgetSpans()
            }
        }
    }

    static func describe(_ item: TimelineItem, _ error: AudioError) -> String {
        if let clip = item.clip {
            return "Clip for \(quoted(clip.text)) (key \(clip.key)): \(error)"
        }
        if item.kind == .bell { return "Bell: \(error)" }
        return "\(error)"
    }
}

/// A narration lane item by item, unmixed: each clip's frames as its stream gives
/// them, each silence as one run. Only for a lane at unit gains with nothing over it.
struct NarrationItems: FrameSource {
    private let lanes: MixLanes
    private var itemIndex = 0
    /// Frames handed over so far.
    private var position = Frames.zero
    /// The current clip's stream, or whether the current silence has been handed over.
    private var stream: ClipStream?
    private var silenceDone = false
    private var builtinBell: [Float]?

    init(_ lanes: MixLanes) {
        self.lanes = lanes
    }

    var sampleRate: SampleRate { lanes.sampleRate }
    var channelCount: ChannelCount { lanes.channelCount }
    var frameCount: Frames { lanes.totalFrames }

    mutating func next(into buffer: inout [Float], maximumFrames: Int) throws(SessionError) -> FrameBlock {
        while itemIndex < lanes.items.count {
            let item = lanes.items[itemIndex]
            do throws(AudioError) {
                if let audio = item.audio {
                    if stream == nil {
                        stream = try NarrationLane.stream(
                            of: audio,
                            frameCount: item.frameCount,
                            in: lanes,
                            builtinBell: &builtinBell
                        )
                    }
                    let frames = try stream?.read(into: &buffer, maximumFrames: maximumFrames) ?? 0
                    if frames > 0 {
                        position += Frames(Int64(frames))
                        return .samples(frames: frames)
                    }
                } else if !silenceDone {
                    silenceDone = true
                    position += item.frameCount
                    return .silence(item.frameCount)
                }
            } catch {
                throw writeFailure(error)
            }
            let end = item.startFrame + item.frameCount
            guard position == end else {
                throw SessionError(
                    .cannotWrite,
                    "Item \(item.index) (\(item.kind.rawValue)) ended at frame \(position), not at its planned end \(end)"
                )
            }
            (itemIndex, stream, silenceDone) = (itemIndex + 1, nil, false)
        }
        return .end
    }

    /// A failure reading or writing the current item, naming its clip.
    func writeFailure(_ error: AudioError) -> SessionError {
        let item = lanes.items[min(itemIndex, lanes.items.count - 1)]
        return SessionError(
            error.code == .cannotWrite ? .cannotWrite : .unusableClips,
            SessionRenderer.describe(item, error),
            underlyingError: error
        )
    }
}

/// The timeline's JSON form: pretty-printed, keys sorted (so the same timeline is always the same
/// bytes), slashes unescaped, a final newline.
package enum TimelineJSON {
    package static func encode(_ timeline: Timeline) -> Data {
        CanonicalJSON.encode(timeline)
    }
}

/// Writes files of silence, the seed app's `SilenceGenerator`.
package enum SilenceFile {
    /// Writes `frameCount` frames of mono silence at `sampleRate` to `destination`, encoded as
    /// `encoder` says (16-bit WAV by default), which ``SessionPipeline/checkSettings()`` has checked
    /// for the rate.
    /// - Throws: ``SessionError``; nothing is left at a path on failure.
    package static func write(
        frameCount: Frames,
        sampleRate: SampleRate,
        to destination: OutputDestination,
        encoder: EncoderSettings = .wav,
        replaceExisting: Bool = true
    ) throws(SessionError) {
        let target = try OutputTarget.resolve(destination, replaceExisting: replaceExisting)
        var silence = SilenceFrames(frameCount: frameCount, sampleRate: sampleRate, channelCount: .mono)
        let written = try AudioOutput.write(&silence, to: target, encoder: encoder, metadata: AudioMetadata())
        try written.pending?.commit()
    }
}

extension TimelineLoudness {
    /// Takes what a render's output measured. Digital silence measures −∞: JSON has no such
    /// number, so it is recorded as unknown.
    mutating func record(_ measurement: MixMeasurement) {
        record(measurement.loudness, truePeak: measurement.truePeak)
        limiter = measurement.limiter
        leveler = measurement.leveler
    }

    /// Takes what the decoded file measured in place of what the mix measured before encoding;
    /// the limiter's and the leveler's work stay the mix's.
    mutating func record(_ decoded: DecodedMeasurement) {
        record(decoded.loudness, truePeak: decoded.truePeak)
    }

    private mutating func record(_ loudness: OutputLoudness, truePeak: Double) {
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        speech = finite(loudness.speech)
        program = finite(loudness.program)
        range = finite(loudness.range)
        maxShortTerm = finite(loudness.maxShortTerm)
        self.truePeak = finite(truePeak)
        phaseSpeech = loudness.phaseSpeech.map(finite)
    }
}

/// What a written file measured as decoded: its loudness, speech placed as the timeline places it,
/// and its true peak as a 48 kHz player meets it (dBTP).
struct DecodedMeasurement {
    var loudness: OutputLoudness
    var truePeak: Double
    /// Where the decoded file went over the ceiling, at the timeline's rate (see
    /// ``PlaybackPeakMeter/overs(countedAt:)``).
    var overs: [(frame: Int64, peakDecibels: Double)]?
}
