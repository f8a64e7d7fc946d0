/// A breathing session (seed 003, Atem tab): blocks of a breathing pattern repeated for a number
/// of cycles, a cue sound at the start of every phase of every cycle, a gong at the start, a
/// triple gong at each change of block and the end gong after the last cycle.
public struct BreathingSession: Sendable, Equatable {
    /// The start gong when none is chosen.
    package static let defaultStartGong = "gong"
    /// The gong at each change of block (seed 003's `gong-dreimal`).
    package static let blockChangeGong = "gong-dreimal"
    /// The end gong when none is chosen.
    package static let defaultEndGong = "completion"
    /// The time between the start gong and the first breath when none is given.
    package static let defaultSettleSeconds = 3.0

    /// The phases of one breath, in the order they are breathed.
    public enum BreathPhase: String, Sendable, CaseIterable {
        case inhale, holdIn, exhale, holdOut
    }

    /// Seconds for each phase of a breath; a phase of 0 is skipped.
    public struct Pattern: Sendable, Equatable {
        public var inhale: Double
        public var holdIn: Double
        public var exhale: Double
        public var holdOut: Double

        public init(inhale: Double, holdIn: Double, exhale: Double, holdOut: Double) {
            self.inhale = inhale
            self.holdIn = holdIn
            self.exhale = exhale
            self.holdOut = holdOut
        }

        package subscript(phase: BreathPhase) -> Double {
            switch phase {
            case .inhale: inhale
            case .holdIn: holdIn
            case .exhale: exhale
            case .holdOut: holdOut
            }
        }

        /// One breath's length.
        package var cycleSeconds: Double { inhale + holdIn + exhale + holdOut }

        /// Each non-zero phase with its offset from the cycle's start.
        var offsets: [(phase: BreathPhase, seconds: Double)] {
            var offset = 0.0
            var result: [(BreathPhase, Double)] = []
            for phase in BreathPhase.allCases {
                if self[phase] > 0 { result.append((phase, offset)) }
                offset += self[phase]
            }
            return result
        }
    }

    /// A pattern breathed for a number of cycles.
    public struct Block: Sendable, Equatable {
        /// The block's phase name in the timeline; `nil` is `block-N`.
        public var name: String?
        public var pattern: Pattern
        public var cycles: Int

        public init(name: String? = nil, pattern: Pattern, cycles: Int) {
            self.name = name
            self.pattern = pattern
            self.cycles = cycles
        }

        package var seconds: Double { pattern.cycleSeconds * Double(cycles) }
    }

    public var blocks: [Block]
    /// The sound played at each phase's start (seed 003's `einatmen`, `halten-ein`, …).
    public var cues: [BreathPhase: String]
    /// What is spoken instead when the library has no such sound.
    public var spokenCues: [BreathPhase: String]
    /// Seconds from the start gong to the first breath.
    public var settleSeconds: Double

    /// Seed 003's cue sounds.
    package static let defaultCues: [BreathPhase: String] = [
        .inhale: "einatmen", .holdIn: "halten-ein", .exhale: "ausatmen", .holdOut: "halten-aus",
    ]
    /// What the cues say when spoken.
    package static let defaultSpokenCues: [BreathPhase: String] = [
        .inhale: "Breathe in", .holdIn: "Hold", .exhale: "Breathe out", .holdOut: "Hold",
    ]

    package init(
        blocks: [Block],
        cues: [BreathPhase: String] = Self.defaultCues,
        spokenCues: [BreathPhase: String] = Self.defaultSpokenCues,
        settleSeconds: Double = Self.defaultSettleSeconds
    ) {
        self.blocks = blocks
        self.cues = cues
        self.spokenCues = spokenCues
        self.settleSeconds = settleSeconds
    }

    /// How many cues the session plays: one per non-zero phase per cycle.
    package var cueCount: Int {
        blocks.reduce(0) { $0 + $1.pattern.offsets.count * $1.cycles }
    }

    /// The session's planned length: settling and every block, before the end gong rings out.
    package var totalSeconds: Double {
        blocks.reduce(settleSeconds) { $0 + $1.seconds }
    }

    /// The start gong at 0; block b from s + Σ earlier blocks; the cue of phase p in cycle c at
    /// block start + (c − 1) × cycle + offset(p); the triple gong at each later block's start;
    /// the end gong after the last block.
    func score(sound: SoundSettings, hasSound: (String) -> Bool) -> SessionScore {
        var score = SessionScore(endSeconds: totalSeconds, endSound: sound.bell ?? Self.defaultEndGong)
        var gongs = sound
        gongs.startGong = sound.startGong ?? Self.defaultStartGong
        score.gongs(gongs, start: 0, end: totalSeconds)
        if settleSeconds > 0 { score.phases.append(ScorePhase(name: "settle", startSeconds: 0)) }
        var blockStart = settleSeconds
        for (index, block) in blocks.enumerated() {
            let name = block.name ?? "block-\(index + 1)"
            score.phases.append(ScorePhase(name: name, startSeconds: blockStart))
            if index > 0 {
                score.sounds.append(
                    SoundCue(
                        name: Self.blockChangeGong,
                        atSeconds: blockStart,
                        cue: TimelineCue(role: "block-change", block: index + 1)
                    )
                )
            }
            for cycle in 0..<block.cycles {
                let cycleStart = blockStart + Double(cycle) * block.pattern.cycleSeconds
                for (phase, offset) in block.pattern.offsets {
                    let cueName = cues[phase] ?? Self.defaultCues[phase]!
                    score.play(
                        cueName,
                        at: cycleStart + offset,
                        cue: TimelineCue(
                            role: "breath",
                            block: index + 1,
                            cycle: cycle + 1,
                            breathPhase: phase.rawValue
                        ),
                        phase: name,
                        fallback: spokenCues[phase] ?? Self.defaultSpokenCues[phase],
                        hasSound: hasSound
                    )
                }
            }
            blockStart += block.seconds
        }
        return score
    }
}
