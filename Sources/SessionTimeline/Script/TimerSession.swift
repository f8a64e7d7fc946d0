/// A timer session (seed 002, Still Moment): a silent countdown, the start gong when it ends,
/// interval gongs, a bed from the start gong until the timer completes ("background audio stops
/// when timer completes"; or until the end gong has rung out, with ``ambienceRingsOut``), and the
/// end gong.
///
/// Its gongs and bed are the script's ``SoundSettings`` (`startGong`, `intervalGong`,
/// `intervalMinutes`, `ambience`, `ambienceGain`, and `endGong` as the bell).
public struct TimerSession: Sendable, Equatable {
    /// The start gong when none is chosen.
    package static let defaultStartGong = "gong"
    /// The end gong when none is chosen (seed 002's `completion.mp3`).
    package static let defaultEndGong = "completion"
    /// Seed 002's countdown.
    package static let defaultCountdownSeconds = 15.0

    /// The silent countdown before the start gong.
    public var countdownSeconds: Double
    /// The meditation's length, from the start gong to the end gong.
    public var durationSeconds: Double
    /// Whether the bed plays on under the end gong to the file's end, rather than stopping (with
    /// its fade-out) where the timer completes and the end gong starts, as the seed's app does.
    public var ambienceRingsOut: Bool

    package init(
        countdownSeconds: Double = Self.defaultCountdownSeconds,
        durationSeconds: Double,
        ambienceRingsOut: Bool = false
    ) {
        self.countdownSeconds = countdownSeconds
        self.durationSeconds = durationSeconds
        self.ambienceRingsOut = ambienceRingsOut
    }

    /// The session's planned length: countdown and meditation, before the end gong rings out.
    package var totalSeconds: Double { countdownSeconds + durationSeconds }

    /// Start gong at the countdown's end (c); interval gongs at c + k·N·60 while before c + d; the
    /// bed from c to c + d (or to the end); the end gong at c + d.
    func score(sound: SoundSettings) -> SessionScore {
        let start = countdownSeconds
        var score = SessionScore(
            endSeconds: totalSeconds,
            endSound: sound.bell ?? Self.defaultEndGong,
            bedStartSeconds: start,
            bedEndSeconds: ambienceRingsOut ? nil : totalSeconds
        )
        var gongs = sound
        gongs.startGong = sound.startGong ?? Self.defaultStartGong
        score.gongs(gongs, start: start, end: totalSeconds)
        if start > 0 { score.phases.append(ScorePhase(name: "countdown", startSeconds: 0)) }
        score.phases.append(ScorePhase(name: "meditation", startSeconds: start))
        return score
    }
}
