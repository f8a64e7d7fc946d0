import ArgumentParser
import SessionKit
import SessionTimeline

/// The sound options of `render`, `timeline` and `batch`: the bed, the gongs, the bell, the
/// lead-in, ducking and loudness. Each wins over the same field of the script's `sound` block.
struct SoundOptions: ParsableArguments {
    @Option(
        name: .customLong("sounds"),
        help: ArgumentHelp(
            "The sound library folder that names are looked up in. (default: the built-in library, docs/sound.md)",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var library: String?

    @Flag(
        name: .customLong("allow-missing-sounds"),
        help:
            "Leave out a sound that is not found, with a warning (recorded in the timeline), instead of failing before any work."
    )
    var allowMissingSounds = false

    @Flag(help: "Fail on a key a script does not know, instead of warning about it.")
    var strict = false

    @Option(
        help: ArgumentHelp("An ambience bed looped under the whole session.", valueName: "name|file"),
        completion: Completions.sound
    )
    var ambience: String?

    @Option(
        name: .customLong("ambience-gain"),
        parsing: .unconditional,
        help: ArgumentHelp("The bed's linear gain, 0 to 4. (default: the library's, else 0.15)", valueName: "g"),
        transform: { try Parse.number($0, as: Double.self, what: "a gain") }
    )
    var ambienceGain: Double?

    @Option(
        name: .customLong("ambience-fade-in"),
        parsing: .unconditional,
        help: ArgumentHelp("Seconds the bed fades in over. (default: 4)", valueName: "s"),
        transform: { try Parse.number($0, as: Double.self, what: "a fade") }
    )
    var ambienceFadeIn: Double?

    @Option(
        name: .customLong("ambience-fade-out"),
        parsing: .unconditional,
        help: ArgumentHelp("Seconds the bed fades out over, ending with the file. (default: 8)", valueName: "s"),
        transform: { try Parse.number($0, as: Double.self, what: "a fade") }
    )
    var ambienceFadeOut: Double?

    @Option(
        name: .customLong("start-gong"),
        help: ArgumentHelp("A gong at the very start (0:00).", valueName: "name|file"),
        completion: Completions.sound
    )
    var startGong: String?

    @Option(
        name: .customLong("interval-gong"),
        help: ArgumentHelp("A gong every --interval-minutes from the script's 0.", valueName: "name|file"),
        completion: Completions.sound
    )
    var intervalGong: String?

    @Option(
        name: .customLong("interval-minutes"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Minutes between interval gongs, while before the script's durationSeconds. (default: 5)",
            valueName: "n"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a number of minutes") }
    )
    var intervalMinutes: Double?

    @Option(
        help: ArgumentHelp(
            "The closing bell: a library name or an audio file. (default: the built-in singing bowl)",
            valueName: "name|file"
        ),
        completion: Completions.sound
    )
    var bell: String?

    @Option(
        name: .customLong("lead-in"),
        parsing: .unconditional,
        help: ArgumentHelp(
            "Seconds of silence before the script starts: a countdown, after which the start gong and the bed begin. (default: 0)",
            valueName: "s"
        ),
        transform: { try Parse.number($0, as: Double.self, what: "a number of seconds") }
    )
    var leadIn: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Lower the bed by this many dB while narration plays. (default: 0)", valueName: "db"),
        transform: { try Parse.number($0, as: Double.self, what: "a number of dB") }
    )
    var duck: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "The integrated loudness to bring the anchor to, limiting the mix: LUFS, or podcast (-16), streaming (-14), ebu-r128 (-23), speech (-18); off for the clips' own levels. (default: -16)",
            valueName: "lufs|preset|off"
        ),
        completion: Completions.loudness,
        transform: { try Parse.loudness($0) }
    )
    var loudness: SoundSettings.Loudness?

    @Option(
        name: .customLong("loudness-anchor"),
        help: ArgumentHelp(
            "What --loudness applies to: speech (every clip) or program (the whole file, one gain after the mix). (default: speech)",
            valueName: "speech|program"
        ),
        completion: .list(["speech", "program"])
    )
    var loudnessAnchor: LoudnessAnchor?

    @Option(
        name: .customLong("true-peak"),
        parsing: .unconditional,
        help: ArgumentHelp("The limiter's true-peak ceiling in dBTP. (default: -1)", valueName: "dbtp"),
        transform: { try Parse.number($0, as: Double.self, what: "a number of dBTP") }
    )
    var truePeak: Double?

    @Option(
        name: .customLong("speech-leveling"),
        help: ArgumentHelp(
            "Even out the speech's loud syllables and peaks before the limiter (docs/sound.md). (default: on)",
            valueName: "on|off"
        ),
        completion: Completions.onOff,
        transform: { try Parse.onOff($0) }
    )
    var speechLeveling: Bool?

    @Flag(
        name: .customLong("sounds-over-lead-in"),
        help: "Start the bed and the start gong at 0:00, over the lead-in, rather than at its end."
    )
    var soundsOverLeadIn = false

    @Flag(
        name: .customLong("speech-over-gongs"),
        help: "Start speech as planned even while a gong's strike sounds, rather than when it has fallen 10 dB."
    )
    var speechOverGongs = false

    @Option(
        name: .customLong("silence-phase"),
        help: ArgumentHelp(
            "Mark a silence phase where a guided script's phase has no more speech, only interjections, before the next (docs/sound.md). (default: on)",
            valueName: "on|off"
        ),
        completion: Completions.onOff,
        transform: { try Parse.onOff($0) }
    )
    var silencePhase: Bool?

    /// The settings these options set; the rest come from the script.
    var settings: SoundSettings {
        SoundSettings(
            ambience: ambience,
            ambienceGain: ambienceGain,
            ambienceFadeInSeconds: ambienceFadeIn,
            ambienceFadeOutSeconds: ambienceFadeOut,
            startGong: startGong,
            intervalGong: intervalGong,
            intervalMinutes: intervalMinutes,
            bell: bell,
            leadInSeconds: leadIn,
            duckDecibels: duck,
            loudness: loudness,
            loudnessAnchor: loudnessAnchor,
            truePeak: truePeak,
            speechLeveling: speechLeveling,
            soundsOverLeadIn: soundsOverLeadIn ? true : nil,
            silencePhase: silencePhase,
            speechOverGongs: speechOverGongs ? true : nil
        )
    }

    /// The command-line name of a sound setting.
    static func flag(_ field: SoundSettings.Field) -> String {
        switch field {
        case .ambience: "--ambience"
        case .ambienceGain: "--ambience-gain"
        case .ambienceFadeInSeconds: "--ambience-fade-in"
        case .ambienceFadeOutSeconds: "--ambience-fade-out"
        case .startGong: "--start-gong"
        case .intervalGong: "--interval-gong"
        case .intervalMinutes: "--interval-minutes"
        case .bell: "--bell"
        case .leadInSeconds: "--lead-in"
        case .duckDecibels: "--duck"
        case .loudness: "--loudness"
        case .loudnessAnchor: "--loudness-anchor"
        case .truePeak: "--true-peak"
        case .speechLeveling: "--speech-leveling"
        case .soundsOverLeadIn: "--sounds-over-lead-in"
        case .silencePhase: "--silence-phase"
        case .speechOverGongs: "--speech-over-gongs"
        }
    }
}

extension Parse {
    /// `on` or `off`.
    static func onOff(_ text: String) throws -> Bool {
        switch text {
        case "on": return true
        case "off": return false
        default: throw ValidationError("expected on or off\(didYouMean(text, among: ["on", "off"]))")
        }
    }

    /// `off`, a preset's name, or a number of LUFS.
    static func loudness(_ text: String) throws -> SoundSettings.Loudness {
        if text == "off" { return .off }
        if let preset = LoudnessPreset(rawValue: text) { return .preset(preset) }
        guard let lufs = Double(text) else {
            let names = LoudnessPreset.allCases.map(\.rawValue)
            throw ValidationError(
                "a loudness is a number of LUFS, such as -16, a preset (\(names.joined(separator: ", "))), or off\(didYouMean(text, among: names + ["off"]))"
            )
        }
        return .target(lufs)
    }
}
