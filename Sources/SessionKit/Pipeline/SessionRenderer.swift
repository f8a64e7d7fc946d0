package import Foundation
internal import SessionAudio
package import SessionTimeline

/// Writes a timeline's sound and its JSON, each appearing only when both are complete.
enum SessionRenderer {
    /// Renders `timeline` encoded as `encoder` says, tagged with `metadata`, to `audio` (if any) and
    /// its JSON to `timelineJSON` (if any).
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
        progress: (Frames) -> Void
    ) throws(SessionError) -> Timeline {
        var pending: [AtomicFile] = []
        var headroom = encoder.truePeakHeadroom(sampleRate: timeline.sampleRate)
        var trim = 0.0
        var timeline = try anchoringProgram(timeline, headroom: headroom)
        var anchoredHeadroom = headroom
        do {
            if let audio {
                for attempt in 1...Self.encodingAttempts {
                    if headroom != anchoredHeadroom, let gain = timeline.loudness?.programGain {
                        // More room under the ceiling takes loudness off: the program's gain is found again.
                        var unanchored = timeline.scalingGains(byDecibels: -gain)
                        unanchored.loudness?.programGain = nil
                        timeline = try anchoringProgram(unanchored, headroom: headroom)
                        anchoredHeadroom = headroom
                    }
                    let (written, measurement) = try writeAudio(
                        of: MixLanes(timeline),
                        encoder: encoder,
                        metadata: metadata,
                        to: audio,
                        ceilingHeadroom: headroom,
                        trimDecibels: trim,
                        progress: progress
                    )
                    timeline.encoding = written.encoding
                    guard let measurement, var loudness = timeline.loudness else {
                        if let file = written.pending { pending.append(file) }
                        break
                    }
                    loudness.record(measurement)
                    loudness.codecHeadroom = headroom + trim
                    // A lossy file's peaks are the decoder's: measured on the file as written.
                    if encoder.format.isLossy, let file = written.pending {
                        let decoded = try decodedPeak(of: file)
                        loudness.truePeak = decoded.isFinite ? decoded : nil
                        if decoded > loudness.ceiling, attempt < Self.encodingAttempts {
                            file.discard()
                            let overshoot = decoded - loudness.ceiling
                            if attempt < Self.limitingAttempts {
                                headroom += overshoot + Self.retryMargin * Double(attempt)
                            } else {
                                // Then the limiting stays and what comes out is lowered: a codec's
                                // overshoot grows with the limiting, not with a gain.
                                trim += overshoot + Self.trimMargin * Double(attempt - Self.limitingAttempts + 1)
                            }
                            continue
                        }
                    }
                    timeline.loudness = loudness
                    if let file = written.pending { pending.append(file) }
                    break
                }
            }
            if let timelineJSON, let file = try write(TimelineJSON.encode(timeline), to: timelineJSON) {
                pending.append(file)
            }
            for file in pending { try file.commit() }
        } catch {
            for file in pending { file.discard() }
            throw error
        }
        return timeline
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

    /// How many times a lossy file is encoded at most: once, and again while its decoded true peak
    /// is over the ceiling. Leveled speech sits near the limiter's ceiling more often, and a codec's
    /// overshoot moves with the limiting: five were not always enough for Piper's speech in Vorbis.
    static let encodingAttempts = 6
    /// How many tries aim the limiter (the first at the encoder's own room, two lower); the later
    /// ones keep its aim and lower what it lets out. On Vorbis at 22,050 Hz of one Piper session, the decoded overshoot over the limiter's aim
    /// grew with the limiting (1.3 dB at 0.8 dB of room, 1.8 at 1.6, 2.2 at 3.0), so that aiming
    /// lower chased it (the ceiling test failed at −0.6 dBTP after five tries); after a gain after
    /// the limiter it stayed within 1.2…1.7 dB whatever the gain.
    static let limitingAttempts = 3
    /// What a limiting retry adds to the overshoot it measured, dB, times the attempt (0.2 after the
    /// first encoding, 0.4 after the second).
    static let retryMargin = 0.2
    /// What a lowering retry adds to the overshoot it measured, dB, times its turn (0.3, 0.6, 0.9):
    /// the ceiling is held at the cost of that much loudness, which the summary and the timeline
    /// report as measured.
    static let trimMargin = 0.3

    /// The true peak of `file`'s temporary as decoded and played at 48 kHz.
    private static func decodedPeak(of file: AtomicFile) throws(SessionError) -> Double {
        do {
            return try PlaybackPeakMeter.measure(path: file.temporaryPath)
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
    /// default the encoder's ``EncoderSettings/truePeakHeadroom(sampleRate:)``), and its output is
    /// lowered by `trimDecibels` more.
    static func writeAudio(
        of lanes: MixLanes,
        encoder: EncoderSettings,
        metadata: AudioMetadata,
        to target: OutputTarget,
        ceilingHeadroom: Double? = nil,
        trimDecibels: Double = 0,
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
        var mixer = SessionMixer(
            lanes,
            ceilingHeadroom: ceilingHeadroom ?? encoder.truePeakHeadroom(sampleRate: lanes.sampleRate),
            trimDecibels: trimDecibels
        )
        let written = try AudioOutput.write(
            &mixer,
            to: target,
            encoder: encoder,
            metadata: metadata,
            progress: progress
        )
        return (written, mixer.measurement)
    }

    /// The most the program anchor raises or lowers a session, dB: beyond, the limiter would
    /// flatten speech (or the session would be inaudible); the measured program then tells how far
    /// from the target it landed.
    static let programGainRange = -40.0...30.0

    /// `timeline` with the program anchor's gain in every item's and overlay's gain: the one gain
    /// that brings the output's integrated loudness, limited, to the target; as it is for the
    /// speech anchor, or when the gain is already in.
    ///
    /// The mix is measured without being written, limiter included, and again with the gain
    /// found, until it lands within 0.05 LU of the target, at most ``programPasses`` passes. The
    /// limiter takes off more the more the gain raises, so a dB of gain raises the program by
    /// less than a dB: from the second pass on, the gain follows the slope the last two passes
    /// measured (the secant method), which lands in two or three passes where the limiter works hard.
    static func anchoringProgram(_ timeline: Timeline, encoder: EncoderSettings) throws(SessionError) -> Timeline {
        try anchoringProgram(timeline, headroom: encoder.truePeakHeadroom(sampleRate: timeline.sampleRate))
    }

    /// The same, with the limiter aiming `headroom` dB under the ceiling.
    static func anchoringProgram(_ timeline: Timeline, headroom: Double) throws(SessionError) -> Timeline {
        guard let loudness = timeline.loudness, loudness.anchor == .program, loudness.programGain == nil else {
            return timeline
        }
        var anchored = timeline
        var gain = 0.0
        var last: (gain: Double, program: Double)?
        for _ in 0..<programPasses {
            guard let program = try programLoudness(of: anchored, ceilingHeadroom: headroom) else { break }
            let miss = loudness.target - program
            if abs(miss) < 0.05 { break }
            // How many dB of program a dB of gain gave, between 0.05 (a limiter flattening all)
            // and 1 (no limiting).
            let slope = last.map { min(1, max(0.05, (program - $0.program) / (gain - $0.gain))) } ?? 1
            last = (gain, program)
            let next = min(max(gain + miss / slope, programGainRange.lowerBound), programGainRange.upperBound)
            if next == gain { break }
            gain = next
            anchored = timeline.scalingGains(byDecibels: gain)
        }
        anchored.loudness?.programGain = gain
        return anchored
    }

    /// The most mixes ``anchoringProgram(_:)`` measures.
    static let programPasses = 5

    /// The integrated loudness of `timeline`'s mix, limited; `nil` for silence.
    private static func programLoudness(
        of timeline: Timeline,
        ceilingHeadroom: Double
    ) throws(SessionError) -> Double? {
        let mixer = SessionMixer(MixLanes(timeline), measuresSpeech: false, ceilingHeadroom: ceilingHeadroom)
        var buffer: [Float] = []
        while try mixer.read(into: &buffer, maximumFrames: 16_384) > 0 {}
        return mixer.measurement?.loudness.program
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
        func finite(_ value: Double?) -> Double? { value.flatMap { $0.isFinite ? $0 : nil } }
        speech = finite(measurement.loudness.speech)
        program = finite(measurement.loudness.program)
        range = finite(measurement.loudness.range)
        maxShortTerm = finite(measurement.loudness.maxShortTerm)
        truePeak = finite(measurement.truePeak)
        limiter = measurement.limiter
        leveler = measurement.leveler
        phaseSpeech = measurement.loudness.phaseSpeech.map(finite)
    }
}
