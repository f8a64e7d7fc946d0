/// An open meditation (seed 003, Meditationstimer's "Offen" tab): no speech, no countdown; a gong
/// when it starts, the triple gong at each change of phase, the end gong when it ends.
///
/// Its sounds are the seed's names: `gong`, `gong-dreimal` and `gong-ende` (the app's file is
/// `gong-Ende.caf`, found whatever its case); `startGong`, `transitionGong` and `endGong` choose
/// others, and an `ambience` bed may play under it.
public struct OpenSession: Sendable, Equatable {
    /// The start gong when none is chosen.
    package static let defaultStartGong = "gong"
    /// The gong between phases when none is chosen.
    package static let defaultTransitionGong = "gong-dreimal"
    /// The end gong when none is chosen.
    package static let defaultEndGong = "gong-ende"

    /// A phase: its name in the timeline and how long it lasts.
    public struct Phase: Sendable, Equatable {
        public var name: String
        public var durationSeconds: Double

        public init(name: String, durationSeconds: Double) {
            self.name = name
            self.durationSeconds = durationSeconds
        }
    }

    /// The phases, in order; at least one.
    public var phases: [Phase]
    /// The gong at each change of phase; `nil` is ``defaultTransitionGong``.
    public var transitionGong: String?

    public init(phases: [Phase], transitionGong: String? = nil) {
        self.phases = phases
        self.transitionGong = transitionGong
    }

    /// The session's length: its phases end to end, before the end gong rings out.
    package var totalSeconds: Double { phases.reduce(0) { $0 + $1.durationSeconds } }

    /// The start gong at 0, the transition gong where each phase after the first starts, the end
    /// gong at the end; each phase from its start.
    func score(sound: SoundSettings) -> SessionScore {
        var score = SessionScore(endSeconds: totalSeconds, endSound: sound.bell ?? Self.defaultEndGong)
        var gongs = sound
        gongs.startGong = sound.startGong ?? Self.defaultStartGong
        score.gongs(gongs, start: 0, end: totalSeconds)
        var start = 0.0
        for (index, phase) in phases.enumerated() {
            score.phases.append(ScorePhase(name: phase.name, startSeconds: start))
            if index > 0 {
                score.sounds.append(
                    SoundCue(
                        name: transitionGong ?? Self.defaultTransitionGong,
                        atSeconds: start,
                        cue: TimelineCue(role: "transition")
                    )
                )
            }
            start += phase.durationSeconds
        }
        return score
    }
}
