/// How a session sounds besides its narration: the ambience bed, the gongs, the bell, a lead-in,
/// ducking and loudness.
///
/// Every field is optional. A script's `sound` block sets some, a command's options others, and
/// ``overriding(_:)`` lays one over the other (the command wins). What is still unset takes the
/// defaults in ``SoundDefaults`` when the session is planned. docs/sound.md describes each field.
public struct SoundSettings: Sendable, Equatable, Encodable {
    /// The loudness the session is brought to, or none.
    public enum Loudness: Sendable, Equatable, Encodable {
        /// No loudness processing: clips keep their sample values and no limiter runs.
        case off
        /// The ``loudnessAnchor`` is brought to this integrated loudness in LUFS, and the mix is limited.
        case target(Double)
        /// A published target, by name.
        case preset(LoudnessPreset)

        /// The ceiling a preset comes with, dBTP; `nil` for a number or off (the default ceiling).
        public var ceiling: Double? {
            if case .preset(let preset) = self { preset.ceiling } else { nil }
        }

        /// The target in LUFS as named: a preset's published (stereo) figure; `nil` when off. A
        /// render of a mono file brings a preset's mono figure (``LoudnessPreset/target``).
        public var lufs: Double? {
            switch self {
            case .off: nil
            case .target(let lufs): lufs
            case .preset(let preset): preset.target
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .off: try container.encode("off")
            case .target(let lufs): try container.encode(lufs)
            case .preset(let preset): try container.encode(preset.rawValue)
            }
        }
    }

    /// The ambience bed: a library name, or a file when the command line gives it (a script may not name a path).
    public var ambience: String?
    /// The bed's linear gain (seed 002 plays its beds at 0.15).
    public var ambienceGain: Double?
    /// How long the bed takes to fade in from the file's start.
    public var ambienceFadeInSeconds: Double?
    /// How long the bed takes to fade out at the file's end, under the bell.
    public var ambienceFadeOutSeconds: Double?
    /// The gong at frame 0: a library name, or a file when the command line gives it.
    public var startGong: String?
    /// The gong every ``intervalMinutes`` minutes.
    public var intervalGong: String?
    /// Minutes between interval gongs, counted from the script's time 0.
    public var intervalMinutes: Double?
    /// The closing bell: a library name, or a file when the command line gives it; unset is the built-in bell.
    public var bell: String?
    /// Seconds of silence before the script's time 0: the countdown; the start gong and the bed
    /// begin at its end (seed 002), unless ``soundsOverLeadIn``.
    public var leadInSeconds: Double?
    /// Whether the start gong and the bed begin at frame 0 and play over the lead-in, rather than
    /// at its end.
    public var soundsOverLeadIn: Bool?
    /// Whether speech may start while a gong's strike still sounds (within 10 dB of its loudest),
    /// as it is planned; by default it waits for the strike to pass (docs/sound.md).
    public var speechOverGongs: Bool?
    /// Whether a guided script's timeline marks a `silence` phase where a phase's speech has ended
    /// and only interjections come before the next phase (seed 000's Opening → Teachings → Silence
    /// → Closing); on unless set false.
    public var silencePhase: Bool?
    /// How far the bed is lowered while narration plays, in dB (0: not at all).
    public var duckDecibels: Double?
    /// The loudness target, or off.
    public var loudness: Loudness?
    /// What the loudness target applies to: the voice (the default) or the whole file.
    public var loudnessAnchor: LoudnessAnchor?
    /// The ceiling of the mix's true peak, in dBTP.
    public var truePeak: Double?
    /// Whether speech clips go through the speech leveler before they are brought to the target
    /// (on by default, with loudness on): off leaves their peaks to the limiter alone.
    public var speechLeveling: Bool?

    public init(
        ambience: String? = nil,
        ambienceGain: Double? = nil,
        ambienceFadeInSeconds: Double? = nil,
        ambienceFadeOutSeconds: Double? = nil,
        startGong: String? = nil,
        intervalGong: String? = nil,
        intervalMinutes: Double? = nil,
        bell: String? = nil,
        leadInSeconds: Double? = nil,
        duckDecibels: Double? = nil,
        loudness: Loudness? = nil,
        loudnessAnchor: LoudnessAnchor? = nil,
        truePeak: Double? = nil,
        speechLeveling: Bool? = nil,
        soundsOverLeadIn: Bool? = nil,
        silencePhase: Bool? = nil,
        speechOverGongs: Bool? = nil
    ) {
        self.ambience = ambience
        self.ambienceGain = ambienceGain
        self.ambienceFadeInSeconds = ambienceFadeInSeconds
        self.ambienceFadeOutSeconds = ambienceFadeOutSeconds
        self.startGong = startGong
        self.intervalGong = intervalGong
        self.intervalMinutes = intervalMinutes
        self.bell = bell
        self.leadInSeconds = leadInSeconds
        self.duckDecibels = duckDecibels
        self.loudness = loudness
        self.loudnessAnchor = loudnessAnchor
        self.truePeak = truePeak
        self.speechLeveling = speechLeveling
        self.soundsOverLeadIn = soundsOverLeadIn
        self.silencePhase = silencePhase
        self.speechOverGongs = speechOverGongs
    }

    private enum CodingKeys: String, CodingKey {
        case ambience, ambienceGain, ambienceFadeInSeconds, ambienceFadeOutSeconds
        case startGong, intervalGong, intervalMinutes, bell, leadInSeconds
        case duckDecibels = "duckDb"
        case loudness, loudnessAnchor, truePeak, speechLeveling, soundsOverLeadIn, silencePhase, speechOverGongs
    }

    /// These settings with every unset field taken from `base`.
    package func overriding(_ base: SoundSettings?) -> SoundSettings {
        guard let base else { return self }
        return SoundSettings(
            ambience: ambience ?? base.ambience,
            ambienceGain: ambienceGain ?? base.ambienceGain,
            ambienceFadeInSeconds: ambienceFadeInSeconds ?? base.ambienceFadeInSeconds,
            ambienceFadeOutSeconds: ambienceFadeOutSeconds ?? base.ambienceFadeOutSeconds,
            startGong: startGong ?? base.startGong,
            intervalGong: intervalGong ?? base.intervalGong,
            intervalMinutes: intervalMinutes ?? base.intervalMinutes,
            bell: bell ?? base.bell,
            leadInSeconds: leadInSeconds ?? base.leadInSeconds,
            duckDecibels: duckDecibels ?? base.duckDecibels,
            loudness: loudness ?? base.loudness,
            loudnessAnchor: loudnessAnchor ?? base.loudnessAnchor,
            truePeak: truePeak ?? base.truePeak,
            speechLeveling: speechLeveling ?? base.speechLeveling,
            soundsOverLeadIn: soundsOverLeadIn ?? base.soundsOverLeadIn,
            silencePhase: silencePhase ?? base.silencePhase,
            speechOverGongs: speechOverGongs ?? base.speechOverGongs
        )
    }

    /// The loudness target in LUFS for a file with `channels`, as a meter reads the file (a
    /// preset's mono figure for mono), or `nil` when loudness is off.
    package func loudnessTarget(for channels: ChannelCount) -> Double? {
        switch loudness ?? .target(SoundDefaults.loudness) {
        case .off: nil
        case .target(let lufs): lufs
        case .preset(let preset): preset.target(for: channels)
        }
    }

    /// The interval gong's name: the one chosen, or `gong` when only the minutes are.
    package var effectiveIntervalGong: String? {
        intervalGong ?? (intervalMinutes == nil ? nil : SoundDefaults.intervalGong)
    }

    /// A field, named as the script's `sound` block names it.
    public enum Field: String, Sendable, CaseIterable {
        case ambience, ambienceGain, ambienceFadeInSeconds, ambienceFadeOutSeconds
        case startGong, intervalGong, intervalMinutes, bell, leadInSeconds
        case duckDecibels = "duckDb"
        case loudness, loudnessAnchor, truePeak, speechLeveling, soundsOverLeadIn, silencePhase, speechOverGongs
    }

    /// Every value that breaks its rule, as the field and the rule broken; empty when all are fine.
    /// The script validator and a command word the field in their own terms.
    package var problems: [(field: Field, rule: String)] {
        var problems: [(field: Field, rule: String)] = []
        let names: [(Field, String?)] = [
            (.ambience, ambience), (.startGong, startGong), (.intervalGong, intervalGong), (.bell, bell),
        ]
        for case (let field, let name?) in names where name.isEmpty {
            problems.append((field, "must not be empty"))
        }
        let ranges: [(Field, Double?, ClosedRange<Double>)] = [
            (.ambienceGain, ambienceGain, SoundRules.gain),
            (.ambienceFadeInSeconds, ambienceFadeInSeconds, SoundRules.fadeSeconds),
            (.ambienceFadeOutSeconds, ambienceFadeOutSeconds, SoundRules.fadeSeconds),
            (.leadInSeconds, leadInSeconds, SoundRules.leadInSeconds),
            (.duckDecibels, duckDecibels, SoundRules.duckDecibels),
            (.truePeak, truePeak, SoundRules.truePeak),
        ]
        for case (let field, let value?, let range) in ranges where !(value.isFinite && range.contains(value)) {
            problems.append(
                (field, "\(formatted(value)) is outside \(formatted(range.lowerBound))…\(formatted(range.upperBound))")
            )
        }
        if let intervalMinutes,
            !(intervalMinutes.isFinite && intervalMinutes > 0 && intervalMinutes <= SoundRules.maximumIntervalMinutes)
        {
            problems.append(
                (
                    .intervalMinutes,
                    "\(formatted(intervalMinutes)) must be greater than 0 and at most \(formatted(SoundRules.maximumIntervalMinutes))"
                )
            )
        }
        if case .target(let lufs)? = loudness, !(lufs.isFinite && SoundRules.loudness.contains(lufs)) {
            let range = SoundRules.loudness
            problems.append(
                (
                    .loudness,
                    "\(formatted(lufs)) is outside \(formatted(range.lowerBound))…\(formatted(range.upperBound)) LUFS"
                )
            )
        }
        return problems
    }
}

/// What an unset ``SoundSettings`` field means.
package enum SoundDefaults {
    /// The bed's gain when neither the settings nor the sound library give one (seed 002's 0.15).
    package static let ambienceGain = 0.15
    /// The bed's fade-in.
    package static let ambienceFadeInSeconds = 4.0
    /// The bed's fade-out.
    package static let ambienceFadeOutSeconds = 8.0
    /// The gap between interval gongs when only the gong is chosen (seed 002's default).
    package static let intervalMinutes = 5.0
    /// The interval gong when only the minutes are chosen.
    package static let intervalGong = "gong"
    /// The narration's loudness target, LUFS (the common target of spoken-word streaming).
    package static let loudness = -16.0
    /// The true-peak ceiling, dBTP.
    package static let truePeak = -1.0
    /// The length of the ramps that duck the bed under narration.
    package static let duckRampSeconds = 0.25
    /// The crossfade at the seam where a bed loops.
    package static let loopCrossfadeSeconds = 2.0
}

/// The ranges ``SoundSettings`` values must lie in.
package enum SoundRules {
    /// Linear gains: 0 (silent) to 4 (+12 dB).
    package static let gain: ClosedRange<Double> = 0...4
    /// Fades: up to ten minutes.
    package static let fadeSeconds: ClosedRange<Double> = 0...600
    /// A lead-in: up to an hour.
    package static let leadInSeconds: ClosedRange<Double> = 0...3_600
    /// Ducking depth in dB.
    package static let duckDecibels: ClosedRange<Double> = 0...60
    /// Loudness targets in LUFS.
    package static let loudness: ClosedRange<Double> = -70...0
    /// True-peak ceilings in dBTP.
    package static let truePeak: ClosedRange<Double> = -20...0
    /// The longest interval between gongs: a day.
    package static let maximumIntervalMinutes: Double = 1_440
}

/// A published loudness target: the integrated loudness a platform or recommendation asks of
/// spoken audio, with its true-peak ceiling (docs/sound.md gives each one's source).
public enum LoudnessPreset: String, Sendable, Equatable, CaseIterable {
    /// Apple Podcasts: −16 LUFS ±1, true peak at most −1 dBTP.
    case podcast
    /// Spotify and other music streaming: about −14 LUFS, −1 dBTP.
    case streaming
    /// EBU R128 broadcast: −23 LUFS, −1 dBTP.
    case ebuR128 = "ebu-r128"
    /// AES TD1008's level for speech content: −18 LUFS, −1 dBTP.
    case speech

    /// The integrated loudness, LUFS, as published: for stereo.
    public var target: Double {
        switch self {
        case .podcast: -16
        case .streaming: -14
        case .ebuR128: -23
        case .speech: -18
        }
    }

    /// The integrated loudness of a file with `channels`, LUFS, as a meter reads the file.
    ///
    /// A mono file is played on both earbuds or speakers, and sounds as loud as a stereo file its
    /// meter reads 3 LU higher (BS.1770 counts its one channel once). AES TD1004 therefore asks a
    /// mono file 3 LU under the stereo figure (podcast: −16 LUFS stereo, −19 mono), and so do the
    /// streaming and speech presets here. EBU R128 is a broadcast figure for the programme as it
    /// is carried and keeps −23 in any layout.
    package func target(for channels: ChannelCount) -> Double {
        self != .ebuR128 && channels == .mono ? target - Self.monoOffset : target
    }

    /// How far under a stereo target a mono file is brought, LU (AES TD1004).
    package static let monoOffset = 3.0

    /// The true-peak ceiling, dBTP.
    public var ceiling: Double { -1 }
}
