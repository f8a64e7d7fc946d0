import Foundation

/// A sound chosen for a place in a session and measured: its name, its source, and the linear
/// gain it is asked to play at before loudness normalization.
package struct ChosenSound: Sendable, Equatable {
    /// The name it was chosen by: a library name or a path.
    package var name: String
    /// Its file, rate, length and loudness.
    package var source: AudioSourceInfo
    /// Its own linear gain (the library's or the settings'); normalization multiplies it.
    package var gain: Double

    package init(name: String, source: AudioSourceInfo, gain: Double = 1) {
        self.name = name
        self.source = source
        self.gain = gain
    }
}

/// A sound asked for: found and measured, or not found and so left out.
package enum SoundChoice: Sendable, Equatable {
    /// Found.
    case chosen(ChosenSound)
    /// Not found; the timeline records it as skipped.
    case skipped(SkippedSound)
}

/// Everything a session plays besides its clips, in frames: the lead-in, the bell, the gongs, the
/// bed and its envelope, and the loudness target. ``SessionPlanner`` in SessionKit makes one from
/// ``SoundSettings`` and the sounds it finds.
package struct SessionLayers: Sendable, Equatable {
    /// Frames before the script's time 0.
    package var leadIn: Frames
    /// Whether the start gong and the bed start at frame 0, over the lead-in, rather than at its end.
    package var soundsOverLeadIn: Bool
    /// Whether a guided timeline marks its silence phases (``Timeline/markingSilence()``).
    package var marksSilence: Bool
    /// Whether a clip that would start while a gong's strike sounds waits for it to pass
    /// (``gongStrikes(intervalStarts:sampleRate:)``); off, speech starts as planned.
    package var speechWaitsForGongs = true
    /// The output's channels: the loudness target applies to the file as a meter reads it, and a
    /// mono source copied to two channels reads 3 dB louder (``Loudness/layoutOffset(of:in:)``).
    package var outputChannels: ChannelCount = .mono
    /// The narration's loudness target in LUFS; `nil` is loudness off (every gain 1 but the sounds' own).
    package var loudnessTarget: Double?
    /// What the loudness target applies to.
    package var loudnessAnchor: LoudnessAnchor
    /// Whether speech clips go through the speech leveler (with loudness on).
    package var levelsSpeech: Bool
    /// The limiter's ceiling, dBTP.
    package var truePeakCeiling: Double
    /// The highest true peak a sound (bed, gong, bell, cue) may reach at its gain, dBTP, with
    /// loudness on: under where the limiter starts working, so that a gong keeps its strike and
    /// its peak is set by its gain (``Loudness/soundGain(_:as:in:)``); `nil` sets no limit.
    package var soundPeakLimit: Double?
    /// The bell that ends the narration lane; `nil` for none.
    package var bell: SoundChoice?
    /// The gong at frame 0.
    package var startGong: SoundChoice?
    /// The gong at every interval.
    package var intervalGong: SoundChoice?
    /// Seconds between interval gongs, from the script's time 0.
    package var intervalSeconds: Double?
    /// The ambience bed.
    package var ambience: SoundChoice?
    /// The bed's fade-in, fade-out and loop crossfade as asked; shortened to fit the output.
    package var ambienceFadeIn: Frames
    package var ambienceFadeOut: Frames
    package var loopCrossfade: Frames
    /// How far the bed is lowered under narration, dB, and the length of each ramp.
    package var duckDecibels: Double
    package var duckRamp: Frames

    package init(
        leadIn: Frames = .zero,
        soundsOverLeadIn: Bool = false,
        marksSilence: Bool = false,
        loudnessTarget: Double? = nil,
        loudnessAnchor: LoudnessAnchor = .speech,
        levelsSpeech: Bool = false,
        truePeakCeiling: Double = SoundDefaults.truePeak,
        bell: SoundChoice? = nil,
        startGong: SoundChoice? = nil,
        intervalGong: SoundChoice? = nil,
        intervalSeconds: Double? = nil,
        ambience: SoundChoice? = nil,
        ambienceFadeIn: Frames = .zero,
        ambienceFadeOut: Frames = .zero,
        loopCrossfade: Frames = .zero,
        duckDecibels: Double = 0,
        duckRamp: Frames = .zero
    ) {
        self.leadIn = leadIn
        self.soundsOverLeadIn = soundsOverLeadIn
        self.marksSilence = marksSilence
        self.loudnessTarget = loudnessTarget
        self.loudnessAnchor = loudnessAnchor
        self.levelsSpeech = levelsSpeech && loudnessTarget != nil
        self.truePeakCeiling = truePeakCeiling
        self.bell = bell
        self.startGong = startGong
        self.intervalGong = intervalGong
        self.intervalSeconds = intervalSeconds
        self.ambience = ambience
        self.ambienceFadeIn = ambienceFadeIn
        self.ambienceFadeOut = ambienceFadeOut
        self.loopCrossfade = loopCrossfade
        self.duckDecibels = duckDecibels
        self.duckRamp = duckRamp
    }
}

extension SessionLayers {
    /// Where the start gong and the bed begin: the lead-in's end, or frame 0 over it.
    package var soundsStart: Frames { soundsOverLeadIn ? .zero : leadIn }

    /// The spans in which no clip may start, in frames at `sampleRate`, in time order: from each
    /// gong's start (the start gong at ``soundsStart``, the interval gong at each of
    /// `intervalStarts`) to the end of its strike, until it has fallen 10 dB under its loudest
    /// 100 ms (``AudioSourceInfo/strikeFrames``). The seed apps ring, then speak: a word that
    /// starts on the strike is masked by it, and the limiter works hardest there. Empty when
    /// speech may start over gongs, or a gong's strike was not measured (loudness off).
    package func gongStrikes(intervalStarts: [Frames], sampleRate: SampleRate) -> [Range<Frames>] {
        guard speechWaitsForGongs else { return [] }
        func strikes(of choice: SoundChoice?, at starts: [Frames]) -> [Range<Frames>] {
            guard case .chosen(let gong)? = choice, let strike = gong.source.strikeFrames, strike > .zero else {
                return []
            }
            let length = sampleRate.frames(converting: strike, from: gong.source.sampleRate)
            return starts.map { $0..<$0 + length }
        }
        let all = strikes(of: startGong, at: [soundsStart]) + strikes(of: intervalGong, at: intervalStarts)
        return all.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Where the session's second `seconds` is in the output at `sampleRate`: after the lead-in.
    /// Every planned time goes through here, so seconds become frames in one place.
    package func frame(atSeconds seconds: Double, sampleRate: SampleRate) -> Frames {
        guard let frames = sampleRate.frames(atSeconds: seconds) else {
            preconditionFailure("a validated session's time \(seconds) s must convert to frames")
        }
        return leadIn + frames
    }

    /// Interval gongs' seconds: `start + k × interval` for k = 1, 2, … while before `end`, each a
    /// product, never a running sum.
    static func intervals(from start: Double, every interval: Double, before end: Double) -> [Double] {
        var seconds: [Double] = []
        var multiple = 1.0
        while start + multiple * interval < end {
            seconds.append(start + multiple * interval)
            multiple += 1
        }
        return seconds
    }
}

/// Loudness arithmetic in decibels.
package enum Loudness {
    /// The most a quiet source is raised, dB: more would lift its noise floor into the mix.
    package static let maximumBoostDecibels = 20.0

    /// How much louder a meter reads `source` once it plays in the output's `channels` than it
    /// measured on its own, dB: BS.1770 sums the channels' weighted energies, so a mono source
    /// copied to left and right reads 10 log10 2 = 3.01 dB louder, to the five channels that carry
    /// it in 5.1 (L, R, C at 1, the surrounds at 1.41) 10 log10 5.82, and a source with as many
    /// channels as the output the same. A source of several channels taken to fewer keeps the
    /// channels both have (the rest dropped, or averaged to mono): counted as if each of its
    /// channels were equally loud, and for mono as if they were alike, as a voice's are.
    package static func layoutOffset(of source: AudioSourceInfo, in channels: ChannelCount) -> Double {
        let sourceChannels = source.channelCount.count
        let outputChannels = channels.count
        guard sourceChannels != outputChannels else { return 0 }
        func weights(_ count: Int) -> Double {
            let map: [Double] = [1, 1, 1, 0, 1.41, 1.41]
            return (0..<count).reduce(0) { $0 + ($1 < map.count ? map[$1] : 0) }
        }
        if sourceChannels == 1 { return 10 * log10(weights(outputChannels)) }
        if outputChannels == 1 { return -10 * log10(weights(sourceChannels)) }
        return 10 * log10(weights(min(sourceChannels, outputChannels)) / weights(sourceChannels))
    }

    /// The linear gain that brings a source measured at `measured` LUFS to `target`: 1 when either
    /// is `nil` (loudness off, or a source too short or quiet to measure), the boost capped at
    /// ``maximumBoostDecibels``.
    package static func normalizingGain(measured: Double?, target: Double?) -> Double {
        guard let measured, let target else { return 1 }
        return linear(decibels: min(target - measured, maximumBoostDecibels))
    }

    /// The linear gain that brings the speech clip `source` to the loudness target: from its
    /// loudness through the speech leveler when `layers` level speech and it was measured so.
    package static func speechGain(_ source: AudioSourceInfo, in layers: SessionLayers) -> Double {
        let measured = source.levelingReference(in: layers) == nil ? source.loudness : source.leveledLoudness
        return normalizingGain(
            measured: measured.map { $0 + layoutOffset(of: source, in: layers.outputChannels) },
            target: layers.loudnessTarget
        )
    }

    /// `10^(dB/20)`.
    package static func linear(decibels: Double) -> Double {
        pow(10, decibels / 20)
    }

    /// Where a sound of `kind` puts its loudest 400 ms against the loudness target, LU; `nil` for a
    /// bed, whose integrated loudness is leveled (its gain then sets how far under the voice).
    ///
    /// A gong, a bell or a cue is leveled by its loudest 400 ms, not its integrated loudness:
    /// a 150 ms beep has no integrated loudness at all (it kept its raw level, 11 dB over the
    /// voice), and a bowl's long ring sets its integrated loudness far under its strike (which
    /// stood 4 LU over the first word). Speech's own loudest 400 ms lie some 3 to 5 LU over its
    /// integrated loudness, so a cue at the target is as loud as the voice's average and under its
    /// stressed syllables; a gong or bell 2 LU under it rings clearly without covering a word.
    package static func loudestOffset(of kind: TimelineOverlay.Kind) -> Double? {
        switch kind {
        case .ambience: nil
        case .cue: 0
        case .gong, .bell: -2
        }
    }

    /// The linear gain `sound`, played as `kind`, plays at in a mix with `layers`: its own gain
    /// times the gain that levels it (its loudest 400 ms to the target plus ``loudestOffset(of:)``,
    /// or a bed's integrated loudness to the target), lowered where that would put its true peak
    /// over ``SessionLayers/soundPeakLimit``: a gong's strike is set by its gain, not by the limiter.
    package static func soundGain(
        _ sound: ChosenSound,
        as kind: TimelineOverlay.Kind,
        in layers: SessionLayers
    ) -> Double {
        let layout = layoutOffset(of: sound.source, in: layers.outputChannels)
        let leveling =
            if let offset = loudestOffset(of: kind), let loudest = sound.source.loudestMomentary {
                normalizingGain(measured: loudest + layout, target: layers.loudnessTarget.map { $0 + offset })
            } else {
                normalizingGain(measured: sound.source.loudness.map { $0 + layout }, target: layers.loudnessTarget)
            }
        let gain = sound.gain * leveling
        guard let limit = layers.soundPeakLimit, let peak = sound.source.truePeak else { return gain }
        return min(gain, linear(decibels: limit - peak))
    }
}

extension AudioSourceInfo {
    /// The loudness the speech leveler takes this speech clip's thresholds from (its own, LUFS),
    /// when the clip is leveled: speech leveling on and the clip measured through the leveler.
    package func levelingReference(in layers: SessionLayers) -> Double? {
        levelingReference(on: layers.levelsSpeech)
    }

    /// The same, with leveling `on` or off as a timeline records it.
    package func levelingReference(on: Bool) -> Double? {
        on && leveledLoudness != nil ? loudness : nil
    }
}
