/// The gap arithmetic of overlays: where the bed, the start gong and the interval gongs play.
///
/// The narration lane is planned first and fixes the output's length; overlays are placed over it
/// and cut at its end, so they never lengthen the file. docs/sound.md states the rules.
enum OverlayPlanner {
    /// A sound a session's kind plays at a frame, with what it is.
    struct Cue {
        var sound: ChosenSound
        var kind: TimelineOverlay.Kind
        var start: Frames
        var cue: TimelineCue
    }

    /// Adds `layers`' overlays and `cues` to `timeline` (sorted by start; the bed first among
    /// equals) and the sounds that were not found to `skipped`. `intervalStarts` are the interval
    /// gongs' frames; the bed runs from `bedStart` (the lead-in's end when `nil`, as the start gong
    /// rings there; frame 0 with ``SessionLayers/soundsOverLeadIn``) to `bedEnd` (the end when
    /// `nil`, never past it).
    static func place(
        _ layers: SessionLayers,
        intervalStarts: [Frames],
        cues: [Cue] = [],
        bedStart: Frames? = nil,
        bedEnd: Frames? = nil,
        in timeline: inout Timeline,
        skipped: inout [SkippedSound]
    ) {
        let end = timeline.totalFrames
        let sampleRate = timeline.sampleRate
        // Seed 002: the countdown is silent; the start gong and the bed begin when it ends.
        let soundsStart = layers.soundsStart
        let bedStart = bedStart ?? soundsStart
        var overlays: [TimelineOverlay] = []
        func gain(of sound: ChosenSound, as kind: TimelineOverlay.Kind) -> Double {
            Loudness.soundGain(sound, as: kind, in: layers)
        }
        /// `sound` from `start`, cut at the end; nothing if it would start there or later.
        func play(_ sound: ChosenSound, kind: TimelineOverlay.Kind, at start: Frames, cue: TimelineCue? = nil) {
            guard start < end else { return }
            let length = sound.source.frameCount(at: sampleRate)
            overlays.append(
                TimelineOverlay(
                    index: 0,
                    lane: .cues,
                    kind: kind,
                    name: sound.name,
                    startFrame: start,
                    frameCount: min(length, end - start),
                    gain: gain(of: sound, as: kind),
                    source: sound.source,
                    cue: cue
                )
            )
        }
        func cue(_ choice: SoundChoice?, kind: TimelineOverlay.Kind, at starts: [Frames]) {
            switch choice {
            case .chosen(let sound)?: for start in starts { play(sound, kind: kind, at: start) }
            case .skipped(let sound)?: skipped.append(sound)
            case nil: break
            }
        }

        let bedEnd = min(end, bedEnd ?? end)
        switch layers.ambience {
        case .chosen(let sound)? where bedEnd > bedStart:
            let period = sound.source.frameCount(at: sampleRate)
            let span = bedEnd - bedStart
            // Fades that would overlap are shortened in proportion, so they meet without a plateau.
            var fadeIn = layers.ambienceFadeIn
            var fadeOut = layers.ambienceFadeOut
            if fadeIn + fadeOut > span {
                let total = fadeIn + fadeOut
                fadeIn = Frames(fadeIn.count * span.count / total.count)
                fadeOut = span - fadeIn
            }
            overlays.append(
                TimelineOverlay(
                    index: 0,
                    lane: .ambience,
                    kind: .ambience,
                    name: sound.name,
                    startFrame: bedStart,
                    frameCount: span,
                    gain: gain(of: sound, as: .ambience),
                    source: sound.source,
                    bed: TimelineOverlay.Bed(
                        loopCrossfadeFrames: TimelineOverlay.Bed.loopCrossfade(
                            period: period,
                            preferred: layers.loopCrossfade
                        ),
                        fadeInFrames: fadeIn,
                        fadeOutFrames: fadeOut,
                        duckDecibels: layers.duckDecibels,
                        duckRampFrames: layers.duckRamp
                    )
                )
            )
        case .skipped(let sound)?: skipped.append(sound)
        default: break
        }
        cue(layers.startGong, kind: .gong, at: [soundsStart])
        cue(layers.intervalGong, kind: .gong, at: intervalStarts)
        for cue in cues { play(cue.sound, kind: cue.kind, at: cue.start, cue: cue.cue) }

        overlays.sort { ($0.startFrame, $0.lane == .ambience ? 0 : 1) < ($1.startFrame, $1.lane == .ambience ? 0 : 1) }
        for index in overlays.indices { overlays[index].index = index }
        timeline.overlays = overlays
    }
}
