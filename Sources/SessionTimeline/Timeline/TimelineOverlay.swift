/// A sound that plays over the narration lane and may overlap anything: the ambience bed or a
/// cue such as a gong. The output is the narration lane mixed with every overlay.
public struct TimelineOverlay: Sendable, Equatable {
    /// The lane an overlay belongs to.
    public enum Lane: String, Sendable, Codable {
        /// The bed under the whole session.
        case ambience
        /// Short sounds that mark moments: gongs, bells.
        case cues
    }

    /// What an overlay is.
    public enum Kind: String, Sendable, Codable {
        /// An ambience bed, looped.
        case ambience
        /// A gong: the start gong or an interval gong.
        case gong
        /// A bell that overlaps narration.
        case bell
        /// A session's cue sound: a breath, a countdown beep, a change, an announcement.
        case cue
    }

    /// The overlay's position in ``Timeline/overlays``.
    public var index: Int
    /// The lane it plays in.
    public var lane: Lane
    /// What it is.
    public var kind: Kind
    /// The name it was chosen by: a library name or the file's path.
    public var name: String
    /// Where it starts in the output.
    public var startFrame: Frames
    /// How long it plays in the output; never past the output's end.
    public var frameCount: Frames
    /// The linear gain it is mixed at (loudness normalization included).
    public var gain: Double
    /// The sound's file, rate and length.
    public var source: AudioSourceInfo
    /// The bed's loop, fades and ducking; `nil` for a sound played once.
    public var bed: Bed?
    /// What a cue of a timer, breathing, workout or stretching session is; `nil` otherwise.
    public var cue: TimelineCue?

    /// How a bed is looped, faded and ducked.
    public struct Bed: Sendable, Equatable {
        /// The crossfade at each seam where the sound loops.
        public var loopCrossfadeFrames: Frames
        /// The fade-in from the bed's start.
        public var fadeInFrames: Frames
        /// The fade-out to the bed's end.
        public var fadeOutFrames: Frames
        /// How far the bed is lowered while narration plays, in dB.
        public var duckDecibels: Double
        /// The length of each ducking ramp; the ramp down ends where a clip starts.
        public var duckRampFrames: Frames

        /// The crossfade at a bed's loop seam: as preferred (never negative), but at most an
        /// eighth of the period, so that a short loop repeats at 7/8 of its own length or more
        /// (the loop repeats every `period − C` frames): clamped to half its length, a 3.06 s bed
        /// with the default 2 s crossfade repeated every 1.53 s; now every 2.68 s.
        package static func loopCrossfade(period: Frames, preferred: Frames) -> Frames {
            Frames(min(max(preferred.count, 0), max(0, period.count / 8)))
        }

        package init(
            loopCrossfadeFrames: Frames,
            fadeInFrames: Frames,
            fadeOutFrames: Frames,
            duckDecibels: Double,
            duckRampFrames: Frames
        ) {
            self.loopCrossfadeFrames = loopCrossfadeFrames
            self.fadeInFrames = fadeInFrames
            self.fadeOutFrames = fadeOutFrames
            self.duckDecibels = duckDecibels
            self.duckRampFrames = duckRampFrames
        }
    }

    package init(
        index: Int,
        lane: Lane,
        kind: Kind,
        name: String,
        startFrame: Frames,
        frameCount: Frames,
        gain: Double,
        source: AudioSourceInfo,
        bed: Bed? = nil,
        cue: TimelineCue? = nil
    ) {
        self.index = index
        self.lane = lane
        self.kind = kind
        self.name = name
        self.startFrame = startFrame
        self.frameCount = frameCount
        self.gain = gain
        self.source = source
        self.bed = bed
        self.cue = cue
    }

    /// The frame after its last.
    public var endFrame: Frames { startFrame + frameCount }
}

/// A sound that was asked for but not found, so it was left out of the mix.
public struct SkippedSound: Sendable, Equatable, Codable {
    /// The lane it would have played in (`narration` for the bell that ends the narration lane).
    public var lane: String
    /// What it would have been: `ambience`, `gong`, `bell`.
    public var kind: String
    /// The name it was asked for by.
    public var name: String
    /// Every path looked at, in order.
    public var lookedFor: [String]

    package init(lane: String, kind: String, name: String, lookedFor: [String]) {
        self.lane = lane
        self.kind = kind
        self.name = name
        self.lookedFor = lookedFor
    }

    /// As a timeline writes it: the name and each path looked at without this machine's folders
    /// (``AudioSourceInfo/written(_:inside:)``).
    package var written: SkippedSound {
        SkippedSound(
            lane: lane,
            kind: kind,
            name: AudioSourceInfo.writtenName(name),
            lookedFor: lookedFor.map { AudioSourceInfo.written($0) }
        )
    }
}

/// A stretch of the session under one narration phase (`opening`, `teachings`, …), for an app's
/// progress bar. Phases tile the output: the first starts at frame 0, each ends where the next
/// starts, the last ends at the output's end.
public struct TimelinePhase: Sendable, Equatable {
    /// The phase's name, from its segments.
    public var name: String
    /// Its first frame.
    public var startFrame: Frames
    /// The frame after its last: where the next phase starts.
    public var endFrame: Frames

    package init(name: String, startFrame: Frames, endFrame: Frames) {
        self.name = name
        self.startFrame = startFrame
        self.endFrame = endFrame
    }
}

/// What a loudness target applies to.
public enum LoudnessAnchor: String, Sendable, Equatable, Codable, CaseIterable {
    /// The voice: every clip is brought to the target, and the rest sits where it sits against it
    /// (the anchor element, in broadcast terms).
    case speech
    /// The whole file: its integrated loudness (EBU R128, gated) is brought to the target by one
    /// gain over everything, as a podcast or streaming platform measures it.
    case program
}

/// The loudness a session was rendered to, and what the rendered output measured: speech and
/// program loudness, loudness range, the true peak, and how hard the limiter worked.
public struct TimelineLoudness: Sendable, Equatable {
    /// The integrated-loudness target, LUFS.
    public var target: Double
    /// What ``target`` applies to.
    public var anchor: LoudnessAnchor
    /// The true-peak ceiling of the limiter, dBTP.
    public var ceiling: Double
    /// With the ``LoudnessAnchor/program`` anchor, the gain in dB every item and overlay got on top
    /// of its own to bring the program to the target (already in their gains); `nil` otherwise.
    public var programGain: Double?
    /// With the ``LoudnessAnchor/speech`` anchor, the gain in dB every item and overlay got on top
    /// of its own so that the speech, as limited and (in a lossy format) as decoded, measures the
    /// target (already in their gains); `nil` before rendering, otherwise, or with nothing to limit.
    public var speechGain: Double?
    /// The integrated loudness of the speech items' spans as heard in the mix, LUFS; `nil` before
    /// rendering (or without speech).
    public var speech: Double?
    /// The integrated loudness of the whole output, LUFS; `nil` before rendering (or for silence).
    public var program: Double?
    /// The output's loudness range (EBU Tech 3342), LU.
    public var range: Double?
    /// The output's largest short-term (3 s) loudness, LUFS, taken each second.
    public var maxShortTerm: Double?
    /// The output's true peak as measured while rendering, dBTP; `nil` before rendering.
    public var truePeak: Double?
    /// How much the limiter took off; `nil` before rendering.
    public var limiter: LimiterActivity?
    /// Whether speech clips went through the speech leveler before their gain (docs/sound.md).
    public var speechLeveling: Bool
    /// How much the speech leveler took off the clips, at most and for how long; `nil` before
    /// rendering and without leveling.
    public var leveler: LimiterActivity?
    /// How far under ``ceiling`` the limiter aimed, dB, and any gain after it: room for the peaks
    /// the file's codec adds (and a 48 kHz player's resampling), so that the ceiling holds on the
    /// decoded file; `nil` before rendering.
    public var codecHeadroom: Double?
    /// When the file decoded over ``ceiling`` all the same and was encoded again: the most any
    /// moment was lowered, dB (negative). Only the moments that went over are lowered, for
    /// ``ceilingCorrectedSeconds`` in all, so the loudness barely moves; where the moments could
    /// not be told (more than 100,000 of them), the whole file was made quieter by this much (in
    /// the gains, the anchor's gain and ``codecHeadroom``) and ``ceilingCorrectedSeconds`` is
    /// `nil`. `nil` when the first encoding held. In the timeline's JSON (`ceilingCorrectionDb`);
    /// `package` in Swift only while SessionTimeline's public face is at its budget
    /// (scripts/check-borders).
    package var ceilingCorrection: Double?
    /// How long the moments lowered by ``ceilingCorrection`` last in all, seconds (JSON
    /// `ceilingCorrectedSeconds`).
    package var ceilingCorrectedSeconds: Double?
    /// How many times the audio was encoded: 1, or 2 or 3 when a lossy file decoded over the
    /// ceiling all the same and was encoded again (JSON `encodings`); `nil` before rendering.
    package var encodings: Int?
    /// The speech loudness of each of ``Timeline/phases``, in their order (`nil` for a phase with
    /// no speech); empty before rendering.
    public var phaseSpeech: [Double?]

    package init(
        target: Double,
        ceiling: Double,
        anchor: LoudnessAnchor = .speech,
        programGain: Double? = nil,
        speechGain: Double? = nil,
        speech: Double? = nil,
        program: Double? = nil,
        range: Double? = nil,
        maxShortTerm: Double? = nil,
        truePeak: Double? = nil,
        limiter: LimiterActivity? = nil,
        speechLeveling: Bool = false,
        leveler: LimiterActivity? = nil,
        codecHeadroom: Double? = nil,
        ceilingCorrection: Double? = nil,
        ceilingCorrectedSeconds: Double? = nil,
        encodings: Int? = nil,
        phaseSpeech: [Double?] = []
    ) {
        self.target = target
        self.anchor = anchor
        self.ceiling = ceiling
        self.programGain = programGain
        self.speechGain = speechGain
        self.speech = speech
        self.program = program
        self.range = range
        self.maxShortTerm = maxShortTerm
        self.truePeak = truePeak
        self.limiter = limiter
        self.speechLeveling = speechLeveling
        self.leveler = leveler
        self.codecHeadroom = codecHeadroom
        self.ceilingCorrection = ceilingCorrection
        self.ceilingCorrectedSeconds = ceilingCorrectedSeconds
        self.encodings = encodings
        self.phaseSpeech = phaseSpeech
    }
}

extension TimelineLoudness: Codable {
    private enum CodingKeys: String, CodingKey {
        case target, anchor, ceiling
        case programGain = "programGainDb"
        case speechGain = "speechGainDb"
        case speech, program, range, maxShortTerm, truePeak, limiter, speechLeveling, leveler
        case codecHeadroom = "codecHeadroomDb"
        case ceilingCorrection = "ceilingCorrectionDb"
        case ceilingCorrectedSeconds, encodings
        /// Schema version 2's names of ``TimelineLoudness/ceiling`` and ``TimelineLoudness/program``, still read.
        case truePeakCeiling, integrated
    }

    /// The target and what was measured, each measurement to 0.01 dB as meters show it (the
    /// limiter's time to the millisecond); ``phaseSpeech`` goes with the timeline's phases.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(target, forKey: .target)
        try container.encode(anchor, forKey: .anchor)
        try container.encode(ceiling, forKey: .ceiling)
        try container.encodeIfPresent(programGain.map(Timeline.rounded), forKey: .programGain)
        try container.encodeIfPresent(speechGain.map(Timeline.rounded), forKey: .speechGain)
        try container.encode(speech.map(Timeline.rounded), forKey: .speech)
        try container.encode(program.map(Timeline.rounded), forKey: .program)
        try container.encode(range.map(Timeline.rounded), forKey: .range)
        try container.encode(maxShortTerm.map(Timeline.rounded), forKey: .maxShortTerm)
        try container.encode(truePeak.map(Timeline.rounded), forKey: .truePeak)
        try container.encode(limiter.map(\.rounded), forKey: .limiter)
        try container.encode(speechLeveling, forKey: .speechLeveling)
        if speechLeveling { try container.encode(leveler.map(\.rounded), forKey: .leveler) }
        try container.encodeIfPresent(codecHeadroom, forKey: .codecHeadroom)
        try container.encodeIfPresent(ceilingCorrection.map(Timeline.rounded), forKey: .ceilingCorrection)
        try container.encodeIfPresent(
            ceilingCorrectedSeconds.map { ($0 * 1_000).rounded() / 1_000 },
            forKey: .ceilingCorrectedSeconds
        )
        try container.encodeIfPresent(encodings, forKey: .encodings)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            target: try container.decode(Double.self, forKey: .target),
            ceiling: try container.decode(
                Double.self,
                forKey: container.contains(.truePeakCeiling) ? .truePeakCeiling : .ceiling
            ),
            anchor: try container.decodeIfPresent(LoudnessAnchor.self, forKey: .anchor) ?? .speech,
            programGain: try container.decodeIfPresent(Double.self, forKey: .programGain),
            speechGain: try container.decodeIfPresent(Double.self, forKey: .speechGain),
            speech: try container.decodeIfPresent(Double.self, forKey: .speech),
            program: try container.decodeIfPresent(
                Double.self,
                forKey: container.contains(.integrated) ? .integrated : .program
            ),
            range: try container.decodeIfPresent(Double.self, forKey: .range),
            maxShortTerm: try container.decodeIfPresent(Double.self, forKey: .maxShortTerm),
            truePeak: try container.decodeIfPresent(Double.self, forKey: .truePeak),
            limiter: try container.decodeIfPresent(LimiterActivity.self, forKey: .limiter),
            // Timelines before the leveler have no key: their clips were not leveled.
            speechLeveling: try container.decodeIfPresent(Bool.self, forKey: .speechLeveling) ?? false,
            leveler: try container.decodeIfPresent(LimiterActivity.self, forKey: .leveler),
            codecHeadroom: try container.decodeIfPresent(Double.self, forKey: .codecHeadroom),
            ceilingCorrection: try container.decodeIfPresent(Double.self, forKey: .ceilingCorrection),
            ceilingCorrectedSeconds: try container.decodeIfPresent(Double.self, forKey: .ceilingCorrectedSeconds),
            encodings: try container.decodeIfPresent(Int.self, forKey: .encodings)
        )
    }
}

/// How much a gain stage (the limiter, the speech leveler) took off a render's audio.
public struct LimiterActivity: Sendable, Equatable, Codable {
    /// The largest gain reduction, dB (0 when nothing was limited).
    public var maxReductionDecibels: Double
    /// How long the gain was lowered by more than 1 dB, seconds.
    public var secondsOverOneDecibel: Double

    package init(maxReductionDecibels: Double, secondsOverOneDecibel: Double) {
        self.maxReductionDecibels = maxReductionDecibels
        self.secondsOverOneDecibel = secondsOverOneDecibel
    }

    private enum CodingKeys: String, CodingKey {
        case maxReductionDecibels = "maxReductionDb"
        case secondsOverOneDecibel = "secondsOver1dB"
    }

    /// As the timeline writes it: the reduction to 0.01 dB, the time to the millisecond.
    var rounded: LimiterActivity {
        LimiterActivity(
            maxReductionDecibels: Timeline.rounded(maxReductionDecibels),
            secondsOverOneDecibel: (secondsOverOneDecibel * 1_000).rounded() / 1_000
        )
    }

    /// The activity of two stages' parts as one: the larger reduction, the times added.
    package func combined(with other: LimiterActivity) -> LimiterActivity {
        LimiterActivity(
            maxReductionDecibels: max(maxReductionDecibels, other.maxReductionDecibels),
            secondsOverOneDecibel: secondsOverOneDecibel + other.secondsOverOneDecibel
        )
    }
}

extension TimelineOverlay: Decodable {
    private enum CodingKeys: String, CodingKey {
        case index, lane, kind, name, startFrame, frameCount, startSeconds, durationSeconds, gain
        case loop, loopCrossfadeFrames, fadeInFrames, fadeOutFrames
        case duckDecibels = "duckDb"
        case duckRampFrames
    }

    func encode(to encoder: any Encoder, sampleRate: SampleRate) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(lane, forKey: .lane)
        try container.encode(kind, forKey: .kind)
        try container.encode(AudioSourceInfo.writtenName(name), forKey: .name)
        try container.encode(startFrame, forKey: .startFrame)
        try container.encode(frameCount, forKey: .frameCount)
        try container.encode(sampleRate.seconds(of: startFrame), forKey: .startSeconds)
        try container.encode(sampleRate.seconds(of: frameCount), forKey: .durationSeconds)
        try container.encode(gain, forKey: .gain)
        try container.encode(bed != nil, forKey: .loop)
        if let bed {
            try container.encode(bed.loopCrossfadeFrames, forKey: .loopCrossfadeFrames)
            try container.encode(bed.fadeInFrames, forKey: .fadeInFrames)
            try container.encode(bed.fadeOutFrames, forKey: .fadeOutFrames)
            try container.encode(bed.duckDecibels, forKey: .duckDecibels)
            try container.encode(bed.duckRampFrames, forKey: .duckRampFrames)
        }
        try cue?.encode(to: encoder)
        try source.encode(to: encoder)
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let source = try AudioSourceInfo(decodingIfPresentFrom: decoder) else {
            throw DecodingError.keyNotFound(
                PathKey("source"),
                DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "an overlay needs a source")
            )
        }
        self.init(
            index: try container.decode(Int.self, forKey: .index),
            lane: try container.decode(Lane.self, forKey: .lane),
            kind: try container.decode(Kind.self, forKey: .kind),
            name: try container.decode(String.self, forKey: .name),
            startFrame: try container.decode(Frames.self, forKey: .startFrame),
            frameCount: try container.decode(Frames.self, forKey: .frameCount),
            gain: try container.decode(Double.self, forKey: .gain),
            source: source,
            bed: try container.decode(Bool.self, forKey: .loop)
                ? Bed(
                    loopCrossfadeFrames: try container.decode(Frames.self, forKey: .loopCrossfadeFrames),
                    fadeInFrames: try container.decode(Frames.self, forKey: .fadeInFrames),
                    fadeOutFrames: try container.decode(Frames.self, forKey: .fadeOutFrames),
                    duckDecibels: try container.decode(Double.self, forKey: .duckDecibels),
                    duckRampFrames: try container.decode(Frames.self, forKey: .duckRampFrames)
                ) : nil,
            cue: try TimelineCue(decodingIfPresentFrom: decoder)
        )
    }
}
