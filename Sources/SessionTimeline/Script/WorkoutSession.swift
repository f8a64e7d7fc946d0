import Foundation

/// An interval workout (seed 003, Workouts tab): a warm-up, rounds of work and rest, an optional
/// cool-down, with seed 003's cue sounds and each round announced.
public struct WorkoutSession: Sendable, Equatable {
    /// Seed 003's cue sounds.
    package enum Sound {
        /// At the warm-up's start (the session's start gong unless another is chosen).
        package static let start = "auftakt"
        /// At 3, 2 and 1 seconds before every work phase.
        package static let countdown = "kurz"
        /// At every change between work and rest (and warm-up and cool-down).
        package static let change = "lang"
        /// Before the last round.
        package static let lastRound = "last-round"
        /// At the end (the session's end sound unless another is chosen).
        package static let end = "ausklang"
        /// A round's own announcement, when the library has it: `round-5`.
        package static func round(_ number: Int) -> String { "round-\(number)" }
    }

    /// The announcement when none is given.
    package static let defaultAnnouncement = "Round {n} of {total}"
    /// The seconds of countdown beeps before each work phase.
    public static let countdownSeconds = 3

    public var rounds: Int
    public var workSeconds: Double
    public var restSeconds: Double
    public var warmUpSeconds: Double
    public var coolDownSeconds: Double
    /// What is spoken for a round without its own sound; `{n}` and `{total}` are replaced.
    public var announcement: String
    /// The seconds before each work phase's end at which the time left is spoken (`[30, 10]`);
    /// empty for none.
    public var remainingAnnouncements: [Double]
    /// What is spoken then; `{n}` is the seconds (``remainingText(forVoice:)`` chooses the default).
    public var remainingText: String

    /// The time left, in English.
    package static let englishRemainingText = "{n} seconds left"
    /// The time left, in German (seed 003: "30 Sekunden verbleiben").
    package static let germanRemainingText = "{n} Sekunden verbleiben"

    /// The default text for the time left in the language of `voice` (a session's `voice`):
    /// German for a German voice (`espeak:de`, `piper:de_DE-…`), else English.
    public static func remainingText(forVoice voice: String?) -> String {
        guard let voice else { return englishRemainingText }
        let name = voice.split(separator: ":", maxSplits: 1).last.map(String.init) ?? voice
        return name.lowercased().hasPrefix("de") ? germanRemainingText : englishRemainingText
    }

    package init(
        rounds: Int,
        workSeconds: Double,
        restSeconds: Double,
        warmUpSeconds: Double = 0,
        coolDownSeconds: Double = 0,
        announcement: String = Self.defaultAnnouncement,
        remainingAnnouncements: [Double] = [],
        remainingText: String = Self.englishRemainingText
    ) {
        self.rounds = rounds
        self.workSeconds = workSeconds
        self.restSeconds = restSeconds
        self.warmUpSeconds = warmUpSeconds
        self.coolDownSeconds = coolDownSeconds
        self.announcement = announcement
        self.remainingAnnouncements = remainingAnnouncements
        self.remainingText = remainingText
    }

    /// What is spoken `seconds` before a work phase ends.
    package func remaining(seconds: Double) -> String {
        remainingText.replacingOccurrences(of: "{n}", with: formatted(seconds))
    }

    /// Where round `n`'s work starts: W + (n − 1)(work + rest).
    package func workStart(round n: Int) -> Double {
        warmUpSeconds + Double(n - 1) * (workSeconds + restSeconds)
    }

    /// Where round `n`'s work ends.
    package func workEnd(round n: Int) -> Double { workStart(round: n) + workSeconds }

    /// The session's planned length: through the last work and the cool-down.
    package var totalSeconds: Double { workEnd(round: rounds) + coolDownSeconds }

    /// How many cues the session plays, at most: per round three beeps, two changes and an announcement.
    package var cueCount: Int { rounds * (6 + remainingAnnouncements.count) + 3 }

    /// The announcement of round `n`.
    public func announcement(round n: Int) -> String {
        announcement.replacingOccurrences(of: "{n}", with: "\(n)")
            .replacingOccurrences(of: "{total}", with: "\(rounds)")
    }

    /// See docs/sessions.md: `auftakt` at 0; `kurz` at workStart(n) − 3, −2, −1 (those ≥ 0);
    /// `lang` at every change; `last-round` and round n's announcement from the start of the gap
    /// before round n's work, ending by its start; the end sound at the end.
    func score(sound: SoundSettings, hasSound: (String) -> Bool) -> SessionScore {
        var score = SessionScore(endSeconds: totalSeconds, endSound: sound.bell ?? Sound.end)
        var gongs = sound
        gongs.startGong = sound.startGong ?? Sound.start
        score.gongs(gongs, start: 0, end: totalSeconds)
        if warmUpSeconds > 0 { score.phases.append(ScorePhase(name: "warm-up", startSeconds: 0)) }
        for n in 1...rounds {
            let start = workStart(round: n)
            let end = workEnd(round: n)
            score.phases.append(ScorePhase(name: "work", startSeconds: start))
            if n < rounds, restSeconds > 0 { score.phases.append(ScorePhase(name: "rest", startSeconds: end)) }
            let gapStart = n == 1 ? 0 : workEnd(round: n - 1)
            if n == rounds, rounds > 1 {
                score.sounds.append(
                    SoundCue(
                        name: Sound.lastRound,
                        atSeconds: gapStart,
                        cue: TimelineCue(role: "last-round", round: n, of: rounds),
                        deadline: start
                    )
                )
            }
            let announcement = TimelineCue(role: "announcement", round: n, of: rounds)
            if hasSound(Sound.round(n)) {
                score.sounds.append(
                    SoundCue(name: Sound.round(n), atSeconds: gapStart, cue: announcement, deadline: start)
                )
            } else {
                score.spoken.append(
                    SpokenCue(
                        name: Sound.round(n),
                        text: self.announcement(round: n),
                        atSeconds: gapStart,
                        phase: n == 1 ? (warmUpSeconds > 0 ? "warm-up" : "work") : (restSeconds > 0 ? "rest" : "work"),
                        cue: announcement,
                        deadline: start
                    )
                )
            }
            for before in (1...Self.countdownSeconds).reversed() where start - Double(before) >= 0 {
                score.sounds.append(
                    SoundCue(
                        name: Sound.countdown,
                        atSeconds: start - Double(before),
                        cue: TimelineCue(role: "countdown", round: n, of: rounds)
                    )
                )
            }
            if start > 0 {
                score.sounds.append(
                    SoundCue(
                        name: Sound.change,
                        atSeconds: start,
                        cue: TimelineCue(role: "change", round: n, of: rounds)
                    )
                )
            }
            // The time left, spoken before the work ends and done by then (the announcement chain).
            for seconds in remainingAnnouncements.sorted(by: >) where seconds < workSeconds {
                score.spoken.append(
                    SpokenCue(
                        name: "remaining-\(formatted(seconds))",
                        text: remaining(seconds: seconds),
                        atSeconds: end - seconds,
                        phase: "work",
                        cue: TimelineCue(role: "remaining", round: n, of: rounds),
                        deadline: end
                    )
                )
            }
            // With no rest, the next round's start is the one change.
            if (n < rounds && restSeconds > 0) || (n == rounds && coolDownSeconds > 0) {
                score.sounds.append(
                    SoundCue(name: Sound.change, atSeconds: end, cue: TimelineCue(role: "change", round: n, of: rounds))
                )
            }
        }
        if coolDownSeconds > 0 {
            score.phases.append(ScorePhase(name: "cool-down", startSeconds: workEnd(round: rounds)))
        }
        return score
    }
}
