/// A timeline as a person reads it: phase by phase, every sound in time order with its lane,
/// the gaps between narration items as entries of their own. What `render-session show` prints;
/// times stay in frames, a person's units are the printer's.
package struct SessionOverview: Sendable, Equatable {
    /// Where a sound plays, as a listener tells them apart.
    package enum Lane: String, Sendable, Equatable, CaseIterable {
        /// The segments, and the gaps between narration items.
        case narration
        /// The random short interjections.
        case interjection
        /// Bells, gongs and the cues of timers, breathing and workouts.
        case cue
        /// The bed.
        case ambience
    }

    /// One sound, or one gap in the narration.
    package struct Entry: Sendable, Equatable {
        /// The timeline item's index, or the overlay's (``isOverlay``).
        package var index: Int
        package var isOverlay: Bool
        package var lane: Lane
        /// `segment`, `interjection`, `gap`, `bell`, `gong`, `ambience`, `cue`.
        package var kind: String
        /// A sound's name (a bell's, a gong's, a cue's); `nil` for speech and gaps.
        package var name: String?
        /// What is spoken; `nil` for other sounds and gaps.
        package var text: String?
        package var startFrame: Frames
        package var frameCount: Frames
        /// The gain the sound plays at (linear); `nil` for gaps.
        package var gain: Double?
        /// How much later than planned a clip starts; `nil` when on time or not a clip.
        package var lateByFrames: Frames?

        package var endFrame: Frames { startFrame + frameCount }
    }

    /// A phase and what starts in it.
    package struct Phase: Sendable, Equatable {
        package var name: String
        package var startFrame: Frames
        package var endFrame: Frames
        /// The phase's speech loudness as rendered, LUFS; `nil` before a render or without loudness.
        package var speechLoudness: Double?
        package var entries: [Entry]
    }

    package var phases: [Phase]

    /// The overview of `timeline`: each item and overlay in the phase it starts in.
    package init(_ timeline: Timeline) {
        var entries: [Entry] = timeline.items.map { item in
            let clip = item.clip
            let late = clip.map(\.lateByFrames).flatMap { $0 > .zero ? $0 : nil }
            switch item.kind {
            case .silence:
                return Entry(
                    index: item.index,
                    isOverlay: false,
                    lane: .narration,
                    kind: "gap",
                    name: nil,
                    text: nil,
                    startFrame: item.startFrame,
                    frameCount: item.frameCount,
                    gain: nil,
                    lateByFrames: nil
                )
            case .segment, .interjection:
                return Entry(
                    index: item.index,
                    isOverlay: false,
                    lane: item.kind == .segment ? .narration : .interjection,
                    kind: item.kind.rawValue,
                    name: item.name,
                    text: clip?.text,
                    startFrame: item.startFrame,
                    frameCount: item.frameCount,
                    gain: item.gain,
                    lateByFrames: late
                )
            case .bell:
                return Entry(
                    index: item.index,
                    isOverlay: false,
                    lane: .cue,
                    kind: "bell",
                    name: item.name,
                    text: nil,
                    startFrame: item.startFrame,
                    frameCount: item.frameCount,
                    gain: item.gain,
                    lateByFrames: nil
                )
            }
        }
        entries += timeline.overlays.map { overlay in
            Entry(
                index: overlay.index,
                isOverlay: true,
                lane: overlay.lane == .ambience ? .ambience : .cue,
                kind: overlay.kind.rawValue,
                name: overlay.name,
                text: nil,
                startFrame: overlay.startFrame,
                frameCount: overlay.frameCount,
                gain: overlay.gain,
                lateByFrames: nil
            )
        }
        // In time order; at one frame, narration first, then as the lanes are listed.
        let laneOrder = Dictionary(uniqueKeysWithValues: Lane.allCases.enumerated().map { ($1, $0) })
        entries.sort {
            ($0.startFrame, laneOrder[$0.lane]!, $0.index) < ($1.startFrame, laneOrder[$1.lane]!, $1.index)
        }
        let speech = timeline.loudness?.phaseSpeech ?? []
        var phases = timeline.phases.enumerated().map { index, phase in
            Phase(
                name: phase.name,
                startFrame: phase.startFrame,
                endFrame: phase.endFrame,
                speechLoudness: index < speech.count ? speech[index] : nil,
                entries: []
            )
        }
        if phases.isEmpty {
            phases = [
                Phase(name: "", startFrame: .zero, endFrame: timeline.totalFrames, speechLoudness: nil, entries: [])
            ]
        }
        var phase = 0
        for entry in entries {
            while phase + 1 < phases.count && phases[phase + 1].startFrame <= entry.startFrame { phase += 1 }
            phases[phase].entries.append(entry)
        }
        self.phases = phases
    }
}
