internal import SessionTimeline

/// What a mix is made of: the narration items and the overlays at one rate and channel count,
/// and the ceiling of the limiter that loudness normalization puts after them. A whole
/// timeline's, or one item's alone (a queue's file), without making up a timeline for it.
struct MixLanes {
    let sampleRate: SampleRate
    let channelCount: ChannelCount
    /// The narration lane: items back to back from frame 0.
    let items: [TimelineItem]
    let overlays: [TimelineOverlay]
    /// The true-peak limiter's ceiling, dBTP, when loudness is on; `nil` for no limiter.
    let limiterCeiling: Double?
    /// Where each phase starts, in order, for measuring its speech; empty for one item alone.
    let phaseStarts: [Frames]
    /// Whether speech clips measured through the speech leveler go through it.
    let levelsSpeech: Bool

    /// Where the narration lane ends: the mix's length.
    var totalFrames: Frames { items.last.map { $0.startFrame + $0.frameCount } ?? .zero }

    /// Whether the narration lane plays alone at unit gains: then items are copied one by one and
    /// silence is written without mixing, the fastest way and the same samples as before layers.
    var isNarrationOnly: Bool {
        overlays.isEmpty && limiterCeiling == nil && !levelsSpeech && items.allSatisfy { $0.gain == 1 }
    }

    init(_ timeline: Timeline) {
        sampleRate = timeline.sampleRate
        channelCount = timeline.channelCount
        items = timeline.items
        overlays = timeline.overlays
        limiterCeiling = timeline.loudness?.ceiling
        phaseStarts = timeline.phases.map(\.startFrame)
        levelsSpeech = timeline.loudness?.speechLeveling ?? false
    }

    /// `item` alone from frame 0 at `sampleRate`, at its gain, leveled as in the whole mix; with
    /// a `limiterCeiling`, limited as in the whole mix, so that gains above 1 cannot clip.
    init(
        alone item: TimelineItem,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        limiterCeiling: Double?,
        levelsSpeech: Bool
    ) {
        var alone = item
        alone.index = 0
        alone.startFrame = .zero
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        items = [alone]
        overlays = []
        self.limiterCeiling = limiterCeiling
        phaseStarts = []
        self.levelsSpeech = levelsSpeech
    }
}
