internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Turns a script into a timeline from prepared clips: makes the random choices and places
/// everything in frames. Opens no clip: every length comes from ``PreparedClips``.
enum SessionPlanner {
    /// The output rate of a session that speaks nothing and was given no rate: the rate the
    /// default library's sounds are made at.
    static let soundOnlySampleRate = SynthesizedSound.sampleRate

    /// Plans `script` with `settings`, taking clip lengths from `clips`.
    ///
    /// Every text the script can need must be ready: all that are not are reported together,
    /// before any audio is written. With ``PlanSettings/allowMissing``, a clip that is not ready
    /// is left out instead, its slot silent, and `warn` is told once per cause.
    static func plan(
        _ script: Script,
        clips: PreparedClips,
        identity: ClipIdentity,
        settings: PlanSettings,
        encoder: EncoderSettings = .wav,
        warn: (String) -> Void
    ) throws(SessionError) -> Timeline {
        guard case .guided(let session) = script.kind else {
            return try planScore(
                script,
                clips: clips,
                identity: identity,
                settings: settings,
                encoder: encoder,
                warn: warn
            )
        }
        try check(script.allTexts, clips: clips, identity: identity, settings: settings, warn: warn)

        let seed = settings.seed ?? SeededGenerator.randomSeed()
        let interjections = session.resolveInterjections(seed: seed)
        let sourced = sourcedClips(
            session.segments.map(\.text) + interjections.map(\.text),
            clips: clips,
            identity: identity
        )
        guard
            let sampleRate = SampleRate.forSession(
                requested: settings.sampleRate,
                clipRates: sourced.lazy.map { $0?.source.sampleRate }
            )
        else {
            throw SessionError(
                .invalidSetting,
                "No clip is available to take the sample rate from; choose an output sample rate"
            )
        }
        let sound = settings.sound.overriding(script.sound)
        return try withoutActuallyEscaping(warn) { (warn) throws(SessionError) in
            var sounds = SessionSounds(
                libraryFolder: settings.soundLibrary,
                allowsMissing: settings.allowsMissingSounds,
                warn: warn
            )
            return Timeline.plan(
                script: script,
                session: session,
                seed: seed,
                sampleRate: sampleRate,
                channelCount: settings.channelCount,
                segmentClips: Array(sourced[..<session.segments.count]),
                interjections: interjections,
                interjectionClips: Array(sourced[session.segments.count...]),
                layers: try sounds.layers(
                    for: sound,
                    sampleRate: sampleRate,
                    codecHeadroom: encoder.truePeakHeadroom(sampleRate: sampleRate)
                )
            )
        }
    }

    /// Plans a timer, breathing, workout or stretching session from its score. Its cue sounds are
    /// looked up first, so that a cue whose sound is missing is spoken instead where it can be.
    private static func planScore(
        _ script: Script,
        clips: PreparedClips,
        identity: ClipIdentity,
        settings: PlanSettings,
        encoder: EncoderSettings,
        warn: (String) -> Void
    ) throws(SessionError) -> Timeline {
        let script = try settings.selectingStretches(of: script)
        let seed = settings.seed ?? SeededGenerator.randomSeed()
        let sound = settings.sound.overriding(script.sound)
        return try withoutActuallyEscaping(warn) { (warn) throws(SessionError) in
            var sounds = SessionSounds(
                libraryFolder: settings.soundLibrary,
                allowsMissing: settings.allowsMissingSounds,
                warn: warn
            )
            guard let score = try sounds.score(of: script, sound: sound, seed: seed) else {
                preconditionFailure("only guided scripts have no score")
            }
            try check(score.texts, clips: clips, identity: identity, settings: settings, warn: warn)
            let spoken = sourcedClips(score.spoken.map(\.text), clips: clips, identity: identity)
            let sampleRate =
                SampleRate.forSession(
                    requested: settings.sampleRate,
                    clipRates: spoken.lazy.map { $0?.source.sampleRate }
                )
                ?? soundOnlySampleRate
            // The kind places its own gongs; the end sound ends the narration lane as a bell does.
            var layered = sound
            layered.startGong = nil
            layered.intervalGong = nil
            layered.intervalMinutes = nil
            layered.bell = score.endSound
            let layers = try sounds.layers(
                for: layered,
                sampleRate: sampleRate,
                builtinBell: false,
                codecHeadroom: encoder.truePeakHeadroom(sampleRate: sampleRate)
            )
            var choices: [String: SoundChoice] = [:]
            for cue in score.sounds where choices[cue.name] == nil {
                choices[cue.name] = try sounds.choose(
                    cue.name,
                    as: .cue,
                    measuresLoudness: layers.loudnessTarget != nil
                )
            }
            return Timeline.plan(
                score: score,
                script: script,
                seed: seed,
                sampleRate: sampleRate,
                channelCount: settings.channelCount,
                spokenClips: spoken,
                sounds: choices,
                layers: layers
            )
        }
    }

    /// Fails, or with ``PlanSettings/allowMissing`` warns, when a clip `texts` need is not ready.
    private static func check(
        _ texts: [String],
        clips: PreparedClips,
        identity: ClipIdentity,
        settings: PlanSettings,
        warn: (String) -> Void
    ) throws(SessionError) {
        // A batch prepares many scripts' clips at once: only this script's count here.
        let keys = Set(texts.map { identity.entry(for: $0).key })
        let problems = clips.problemLines(among: keys, suffix: settings.allowMissing ? "; its slot stays silent" : "")
        guard !problems.isEmpty else { return }
        guard settings.allowMissing else {
            let code: SessionError.Code =
                clips.problems(among: keys).contains { $0.state == .missing } ? .missingClips : .unusableClips
            throw SessionError(code, lines: problems)
        }
        for problem in problems { warn(problem) }
    }

    /// The ready clip of each text, `nil` for one that is not ready.
    private static func sourcedClips(
        _ texts: [String],
        clips: PreparedClips,
        identity: ClipIdentity
    ) -> [SourcedClip?] {
        texts.map { text in
            let entry = identity.entry(for: text)
            guard case .ready(let source)? = clips.states[entry.key] else { return nil }
            return SourcedClip(key: entry.key, source: source)
        }
    }
}

extension SessionSounds {
    /// `script`'s score with `sound`, a cue whose sound the library lacks spoken where it can be;
    /// `nil` for a guided script.
    mutating func score(of script: Script, sound: SoundSettings, seed: UInt64) throws(SessionError) -> SessionScore? {
        if case .guided = script.kind { return nil }
        return script.score(sound: sound, hasSound: try soundsFound(for: script), seed: seed)
    }

    /// Every text `script` can need with `sound`, a cue whose sound the library lacks spoken.
    mutating func texts(of script: Script, sound: SoundSettings) throws(SessionError) -> [String] {
        script.texts(hasSound: try soundsFound(for: script), sound: sound)
    }

    /// Whether the library has each sound `script` may speak instead, asked up front: the
    /// score takes a plain closure, and looking up may open (or make) the library and fail.
    private mutating func soundsFound(for script: Script) throws(SessionError) -> (String) -> Bool {
        var found: [String: Bool] = [:]
        for name in Self.cueNames(of: script) { found[name] = try has(name) }
        return { found[$0] ?? false }
    }

    /// Every sound name a kind may speak instead of playing: its breathing cues and round sounds.
    private static func cueNames(of script: Script) -> [String] {
        switch script.kind {
        case .breathing(let breathing): Array(Set(breathing.cues.values)).sorted()
        case .workout(let workout): (1...workout.rounds).map(WorkoutSession.Sound.round)
        default: []
        }
    }
}
