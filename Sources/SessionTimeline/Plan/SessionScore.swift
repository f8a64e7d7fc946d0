/// A timer, breathing, workout or stretching session compiled to what is heard when, in the
/// session's seconds, before any clip or sound has been measured.
///
/// Each kind makes one (``Script/score(sound:hasSound:seed:)``); ``Timeline/plan(score:script:seed:sampleRate:channelCount:spokenClips:sounds:layers:)``
/// places it in frames. docs/sessions.md states each kind's rules.
package struct SessionScore: Sendable, Equatable {
    /// Texts spoken in the narration lane, in the order they were made.
    package var spoken: [SpokenCue]
    /// Library sounds played over the narration lane.
    package var sounds: [SoundCue]
    /// The session's parts, each from its start to the next one's; the first starts at 0.
    package var phases: [ScorePhase]
    /// Where the narration lane is padded to and the end sound starts.
    package var endSeconds: Double
    /// The sound that ends the narration lane, as a bell does a guided script; `nil` for none.
    package var endSound: String?
    /// Where the ambience bed starts (the timer's start gong); `nil` is the output's first frame.
    package var bedStartSeconds: Double?
    /// Where the ambience bed stops (the timer's completion); `nil` is the output's end.
    package var bedEndSeconds: Double?

    package init(
        spoken: [SpokenCue] = [],
        sounds: [SoundCue] = [],
        phases: [ScorePhase] = [],
        endSeconds: Double,
        endSound: String? = nil,
        bedStartSeconds: Double? = nil,
        bedEndSeconds: Double? = nil
    ) {
        self.spoken = spoken
        self.sounds = sounds
        self.phases = phases
        self.endSeconds = endSeconds
        self.endSound = endSound
        self.bedStartSeconds = bedStartSeconds
        self.bedEndSeconds = bedEndSeconds
    }

    /// Every text the score speaks, each once, in order.
    package var texts: [String] {
        var seen = Set<String>()
        return spoken.map(\.text).filter { seen.insert($0).inserted }
    }

    /// Plays `name` at `seconds` as `cue`, or speaks `fallback` there when the library does not
    /// have the sound; with neither, the sound is kept so the plan records it as skipped.
    mutating func play(
        _ name: String,
        at seconds: Double,
        cue: TimelineCue,
        phase: String,
        fallback: String? = nil,
        deadline: Double? = nil,
        hasSound: (String) -> Bool
    ) {
        if let fallback, !hasSound(name) {
            spoken.append(
                SpokenCue(name: name, text: fallback, atSeconds: seconds, phase: phase, cue: cue, deadline: deadline)
            )
        } else {
            sounds.append(SoundCue(name: name, atSeconds: seconds, cue: cue, deadline: deadline))
        }
    }

    /// The start gong at `start`, and the interval gong at `start + k × interval` for k = 1, 2, …
    /// while that is before `end`: each a product, never a running sum.
    mutating func gongs(_ sound: SoundSettings, start: Double, end: Double) {
        if let gong = sound.startGong {
            sounds.append(SoundCue(name: gong, atSeconds: start, cue: TimelineCue(role: "start")))
        }
        if let gong = sound.effectiveIntervalGong {
            let interval = (sound.intervalMinutes ?? SoundDefaults.intervalMinutes) * 60
            for seconds in SessionLayers.intervals(from: start, every: interval, before: end) {
                sounds.append(SoundCue(name: gong, atSeconds: seconds, cue: TimelineCue(role: "interval")))
            }
        }
    }
}

/// A text spoken at a planned second.
package struct SpokenCue: Sendable, Equatable {
    /// The cue's name in the timeline: the sound it stands in for, or its role.
    package var name: String
    /// What is spoken.
    package var text: String
    /// Where it is planned to start.
    package var atSeconds: Double
    /// The phase it belongs to.
    package var phase: String
    /// What the cue is.
    package var cue: TimelineCue
    /// When set, the cue is an announcement: announcements never overlap each other and end by
    /// this second, starting earlier when they must. When `nil`, a cue that would overlap the
    /// one before it starts late instead.
    package var deadline: Double?

    package init(
        name: String,
        text: String,
        atSeconds: Double,
        phase: String,
        cue: TimelineCue,
        deadline: Double? = nil
    ) {
        self.name = name
        self.text = text
        self.atSeconds = atSeconds
        self.phase = phase
        self.cue = cue
        self.deadline = deadline
    }
}

/// A library sound played at a planned second over the narration.
package struct SoundCue: Sendable, Equatable {
    /// The sound's name in the library (or a path).
    package var name: String
    /// Where it is planned to start.
    package var atSeconds: Double
    /// What the cue is.
    package var cue: TimelineCue
    /// As for ``SpokenCue/deadline``: set for an announcement played from a sound.
    package var deadline: Double?

    package init(name: String, atSeconds: Double, cue: TimelineCue, deadline: Double? = nil) {
        self.name = name
        self.atSeconds = atSeconds
        self.cue = cue
        self.deadline = deadline
    }
}

/// A named part of a session from a planned second (`warm-up`, `work`, `rest`, `block-2`, …).
package struct ScorePhase: Sendable, Equatable {
    package var name: String
    package var startSeconds: Double

    package init(name: String, startSeconds: Double) {
        self.name = name
        self.startSeconds = startSeconds
    }
}
