internal import Foundation
internal import SessionAudio
internal import SessionTimeline

/// Turns a script into a timeline from prepared clips: makes the random choices and places
/// everything in frames. Opens no clip: every length comes from ``PreparedClips``.
///
/// One path for every kind: the kind says what is spoken and played (``Draft``: a guided
/// script's segments and drawn interjections, or another kind's score), and the rest is the
/// same for all: the clips checked, the output's rate, the sounds found and measured, the frames.
enum SessionPlanner {
    /// The output rate of a session that speaks nothing and was given no rate: the rate the
    /// default library's sounds are made at.
    static let soundOnlySampleRate = SynthesizedSound.sampleRate

    /// Plans `script` with `settings`, taking clip lengths from `clips` and sounds from `sounds`.
    ///
    /// Every text the script can need must be ready: all that are not are reported together,
    /// before any audio is written. With ``PlanSettings/allowMissing``, a clip that is not ready
    /// is left out instead, its slot silent, and `sounds.warn` is told once per cause.
    static func plan(
        _ script: Script,
        clips: PreparedClips,
        identity: ClipIdentity,
        settings: PlanSettings,
        encoder: EncoderSettings = .wav,
        sounds: SessionSounds
    ) throws(SessionError) -> Timeline {
        let script = try settings.selectingStretches(of: script)
        let seed = settings.seed ?? SeededGenerator.randomSeed()
        let sound = settings.sound.overriding(script.sound)
        let draft = try Draft(script, sound: sound, seed: seed, sounds: sounds)
        try check(draft.neededTexts, clips: clips, identity: identity, settings: settings, warn: sounds.warn)
        let spoken = sourcedClips(draft.spokenTexts, clips: clips, identity: identity)
        let requested = SampleRate.forSession(
            requested: settings.sampleRate,
            clipRates: spoken.lazy.map { $0?.source.sampleRate }
        )
        guard let sampleRate = requested ?? draft.soundOnlySampleRate else {
            throw SessionError(
                .invalidSetting,
                "No clip is available to take the sample rate from; choose an output sample rate"
            )
        }
        let layers = try sounds.layers(
            for: draft.layered(sound),
            sampleRate: sampleRate,
            channelCount: settings.channelCount,
            builtinBell: draft.playsBuiltinBell,
            codecHeadroom: encoder.truePeakHeadroom(sampleRate: sampleRate)
        )
        switch draft {
        case .guided(let session, let interjections):
            return Timeline.plan(
                script: script,
                session: session,
                seed: seed,
                sampleRate: sampleRate,
                channelCount: settings.channelCount,
                segmentClips: Array(spoken[..<session.segments.count]),
                interjections: interjections,
                interjectionClips: Array(spoken[session.segments.count...]),
                layers: layers
            )
        case .scored(let score):
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

    /// What a kind speaks and plays before anything is placed.
    enum Draft {
        /// A guided script: its segments, then the interjections the seed drew.
        case guided(GuidedSession, [ResolvedInterjection])
        /// A timer, breathing, workout or stretching session: its score, a cue whose sound the
        /// library lacks spoken where it can be.
        case scored(SessionScore)

        init(_ script: Script, sound: SoundSettings, seed: UInt64, sounds: SessionSounds) throws(SessionError) {
            if case .guided(let session) = script.kind {
                self = .guided(session, session.resolveInterjections(seed: seed))
            } else {
                // Every kind but guided has a score; an empty one would be a session of silence.
                let score = script.score(sound: sound, hasSound: try sounds.soundsFound(for: script), seed: seed)
                self = .scored(score ?? SessionScore(endSeconds: script.durationSeconds))
            }
        }

        /// The texts whose clips must be ready: a guided script's every segment and every
        /// interjection option (a seed draws among them), a score's spoken cues.
        var neededTexts: [String] {
            switch self {
            case .guided(let session, _): session.segments.map(\.text) + session.interjections.flatMap(\.textOptions)
            case .scored(let score): score.texts
            }
        }

        /// The texts spoken, in the order the timeline planner takes their clips.
        var spokenTexts: [String] {
            switch self {
            case .guided(let session, let interjections): session.segments.map(\.text) + interjections.map(\.text)
            case .scored(let score): score.spoken.map(\.text)
            }
        }

        /// The rate of a session that speaks nothing: a score's sounds' (a timer of gongs alone);
        /// a guided script must speak to have one.
        var soundOnlySampleRate: SampleRate? {
            if case .scored = self { SessionPlanner.soundOnlySampleRate } else { nil }
        }

        /// Whether an unset bell is the built-in one (guided) or none (a score chooses its end).
        var playsBuiltinBell: Bool {
            if case .guided = self { true } else { false }
        }

        /// The sounds layered under the narration: a score places its own gongs, and its end
        /// sound ends the narration lane as a bell does.
        func layered(_ sound: SoundSettings) -> SoundSettings {
            guard case .scored(let score) = self else { return sound }
            var layered = sound
            layered.startGong = nil
            layered.intervalGong = nil
            layered.intervalMinutes = nil
            layered.bell = score.endSound
            return layered
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
            return SourcedClip(
                key: entry.key,
                source: source,
                marks: clips.marks[entry.key],
                marksUnavailable: clips.marksUnavailable(forKey: entry.key, voice: identity.voice)
            )
        }
    }
}

extension SessionSounds {
    /// Every text `script` can need with `sound`, a cue whose sound the library lacks spoken.
    func texts(of script: Script, sound: SoundSettings) throws(SessionError) -> [String] {
        script.texts(hasSound: try soundsFound(for: script), sound: sound)
    }

    /// Whether the library has each sound `script` may speak instead, asked up front: the
    /// score takes a plain closure, and looking up may open (or make) the library and fail.
    func soundsFound(for script: Script) throws(SessionError) -> (String) -> Bool {
        var found: [String: Bool] = [:]
        for name in Self.cueNames(of: script) { found[name] = try has(name, as: .cue) }
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
