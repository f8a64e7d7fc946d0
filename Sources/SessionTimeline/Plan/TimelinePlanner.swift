/// The gap arithmetic of a session: where each clip lands, where silence goes, where the bell starts.
///
/// This is the seed app's `buildTimeline` in integer frames. docs/timing.md states the rules.
package enum TimelinePlanner {
    /// A clip to place: when the script wants it and how long it is at the output rate.
    package struct Cue: Sendable, Equatable {
        /// The planned start.
        package var plannedStart: Frames
        /// The clip's length.
        package var frameCount: Frames

        package init(plannedStart: Frames, frameCount: Frames) {
            self.plannedStart = plannedStart
            self.frameCount = frameCount
        }
    }

    /// One placed stretch of the output.
    package enum Stretch: Sendable, Equatable {
        /// Cue `cue` (its index in the input) placed at `start`, `lateBy` frames after its planned
        /// start, for `cause` (`nil` when on time).
        case clip(cue: Int, start: Frames, lateBy: Frames, cause: PlacedClip.LateCause?)
        /// Silence of `frameCount` frames from `start`.
        case silence(start: Frames, frameCount: Frames)
        /// The bell from `start`.
        case bell(start: Frames)
    }

    /// Places `cues` in time order, fills positive gaps with silence, pads with silence to
    /// `sessionEnd`, and puts the bell last.
    ///
    /// Cues are ordered by planned start; equal starts keep their input order (pass segments
    /// before interjections, each in script order). A cursor walks from frame 0: a cue planned
    /// after the cursor is preceded by silence up to its planned start; a cue planned before the
    /// cursor (the previous clip ran long) starts at the cursor and is late by the difference.
    /// A cue that would then start inside one of `strikes` (a gong's strike, in time order)
    /// starts at its end instead, late for the gong. After the last cue, silence runs to
    /// `sessionEnd` if the cursor has not passed it; the bell starts where that leaves off.
    package static func place(_ cues: [Cue], sessionEnd: Frames, strikes: [Range<Frames>] = []) -> [Stretch] {
        let order = cues.indices.sorted { (cues[$0].plannedStart, $0) < (cues[$1].plannedStart, $1) }
        var stretches: [Stretch] = []
        stretches.reserveCapacity(cues.count * 2 + 2)
        var cursor = Frames.zero
        for index in order {
            let cue = cues[index]
            var start = max(cursor, cue.plannedStart)
            var cause: PlacedClip.LateCause? = start > cue.plannedStart ? .clipBefore : nil
            // Strikes are in time order: one that ends past `start` after another moved it is later.
            for strike in strikes where strike.contains(start) {
                start = strike.upperBound
                cause = .gong
            }
            if start > cursor {
                stretches.append(.silence(start: cursor, frameCount: start - cursor))
            }
            stretches.append(.clip(cue: index, start: start, lateBy: start - cue.plannedStart, cause: cause))
            cursor = start + cue.frameCount
        }
        if sessionEnd > cursor {
            stretches.append(.silence(start: cursor, frameCount: sessionEnd - cursor))
            cursor = sessionEnd
        }
        stretches.append(.bell(start: cursor))
        return stretches
    }
}

/// A clip chosen for a cue: its cache key, its measured source, and where its words are.
package struct SourcedClip: Sendable, Equatable {
    /// The clip's cache key.
    package var key: String
    /// The clip's file, rate and exact length.
    package var source: AudioSourceInfo
    /// Where its words and sentences are in it, when its engine said; `nil` when not known.
    package var marks: SpeechMarks?
    /// Why there are no `marks`, when there are none (``PlacedClip/wordsUnavailable``).
    package var marksUnavailable: String?

    package init(key: String, source: AudioSourceInfo, marks: SpeechMarks? = nil, marksUnavailable: String? = nil) {
        self.key = key
        self.source = source
        self.marks = marks
        self.marksUnavailable = marks == nil ? marksUnavailable : nil
    }
}

extension Timeline {
    /// Plans `script`'s guided `session` at `sampleRate`: its segments with `segmentClips`, the resolved
    /// interjections with `interjectionClips` (both aligned by index), the bell last, and the
    /// overlays of `layers`. A `nil` clip is left out: its slot stays silent.
    ///
    /// Every planned start is the lead-in plus `sampleRate.frames(atSeconds:)` of the script's
    /// seconds, and every clip's length is its source length converted with
    /// `sampleRate.frames(converting:from:)`. Overlays never extend the output.
    package static func plan(
        script: Script,
        session: GuidedSession,
        seed: UInt64,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        segmentClips: [SourcedClip?],
        interjections: [ResolvedInterjection],
        interjectionClips: [SourcedClip?],
        layers: SessionLayers
    ) -> Timeline {
        precondition(segmentClips.count == session.segments.count && interjectionClips.count == interjections.count)
        func frames(atSeconds seconds: Double) -> Frames { layers.frame(atSeconds: seconds, sampleRate: sampleRate) }
        let target = layers.loudnessTarget

        var clips: [LaneClip] = []
        for (segment, clip) in zip(session.segments, segmentClips) {
            guard let clip else { continue }
            clips.append(
                LaneClip(
                    clip: PlacedClip(
                        text: segment.text,
                        phase: segment.phase,
                        segmentId: segment.id,
                        plannedStartFrame: frames(atSeconds: segment.startSeconds),
                        lateByFrames: .zero,
                        key: clip.key
                    ),
                    source: clip.source,
                    marks: clip.marks,
                    marksUnavailable: clip.marksUnavailable,
                    content: TimelineItem.Content.segment
                )
            )
        }
        for (interjection, clip) in zip(interjections, interjectionClips) {
            guard let clip else { continue }
            clips.append(
                LaneClip(
                    clip: PlacedClip(
                        text: interjection.text,
                        // Named once placed: the phase it starts in (namingInterjectionPhases).
                        phase: "interjection",
                        segmentId: nil,
                        plannedStartFrame: frames(atSeconds: interjection.plannedSeconds),
                        lateByFrames: .zero,
                        key: clip.key
                    ),
                    source: clip.source,
                    marks: clip.marks,
                    marksUnavailable: clip.marksUnavailable,
                    content: TimelineItem.Content.interjection
                )
            )
        }
        // Gongs at N, 2N, … seconds from the script's 0 while before its end (k × N, never a running sum).
        let intervalStarts =
            layers.intervalSeconds.map {
                SessionLayers.intervals(from: 0, every: $0, before: script.durationSeconds).map(frames(atSeconds:))
            } ?? []
        var skipped: [SkippedSound] = []
        let items = TimelinePlanner.items(
            clips,
            sessionEnd: frames(atSeconds: script.durationSeconds),
            layers: layers,
            strikes: layers.gongStrikes(intervalStarts: intervalStarts, sampleRate: sampleRate),
            skipped: &skipped,
            sampleRate: sampleRate
        )
        var timeline = Timeline(
            scriptId: script.id,
            category: script.category,
            title: script.title,
            seed: seed,
            sampleRate: sampleRate,
            channelCount: channelCount,
            items: items,
            leadInFrames: layers.leadIn,
            loudness: target.map {
                TimelineLoudness(
                    target: $0,
                    ceiling: layers.truePeakCeiling,
                    anchor: layers.loudnessAnchor,
                    speechLeveling: layers.levelsSpeech
                )
            }
        )
        OverlayPlanner.place(layers, intervalStarts: intervalStarts, in: &timeline, skipped: &skipped)
        timeline.skippedSounds = skipped
        if layers.marksSilence { timeline = timeline.markingSilence() }
        return namingInterjectionPhases(timeline)
    }

    /// `timeline` with each interjection's `phase` the name of the phase it starts in (a `silence`
    /// phase, or the phase of the segments around it), as the phases, positions and queues name
    /// it: one phase name per item everywhere. Its kind already says it is an interjection.
    private static func namingInterjectionPhases(_ timeline: Timeline) -> Timeline {
        var named = timeline
        let phases = timeline.phases
        for (index, item) in timeline.items.enumerated() {
            guard case .interjection(var clip, let audio) = item.content,
                let phase = phases.last(where: { $0.startFrame <= item.startFrame })
            else { continue }
            clip.phase = phase.name
            named.items[index].content = .interjection(clip, audio)
        }
        return named
    }
}

/// A spoken clip on its way into the narration lane: what its item records, and where the
/// placing rule is asked to put it (its planned start, or an announcement's moved start).
struct LaneClip {
    var clip: PlacedClip
    var source: AudioSourceInfo
    /// Where the clip's words are in it, to be placed with it.
    var marks: SpeechMarks?
    /// Why it has no `marks`, when it has none.
    var marksUnavailable: String?
    /// The item it becomes once placed (its lateness set) and given its gain.
    var content: (PlacedClip, ItemAudio) -> TimelineItem.Content
    /// Where it is placed from; `nil` is its planned start.
    var placeAt: Frames? = nil
}

extension TimelinePlanner {
    /// The narration lane of `clips`: placed by ``place(_:sessionEnd:)``, silence between,
    /// `layers`' bell (if chosen) last. A clip's `lateByFrames` is how far after its planned start
    /// it starts; a skipped bell is added to `skipped`.
    static func items(
        _ clips: [LaneClip],
        sessionEnd: Frames,
        layers: SessionLayers,
        bellCue: TimelineCue? = nil,
        strikes: [Range<Frames>] = [],
        skipped: inout [SkippedSound],
        sampleRate: SampleRate
    ) -> [TimelineItem] {
        var chosenBell: ChosenSound?
        switch layers.bell {
        case .chosen(let sound)?: chosenBell = sound
        case .skipped(let sound)?: skipped.append(sound)
        case nil: break
        }
        let cues = clips.map {
            Cue(plannedStart: $0.placeAt ?? $0.clip.plannedStartFrame, frameCount: $0.source.frameCount(at: sampleRate))
        }
        var items: [TimelineItem] = []
        for stretch in place(cues, sessionEnd: sessionEnd, strikes: strikes) {
            let index = items.count
            switch stretch {
            case .clip(let cue, let start, _, let cause):
                let lane = clips[cue]
                var clip = lane.clip
                clip.lateByFrames = max(start - clip.plannedStartFrame, .zero)
                clip.lateCause = clip.lateByFrames > .zero ? cause ?? .clipBefore : nil
                if let marks = lane.marks {
                    (clip.words, clip.sentences) = marks.placed(at: start, in: sampleRate)
                } else {
                    clip.wordsUnavailable = lane.marksUnavailable
                }
                let gain = Loudness.speechGain(lane.source, in: layers)
                items.append(
                    TimelineItem(
                        index: index,
                        startFrame: start,
                        frameCount: cues[cue].frameCount,
                        content: lane.content(clip, ItemAudio(source: lane.source, gain: gain))
                    )
                )
            case .silence(let start, let frameCount):
                items.append(TimelineItem(index: index, startFrame: start, frameCount: frameCount, content: .silence))
            case .bell(let start):
                guard let bell = chosenBell else { continue }
                let gain = Loudness.soundGain(bell, as: .bell, in: layers)
                items.append(
                    TimelineItem(
                        index: index,
                        startFrame: start,
                        frameCount: bell.source.frameCount(at: sampleRate),
                        content: .bell(ItemAudio(source: bell.source, gain: gain), name: bell.name, cue: bellCue)
                    )
                )
            }
        }
        return items
    }
}
