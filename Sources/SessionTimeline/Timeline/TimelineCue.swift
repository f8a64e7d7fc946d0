/// What a cue of a timer, breathing, workout or stretching session is, so an app can drive its
/// UI from the timeline: the cue's role and where in the session's structure it falls.
///
/// Written flat beside the item's or overlay's own keys (docs/sessions.md); guided scripts'
/// items carry none.
public struct TimelineCue: Sendable, Equatable {
    /// The cue's role: `start`, `interval`, `countdown`, `change`, `announcement`, `last-round`,
    /// `breath`, `block-change`, `description`, `switch-sides`, `halfway`, `complete`, `end`.
    public var role: String
    /// A workout's round (1-based) and how many rounds there are.
    public var round: Int?
    public var of: Int?
    /// A breathing block (1-based), its cycle within the block (1-based) and the breath's phase
    /// (`inhale`, `holdIn`, `exhale`, `holdOut`).
    public var block: Int?
    public var cycle: Int?
    public var breathPhase: String?
    /// The stretch a stretching cue belongs to.
    public var stretchId: String?
    /// Where the rules put an overlay cue that may be moved (a workout's announcements, which never
    /// overlap and end before their round's work); `nil` otherwise. Items keep theirs in the clip.
    public var plannedStartFrame: Frames?
    /// How much earlier than planned the cue starts, because it is longer than the time before
    /// its deadline; 0 if not earlier.
    public var earlyByFrames: Frames

    package init(
        role: String,
        round: Int? = nil,
        of: Int? = nil,
        block: Int? = nil,
        cycle: Int? = nil,
        breathPhase: String? = nil,
        stretchId: String? = nil,
        plannedStartFrame: Frames? = nil,
        earlyByFrames: Frames = .zero
    ) {
        self.role = role
        self.round = round
        self.of = of
        self.block = block
        self.cycle = cycle
        self.breathPhase = breathPhase
        self.stretchId = stretchId
        self.plannedStartFrame = plannedStartFrame
        self.earlyByFrames = earlyByFrames
    }

    private enum CodingKeys: String, CodingKey {
        case cue, round, of, block, cycle, breathPhase, stretchId, plannedStartFrame, earlyByFrames
    }

    /// Writes the cue's keys into the keyed container of the item or overlay `encoder` is writing.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(role, forKey: .cue)
        try container.encodeIfPresent(round, forKey: .round)
        try container.encodeIfPresent(of, forKey: .of)
        try container.encodeIfPresent(block, forKey: .block)
        try container.encodeIfPresent(cycle, forKey: .cycle)
        try container.encodeIfPresent(breathPhase, forKey: .breathPhase)
        try container.encodeIfPresent(stretchId, forKey: .stretchId)
        try container.encodeIfPresent(plannedStartFrame, forKey: .plannedStartFrame)
        try container.encode(earlyByFrames, forKey: .earlyByFrames)
    }

    /// The cue written beside an item's or overlay's fields, or `nil` if there is none.
    init?(decodingIfPresentFrom decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let role = try container.decodeIfPresent(String.self, forKey: .cue) else { return nil }
        self.init(
            role: role,
            round: try container.decodeIfPresent(Int.self, forKey: .round),
            of: try container.decodeIfPresent(Int.self, forKey: .of),
            block: try container.decodeIfPresent(Int.self, forKey: .block),
            cycle: try container.decodeIfPresent(Int.self, forKey: .cycle),
            breathPhase: try container.decodeIfPresent(String.self, forKey: .breathPhase),
            stretchId: try container.decodeIfPresent(String.self, forKey: .stretchId),
            plannedStartFrame: try container.decodeIfPresent(Frames.self, forKey: .plannedStartFrame),
            earlyByFrames: try container.decodeIfPresent(Frames.self, forKey: .earlyByFrames) ?? .zero
        )
    }
}
