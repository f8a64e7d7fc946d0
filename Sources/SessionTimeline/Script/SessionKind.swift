/// The shape of a session: a guided script (seed 000) or one of the other seed apps' sessions,
/// which ``Script/score(sound:hasSound:seed:)`` compiles to the same timeline.
///
/// A session file says its kind with `"kind"`; a file without it is a guided script.
public enum SessionKind: Sendable, Equatable {
    /// Segments and interjections at planned seconds (seed 000).
    case guided(GuidedSession)
    /// A silent countdown, gongs and a bed, no speech (seed 002).
    case timer(TimerSession)
    /// Breathing cues in patterns, cycles and blocks (seed 003, Atem tab).
    case breathing(BreathingSession)
    /// Work and rest rounds with countdowns and announcements (seed 003, Workouts tab).
    case workout(WorkoutSession)
    /// Stretches, each described and then timed (seed 001).
    case stretch(StretchSession)
    /// An open meditation: phases with a gong at the start, between phases and at the end (seed
    /// 003, Offen tab).
    case open(OpenSession)

    /// The kinds' names, as `"kind"` spells them.
    package static let names = ["guided", "timer", "breathing", "workout", "stretch", "open"]

    /// The kind's name, as `"kind"` spells it.
    public var name: String {
        switch self {
        case .guided: "guided"
        case .timer: "timer"
        case .breathing: "breathing"
        case .workout: "workout"
        case .stretch: "stretch"
        case .open: "open"
        }
    }
}

extension Script {
    /// What a session of a kind other than ``SessionKind/guided(_:)`` plays, in seconds, with `sound`
    /// (the script's sound settings under the command's) and the random draws of `seed`.
    /// `hasSound` says whether the sound library has a sound, so a cue whose sound is missing can
    /// be spoken instead. `nil` for guided scripts, which are planned from their segments.
    package func score(sound: SoundSettings, hasSound: (String) -> Bool, seed: UInt64) -> SessionScore? {
        switch kind {
        case .guided: nil
        case .timer(let timer): timer.score(sound: sound)
        case .breathing(let breathing): breathing.score(sound: sound, hasSound: hasSound)
        case .workout(let workout): workout.score(sound: sound, hasSound: hasSound)
        case .stretch(let stretch): stretch.score(sound: sound, seed: seed)
        case .open(let open): open.score(sound: sound)
        }
    }

    /// Every text a render of this script can need, given which sounds the library has: for a
    /// guided script ``allTexts``; for other kinds the texts of their score (stretching sessions
    /// drawn from regions: every description that can be drawn).
    package func texts(hasSound: (String) -> Bool, sound: SoundSettings) -> [String] {
        switch kind {
        case .guided(let guided):
            return guided.allTexts
        case .stretch(let stretch):
            return stretch.allTexts
        default:
            return score(sound: sound, hasSound: hasSound, seed: 0)?.texts ?? []
        }
    }
}
