extension Timeline {
    /// Plans a timer, breathing, workout or stretching session at `sampleRate` from its `score`:
    /// its spoken cues with `spokenClips` (aligned by index; `nil` leaves one out) in the narration
    /// lane, its sound cues from `sounds` (by name) over it, the end sound last, and the bed and
    /// loudness of `layers`.
    ///
    /// Every planned second becomes the lead-in plus `sampleRate.frames(atSeconds:)` of it.
    /// Announcements are placed by ``AnnouncementChain``; other spoken cues start late when the
    /// one before runs long (``TimelinePlanner/place(_:sessionEnd:)``). Sound cues are cut at the
    /// end; a sound that was not found is recorded once in ``skippedSounds``.
    package static func plan(
        score: SessionScore,
        script: Script,
        seed: UInt64,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        spokenClips: [SourcedClip?],
        sounds: [String: SoundChoice],
        layers: SessionLayers
    ) -> Timeline {
        precondition(spokenClips.count == score.spoken.count)
        func frames(atSeconds seconds: Double) -> Frames { layers.frame(atSeconds: seconds, sampleRate: sampleRate) }
        func chosen(_ name: String) -> ChosenSound? {
            if case .chosen(let sound)? = sounds[name] { return sound }
            return nil
        }

        // Announcements first: spoken ones and sounds alike never overlap and end by their deadline.
        var spokenStarts = score.spoken.map { frames(atSeconds: $0.atSeconds) }
        var soundStarts = score.sounds.map { frames(atSeconds: $0.atSeconds) }
        var chain: [(spoken: Bool, index: Int, entry: AnnouncementChain.Entry)] = []
        // Sounds first: at equal planned starts, `last-round` comes before the round's announcement.
        for (index, cue) in score.sounds.enumerated() {
            guard let deadline = cue.deadline, let sound = chosen(cue.name) else { continue }
            let entry = AnnouncementChain.Entry(
                plannedStart: soundStarts[index],
                frameCount: sound.source.frameCount(at: sampleRate),
                deadline: frames(atSeconds: deadline)
            )
            chain.append((false, index, entry))
        }
        for (index, cue) in score.spoken.enumerated() {
            guard let deadline = cue.deadline, let clip = spokenClips[index] else { continue }
            let entry = AnnouncementChain.Entry(
                plannedStart: spokenStarts[index],
                frameCount: clip.source.frameCount(at: sampleRate),
                deadline: frames(atSeconds: deadline),
                isSpoken: true
            )
            chain.append((true, index, entry))
        }
        // The cue sounds that are not announcements: speech keeps clear of them.
        let cueSpans: [Range<Frames>] = score.sounds.indices.compactMap { index in
            guard score.sounds[index].deadline == nil, let sound = chosen(score.sounds[index].name) else { return nil }
            return soundStarts[index]..<(soundStarts[index] + sound.source.frameCount(at: sampleRate))
        }
        var spokenCues = score.spoken.map(\.cue)
        var soundCues = score.sounds.map(\.cue)
        for (link, start) in zip(chain, AnnouncementChain.place(chain.map(\.entry), clearOf: cueSpans)) {
            let early = max(link.entry.plannedStart - start, .zero)
            if link.spoken {
                spokenStarts[link.index] = start
                spokenCues[link.index].earlyByFrames = early
            } else {
                soundStarts[link.index] = start
                soundCues[link.index].earlyByFrames = early
                soundCues[link.index].plannedStartFrame = link.entry.plannedStart
            }
        }

        var clips: [LaneClip] = []
        for (index, cue) in score.spoken.enumerated() {
            guard let clip = spokenClips[index] else { continue }
            clips.append(
                LaneClip(
                    clip: PlacedClip(
                        text: cue.text,
                        phase: cue.phase,
                        segmentId: nil,
                        plannedStartFrame: frames(atSeconds: cue.atSeconds),
                        lateByFrames: .zero,
                        key: clip.key
                    ),
                    source: clip.source,
                    marks: clip.marks,
                    marksUnavailable: clip.marksUnavailable,
                    content: { [spokenCue = spokenCues[index]] in
                        .spokenCue($0, $1, name: cue.name, cue: spokenCue)
                    },
                    placeAt: spokenStarts[index]
                )
            )
        }
        var skipped: [SkippedSound] = []
        let target = layers.loudnessTarget
        var timeline = Timeline(
            scriptId: script.id,
            category: script.category,
            title: script.title,
            seed: seed,
            sampleRate: sampleRate,
            channelCount: channelCount,
            items: TimelinePlanner.items(
                clips,
                sessionEnd: frames(atSeconds: score.endSeconds),
                layers: layers,
                bellCue: TimelineCue(role: "end"),
                skipped: &skipped,
                sampleRate: sampleRate
            ),
            leadInFrames: layers.leadIn,
            loudness: target.map {
                TimelineLoudness(
                    target: $0,
                    ceiling: layers.truePeakCeiling,
                    anchor: layers.loudnessAnchor,
                    speechLeveling: layers.levelsSpeech
                )
            },
            sessionKind: script.kind.name
        )

        var overlayCues: [OverlayPlanner.Cue] = []
        var skippedNames = Set<String>()
        for (index, cue) in score.sounds.enumerated() {
            switch sounds[cue.name] {
            case .chosen(let sound)?:
                let isGong = ["start", "interval", "block-change", "transition"].contains(cue.cue.role)
                overlayCues.append(
                    OverlayPlanner.Cue(
                        sound: sound,
                        kind: isGong ? .gong : .cue,
                        start: soundStarts[index],
                        cue: soundCues[index]
                    )
                )
            case .skipped(let sound)?:
                if skippedNames.insert(cue.name).inserted { skipped.append(sound) }
            case nil:
                preconditionFailure("every sound of a score is looked up before planning: \(cue.name)")
            }
        }
        OverlayPlanner.place(
            layers,
            intervalStarts: [],
            cues: overlayCues,
            bedStart: score.bedStartSeconds.map(frames(atSeconds:)),
            bedEnd: score.bedEndSeconds.map(frames(atSeconds:)),
            in: &timeline,
            skipped: &skipped
        )
        timeline.skippedSounds = skipped

        let total = timeline.totalFrames
        var phases: [TimelinePhase] = []
        for phase in score.phases {
            let start = phases.isEmpty ? Frames.zero : min(frames(atSeconds: phase.startSeconds), total)
            if let last = phases.last, last.startFrame == start {
                phases[phases.count - 1].name = phase.name
                continue
            }
            if !phases.isEmpty { phases[phases.count - 1].endFrame = start }
            phases.append(TimelinePhase(name: phase.name, startFrame: start, endFrame: total))
        }
        timeline.definedPhases = phases
        return timeline
    }
}
