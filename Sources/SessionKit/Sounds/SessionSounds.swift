import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Finds and measures the sounds a session asks for, and turns its ``SoundSettings`` into the
/// ``SessionLayers`` the planner places.
///
/// A name is looked up in the sound library, which is opened (and the default one made) only
/// when a name needs it, and then once for the whole job (``SharedSoundLibrary``). A sound that
/// is not found fails the plan, naming the nearest names the library has (a typo must not ship a
/// session without its gong), or, when missing sounds are allowed, is left out with one warning
/// line; a sound that is found but cannot be decoded always fails it.
struct SessionSounds {
    /// The library, opened when first needed.
    let library: SharedSoundLibrary
    /// Whether a missing sound is left out (with a warning) instead of failing the plan.
    let allowsMissing: Bool
    /// Told of each sound left out.
    let warn: (String) -> Void
    /// The sounds the command line named, which alone may be paths: a name a script gives is
    /// looked up in the library only (``SoundLibrary/resolve(_:pathsAllowed:)``).
    let commandLine: SoundSettings

    init(
        library: SharedSoundLibrary,
        allowsMissing: Bool,
        commandLine: SoundSettings = SoundSettings(),
        warn: @escaping (String) -> Void
    ) {
        self.library = library
        self.allowsMissing = allowsMissing
        self.commandLine = commandLine
        self.warn = warn
    }

    /// Whether `name`, playing `role`, is the sound the command line gave for it, and so may be a path.
    private func isPathAllowed(_ name: String, as role: Role) -> Bool {
        let given: String? =
            switch role {
            case .bell: commandLine.bell
            case .startGong: commandLine.startGong
            case .intervalGong: commandLine.intervalGong
            case .ambience: commandLine.ambience
            case .cue: nil
            }
        return given == name
    }

    /// The library to look `name` up in: for a path the command line gave, one with no entries,
    /// so that the default library is not made for it.
    private func library(for name: String, pathAllowed: Bool) throws(SessionError) -> SoundLibrary {
        pathAllowed && name.contains("/")
            ? SoundLibrary(folder: libraryFolder ?? SoundLibrary.defaultFolder(), entries: [])
            : try openLibrary()
    }

    /// The library folder; `nil` is the default library.
    var libraryFolder: String? { library.folder }

    /// How far under the limiter's aim a sound's true peak stays, dB: the limiter's own margin
    /// (0.2 dB) and the change resampling to the session's rate can make to a peak.
    static let soundPeakMargin = 0.5

    /// What is played besides the clips, in frames at `sampleRate`, with every sound measured.
    /// `builtinBell` says whether an unset bell is the built-in one (guided scripts) or none
    /// (other kinds, whose end sound is chosen by their score). `codecHeadroom` is the room the
    /// limiter leaves under the ceiling for the output's codec: sounds' peaks stay under both.
    func layers(
        for sound: SoundSettings,
        sampleRate: SampleRate,
        channelCount: ChannelCount = .mono,
        builtinBell: Bool = true,
        codecHeadroom: Double = 0
    ) throws(SessionError) -> SessionLayers {
        let target = sound.loudnessTarget(for: channelCount)
        let measuresLoudness = target != nil
        func frames(_ seconds: Double) -> Frames {
            guard let frames = sampleRate.frames(atSeconds: seconds) else {
                preconditionFailure("a checked setting of \(seconds) s converts to frames")
            }
            return frames
        }
        var layers = SessionLayers(
            leadIn: frames(sound.leadInSeconds ?? 0),
            soundsOverLeadIn: sound.soundsOverLeadIn ?? false,
            marksSilence: sound.silencePhase ?? true,
            loudnessTarget: target,
            loudnessAnchor: sound.loudnessAnchor ?? .speech,
            levelsSpeech: sound.speechLeveling ?? true,
            truePeakCeiling: sound.truePeak ?? sound.loudness?.ceiling ?? SoundDefaults.truePeak,
            ambienceFadeIn: frames(sound.ambienceFadeInSeconds ?? SoundDefaults.ambienceFadeInSeconds),
            ambienceFadeOut: frames(sound.ambienceFadeOutSeconds ?? SoundDefaults.ambienceFadeOutSeconds),
            loopCrossfade: frames(SoundDefaults.loopCrossfadeSeconds),
            duckDecibels: sound.duckDecibels ?? 0,
            duckRamp: frames(SoundDefaults.duckRampSeconds)
        )
        if measuresLoudness { layers.soundPeakLimit = layers.truePeakCeiling - codecHeadroom - Self.soundPeakMargin }
        layers.speechWaitsForGongs = !(sound.speechOverGongs ?? false)
        layers.outputChannels = channelCount
        if let bell = sound.bell {
            layers.bell = try choose(bell, as: .bell, measuresLoudness: measuresLoudness)
        } else if builtinBell {
            layers.bell = .chosen(try Self.builtinBell(sampleRate: sampleRate, measuresLoudness: measuresLoudness))
        }
        if let gong = sound.startGong {
            layers.startGong = try choose(gong, as: .startGong, measuresLoudness: measuresLoudness)
        }
        if let gong = sound.effectiveIntervalGong {
            layers.intervalGong = try choose(gong, as: .intervalGong, measuresLoudness: measuresLoudness)
            layers.intervalSeconds = (sound.intervalMinutes ?? SoundDefaults.intervalMinutes) * 60
        }
        if let ambience = sound.ambience {
            layers.ambience = try choose(
                ambience,
                as: .ambience,
                gain: sound.ambienceGain,
                measuresLoudness: measuresLoudness
            )
        }
        return layers
    }

    /// The roles a sound plays, which name it in messages and in the timeline's skipped list.
    enum Role {
        case bell, startGong, intervalGong, ambience, cue

        /// How a message names it: `Start gong`.
        var title: String {
            switch self {
            case .bell: "Bell"
            case .startGong: "Start gong"
            case .intervalGong: "Interval gong"
            case .ambience: "Ambience"
            case .cue: "Cue sound"
            }
        }

        /// Where a script names it, in parentheses: ` (sound.startGong)`; empty for a cue, whose
        /// name comes from the session's kind.
        var scriptField: String {
            switch self {
            case .bell: " (sound.bell)"
            case .startGong: " (sound.startGong)"
            case .intervalGong: " (sound.intervalGong)"
            case .ambience: " (sound.ambience)"
            case .cue: ""
            }
        }

        /// The setting that names it on the command line, if one does.
        var commandLineSetting: SettingReference? {
            switch self {
            case .bell: .bellSound
            case .startGong: .startGongSound
            case .intervalGong: .intervalGongSound
            case .ambience: .ambienceSound
            case .cue: nil
            }
        }

        /// Its lane and kind in the timeline's `skippedSounds`.
        var lane: String { self == .bell ? "narration" : self == .ambience ? "ambience" : "cues" }
        var kind: String {
            switch self {
            case .bell: "bell"
            case .ambience: "ambience"
            case .cue: "cue"
            case .startGong, .intervalGong: "gong"
            }
        }
        /// Its gain when neither the settings nor the library give one.
        var defaultGain: Double { self == .ambience ? SoundDefaults.ambienceGain : 1 }
    }

    /// Whether `name` (a library name, or a path the command line gave for `role`) is a sound
    /// that can be found.
    func has(_ name: String, as role: Role) throws(SessionError) -> Bool {
        if case .found = try lookUp(name, as: role).found { return true }
        return false
    }

    /// Where `name` is looked for as `role` (a path only where `pathAllowed`), and what is found.
    private func lookUp(
        _ name: String,
        as role: Role
    ) throws(SessionError) -> (library: SoundLibrary, pathAllowed: Bool, found: SoundLookup) {
        let pathAllowed = isPathAllowed(name, as: role)
        let library = try library(for: name, pathAllowed: pathAllowed)
        return (library, pathAllowed, library.resolve(name, pathsAllowed: pathAllowed))
    }

    /// Looks `name` up and measures what is found.
    func choose(
        _ name: String,
        as role: Role,
        gain: Double? = nil,
        measuresLoudness: Bool
    ) throws(SessionError) -> SoundChoice {
        let (library, pathAllowed, found) = try lookUp(name, as: role)
        switch found {
        case .found(let path, let entry):
            // A file a name found stays inside the library at every open; a path the command
            // line gave (found as it is) is opened as given.
            let inside = pathAllowed && path == name ? nil : library.folder
            let measurement: AudioMeasurement
            do {
                measurement =
                    measuresLoudness
                    ? try SoundMeasurements.measureWithLoudness(path: path, inside: inside)
                    : try AudioFileDecoder.measure(path: path, inside: inside)
            } catch {
                throw SessionError(.unusableSound, "\(role.title) \(quoted(name)): \(error)", underlyingError: error)
            }
            var source = AudioSourceInfo(measurement, path: path)
            source.libraryFolder = inside
            return .chosen(ChosenSound(name: name, source: source, gain: gain ?? entry?.gain ?? role.defaultGain))
        case .missing(let lookedFor):
            let line = notFound(name, as: role, in: library, pathAllowed: pathAllowed, lookedFor: lookedFor)
            if !allowsMissing {
                throw SessionError(
                    .missingSound,
                    line + "; \(SettingReference.allowMissingSounds.marker) leaves it out"
                )
            }
            warn(line + "; it is left out")
            return .skipped(SkippedSound(lane: role.lane, kind: role.kind, name: name, lookedFor: lookedFor))
        }
    }

    /// Refuses, before any work, every sound `sound` names that is not found, a line each in the
    /// words a plan would fail with; nothing when missing sounds are allowed.
    func check(_ sound: SoundSettings) throws(SessionError) {
        let lines = try problems(sound)
        guard !lines.isEmpty else { return }
        throw SessionError(.missingSound, lines: lines)
    }

    /// A line for each sound `sound` names that is not found (``check(_:)``'s); none when missing
    /// sounds are allowed.
    func problems(_ sound: SoundSettings) throws(SessionError) -> [String] {
        guard !allowsMissing else { return [] }
        let named: [(String?, Role)] = [
            (sound.bell, .bell), (sound.startGong, .startGong), (sound.effectiveIntervalGong, .intervalGong),
            (sound.ambience, .ambience),
        ]
        var lines: [String] = []
        for case (let name?, let role) in named {
            let (library, pathAllowed, found) = try lookUp(name, as: role)
            guard case .missing(let lookedFor) = found else { continue }
            let line = notFound(name, as: role, in: library, pathAllowed: pathAllowed, lookedFor: lookedFor)
            lines.append(line + "; \(SettingReference.allowMissingSounds.marker) leaves it out")
        }
        return lines
    }

    /// How many of the library's names a line lists when none is near the name asked for.
    static let listedNames = 12

    /// What is wrong with `name`, and where it came from (`sound.ambience` in the script, or the
    /// command line's setting): `Start gong "gongg" (sound.startGong) is not in the sound library
    /// /…/sounds (did you mean "gong"?)`; with no name near, the library's names (or the first
    /// ``listedNames`` of them, and where to see the rest); `… is in the sound library …, but its
    /// file is absent` for an entry without its file; `… "x/y.wav" is not a file` for a path the
    /// command line gave, or `… is a path, …` for one a script gave.
    private func notFound(
        _ name: String,
        as role: Role,
        in library: SoundLibrary,
        pathAllowed: Bool,
        lookedFor: [String]
    ) -> String {
        let origin = pathAllowed ? role.commandLineSetting.map { " (\($0.marker))" } ?? "" : role.scriptField
        let title = "\(role.title) \(quoted(name))\(origin)"
        if let problem = ScriptRules.soundNameProblem(name), !pathAllowed {
            return "\(role.title) \(problem)"
        }
        if name.contains("/") { return "\(title) is not a file" }
        let known = library.listing().map(\.entry.id)
        if let entry = known.first(where: { $0.lowercased() == name.lowercased() }) {
            let looked = lookedFor.map { ($0 as NSString).lastPathComponent }
            let files = looked.isEmpty ? "" : " (looked for \(looked.joined(separator: ", ")))"
            return
                "\(title) is in the sound library \(library.folder) as \(quoted(entry)), but its file is absent\(files)"
        }
        let near = didYouMean(name, among: known)
        guard near.isEmpty else { return "\(title) is not in the sound library \(library.folder)\(near)" }
        if known.isEmpty { return "\(title) is not in the sound library \(library.folder), which has no sounds" }
        let listed = known.sorted().prefix(Self.listedNames).map { quoted($0) }.joined(separator: ", ")
        let more =
            known.count > Self.listedNames
            ? " and \(known.count - Self.listedNames) more (\(SettingReference.soundListing.marker) lists them)" : ""
        return "\(title) is not in the sound library \(library.folder), which has \(listed)\(more)"
    }

    private func openLibrary() throws(SessionError) -> SoundLibrary {
        try library.opened()
    }

    /// The built-in bell's loudness and true peak at each rate measured so far. The bell is the
    /// same at a rate every time, so it is synthesized and metered once per process, not once per
    /// plan (a batch plans every session).
    private static let builtinBellLoudness = Locked<[Int: BellLoudness]>([:])

    /// What the built-in bell measures at one rate.
    private struct BellLoudness: Sendable {
        var loudness: Double?
        var truePeak: Double?
        var loudestMomentary: Double?
        var strikeFrames: Frames?
    }

    /// The built-in bell at the output rate, measured when loudness is on.
    static func builtinBell(sampleRate: SampleRate, measuresLoudness: Bool) throws(SessionError) -> ChosenSound {
        var measured = BellLoudness()
        if measuresLoudness {
            if let known = builtinBellLoudness.withLock({ $0[sampleRate.hertz] }) {
                measured = known
            } else {
                do {
                    let samples = BuiltinBell.samples(sampleRate: sampleRate)
                    let meter = try LoudnessMeter(sampleRate: sampleRate, channelCount: .mono, momentary: true)
                    meter.add(samples)
                    let peakMeter = TruePeakMeter(channelCount: .mono)
                    peakMeter.add(samples)
                    measured = BellLoudness(
                        loudness: meter.integratedLoudness,
                        truePeak: peakMeter.truePeak > 0 ? peakMeter.truePeakDecibels : nil,
                        loudestMomentary: meter.loudestMomentary,
                        strikeFrames: meter.strikeFrameCount.map { Frames($0) }
                    )
                } catch {
                    throw SessionError(
                        .unusableSound,
                        "Bell \(quoted(AudioSourceInfo.builtinName)): \(error)",
                        underlyingError: error
                    )
                }
                builtinBellLoudness.withLock { [measured] in $0[sampleRate.hertz] = measured }
            }
        }
        return ChosenSound(
            name: AudioSourceInfo.builtinName,
            source: AudioSourceInfo(
                path: nil,
                sampleRate: sampleRate,
                frameCount: BuiltinBell.frameCount(sampleRate: sampleRate),
                gapless: false,
                loudness: measured.loudness,
                truePeak: measured.truePeak,
                loudestMomentary: measured.loudestMomentary,
                strikeFrames: measured.strikeFrames
            )
        )
    }
}

/// A job's sound library, opened (and the default one made) the first time a sound name needs it
/// and then shared by every stage and session of the job: a batch reads `sounds.json` once, and
/// says what is wrong with it once.
final class SharedSoundLibrary: Sendable {
    /// The library folder; `nil` is the default library.
    let folder: String?
    /// Told what is wrong with the library when it is opened (keys it does not know, …).
    private let warn: @Sendable (String) -> Void
    private let state = Locked<Result<SoundLibrary, SessionError>?>(nil)

    init(folder: String?, warn: @escaping @Sendable (String) -> Void) {
        self.folder = folder
        self.warn = warn
    }

    /// The library, opened on the first call (its warnings told, once); a library that cannot be
    /// opened fails every call the same way.
    func opened() throws(SessionError) -> SoundLibrary {
        let (outcome, isFirst) = state.withLock { (state) -> (Result<SoundLibrary, SessionError>, Bool) in
            if let state { return (state, false) }
            PipelineProbe.current?.count(.soundLibraryOpen)
            let outcome = Result { () throws(SessionError) in try SoundLibrary.open(folder: folder) }
            state = outcome
            return (outcome, true)
        }
        if isFirst, case .success(let library) = outcome { for line in library.warnings { warn(line) } }
        return try outcome.get()
    }
}
