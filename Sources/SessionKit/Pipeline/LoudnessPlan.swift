internal import SessionAudio
internal import SessionTimeline

/// How a render meets its loudness target and its true-peak ceiling in one encoding, whatever the
/// format: the gain that brings what the anchor measures to the target, and the room the limiter
/// leaves under the ceiling for what the codec adds.
///
/// The anchor's gain is found on the mix as the limiter lets it out, measured without being
/// written (``anchoring(_:headroom:aim:from:)``). In a lossy format, a ``CodecProbe`` then encodes
/// and decodes the mix's loudest few seconds: the decoded peaks say how much more room the limiter
/// needs, the decoded loudness how much the codec takes off, which the gain then makes up. The
/// whole file is encoded once (docs/sound.md, "One loudness in every format").
struct LoudnessPlan {
    /// How far under the ceiling the limiter aims, dB.
    private(set) var headroom: Double
    /// The timeline with the anchor's gain in its gains, and the room in its ``TimelineLoudness/codecHeadroom``.
    private(set) var anchored: Timeline

    /// The most mixes an anchoring measures: the program anchor's gain moves the limiter a lot
    /// (it lifts a quiet session by 15 dB), the speech anchor's by tenths of a dB, so its second
    /// pass's secant lands without a third. After a probe, one pass less.
    static func anchorPasses(_ anchor: LoudnessAnchor) -> Int { anchor == .program ? 5 : 2 }
    /// How close to its aim an anchoring stops, LU.
    static let anchorTolerance = 0.05
    /// The most the anchor raises or lowers a session, dB: beyond, the limiter would flatten
    /// speech (or the session would be inaudible); the measured loudness then tells how far from
    /// the target it landed.
    static let gainRange = -40.0...30.0
    /// How many times the probe is encoded at most: once, and again after the room or the gain it
    /// asked for changed the limiting.
    static let probeRounds = 2
    /// Room kept under the ceiling beyond the probe's loudest decoded peak, dB: the probe holds the
    /// session's loudest moments, not every peak a codec's noise can raise elsewhere.
    static let probeMargin = 0.3

    /// Plans `timeline`'s loudness for `encoder`, probing a lossy format's codec. A timeline
    /// planned so before (``RenderJob`` plans it, so that a timeline's gains are those a render
    /// plays) keeps its gain and room.
    init(_ timeline: Timeline, encoder: EncoderSettings) throws(SessionError) {
        headroom = timeline.loudness?.codecHeadroom ?? encoder.truePeakHeadroom(sampleRate: timeline.sampleRate)
        anchored = timeline
        guard let loudness = timeline.loudness, loudness.anchorGain == nil else { return }
        headroom = encoder.truePeakHeadroom(sampleRate: timeline.sampleRate)
        let probes = encoder.format.isLossy
        var moments: [[Float]]
        var slope: Double
        (anchored, moments, slope) = try Self.anchoring(
            timeline,
            headroom: headroom,
            aim: loudness.target,
            from: 0,
            capturing: probes
        )
        if probes, !moments.isEmpty {
            // What the probe found the codec does to loudness, LU; the gain makes it up.
            var codecChange = 0.0
            for _ in 0..<Self.probeRounds {
                let probe = try CodecProbe.run(
                    moments,
                    sampleRate: timeline.sampleRate,
                    channelCount: timeline.channelCount,
                    encoder: encoder
                )
                let over = probe.decodedPeak.isFinite ? probe.decodedPeak + Self.probeMargin - loudness.ceiling : 0
                guard over > 0 || abs(probe.loudnessChange - codecChange) > Self.anchorTolerance else { break }
                headroom += max(0, over)
                codecChange = probe.loudnessChange
                (anchored, moments, slope) = try Self.anchoring(
                    timeline,
                    headroom: headroom,
                    aim: loudness.target - codecChange,
                    from: anchored.loudness?.anchorGain ?? 0,
                    slope: slope,
                    passes: Self.anchorPasses(loudness.anchor) - 1,
                    capturing: true
                )
            }
        }
        anchored.loudness?.codecHeadroom = headroom
    }

    /// `timeline`, encoded with `headroom` dB of room under the ceiling, planned again for a file
    /// that decoded `overshoot` dB over the ceiling all the same (a peak the probe did not hold):
    /// the same mix, only quieter by the overshoot and ``probeMargin``. The fallback for a file
    /// whose moments over the ceiling are too many to tell apart; otherwise only those moments are
    /// lowered (``CeilingDips``, in ``SessionRenderer``), and the loudness stays. Every gain and the
    /// limiter's threshold come down by that much together (the room grows by as much), so the
    /// limiter limits no harder (in eSpeak NG's guided fixture as MP3 it took off 3.4 dB at most,
    /// against 5.6), and the codec meets the same passages, quieter; its peaks come down with them
    /// (there 1.6 dB for the 1.1 asked). The loudness comes down as much as the gains, recorded as
    /// ``TimelineLoudness/ceilingCorrection``; the summary and timeline say what decodes.
    ///
    /// More room at the same gain keeps more of the loudness but does not hold the ceiling: it
    /// limits harder, and LAME and Vorbis overshoot more on a mix limited harder (that MP3, given
    /// 1.1 dB more room, was still 0.26 dB over, and made quieter after that, 0.3 over).
    static func correcting(_ timeline: Timeline, headroom: Double, overshoot: Double) -> (Timeline, headroom: Double) {
        guard let gain = timeline.loudness?.anchorGain else { return (timeline, headroom) }
        let lowering = overshoot + probeMargin
        var quieter = timeline.scalingGains(byDecibels: -lowering)
        quieter.loudness?.anchorGain = gain - lowering
        quieter.loudness?.ceilingCorrection = (timeline.loudness?.ceilingCorrection ?? 0) - lowering
        return (quieter, headroom + lowering)
    }

    /// `timeline` (without an anchor's gain) with the one gain in every item's and overlay's gain
    /// that brings what its anchor measures, limited, to `aim`; and the loudest moments of the last
    /// mix measured. Without a limiter (loudness off) it is returned as it is.
    ///
    /// The mix is measured without being written, limiter included, and again with the gain
    /// found, until it lands within ``anchorTolerance`` of the aim, at most `passes` passes
    /// (``anchorPasses(_:)`` by default; the gain after the last is kept unmeasured), starting from
    /// the gain `start`. The limiter takes off more the more the gain raises, so a dB of gain
    /// raises the loudness by less than a dB: the gain follows `slope` (1, or the last one an
    /// anchoring of the same mix measured, returned), and from the second pass on the slope the
    /// last two passes measured (the secant method), which lands in two or three passes where the
    /// limiter works hard.
    static func anchoring(
        _ timeline: Timeline,
        headroom: Double,
        aim: Double,
        from start: Double,
        slope initialSlope: Double = 1,
        passes: Int? = nil,
        capturing: Bool = false
    ) throws(SessionError) -> (Timeline, moments: [[Float]], slope: Double) {
        let lanes = MixLanes(timeline)
        guard let loudness = timeline.loudness, lanes.limiterCeiling != nil else { return (timeline, [], 1) }
        var gain = min(max(start, gainRange.lowerBound), gainRange.upperBound)
        var anchored = gain == 0 ? timeline : timeline.scalingGains(byDecibels: gain)
        var moments: [[Float]] = []
        var last: (gain: Double, measured: Double)?
        var slope = initialSlope
        for _ in 0..<max(1, passes ?? anchorPasses(loudness.anchor)) {
            let measurement = try measure(anchored, headroom: headroom, capturing: capturing)
            moments = measurement.moments
            let measured = loudness.anchor == .program ? measurement.loudness.program : measurement.loudness.speech
            guard let measured, measured.isFinite else { break }
            let miss = aim - measured
            if abs(miss) < anchorTolerance { break }
            // How many dB of loudness a dB of gain gave, between 0.05 (a limiter flattening all)
            // and 1 (no limiting).
            if let last, gain != last.gain {
                slope = min(1, max(0.05, (measured - last.measured) / (gain - last.gain)))
            }
            last = (gain, measured)
            let next = min(max(gain + miss / slope, gainRange.lowerBound), gainRange.upperBound)
            if next == gain { break }
            gain = next
            anchored = timeline.scalingGains(byDecibels: gain)
        }
        anchored.loudness?.anchorGain = gain
        return (anchored, moments, slope)
    }

    /// `timeline`'s mix, limited `headroom` dB under the ceiling and measured, and with
    /// `capturing` its loudest moments.
    private static func measure(
        _ timeline: Timeline,
        headroom: Double,
        capturing: Bool
    ) throws(SessionError) -> (loudness: OutputLoudness, moments: [[Float]]) {
        let mixer = SessionMixer(
            MixLanes(timeline),
            measuresSpeech: timeline.loudness?.anchor == .speech,
            ceilingHeadroom: headroom
        )
        let moments =
            capturing ? LoudestMoments(sampleRate: timeline.sampleRate, channelCount: timeline.channelCount) : nil
        var buffer: [Float] = []
        while case let frames = try mixer.read(into: &buffer, maximumFrames: AudioOutput.blockFrames), frames > 0 {
            moments?.add(buffer, frames: frames)
        }
        let loudness =
            mixer.measurement?.loudness
            ?? OutputLoudness(program: nil, range: nil, maxShortTerm: nil, speech: nil, phaseSpeech: [])
        return (loudness, moments?.finish() ?? [])
    }
}

extension TimelineLoudness {
    /// The anchor's gain already in the timeline's gains: ``programGain`` or ``speechGain``.
    var anchorGain: Double? {
        get { anchor == .program ? programGain : speechGain }
        set {
            if anchor == .program { programGain = newValue } else { speechGain = newValue }
        }
    }
}
