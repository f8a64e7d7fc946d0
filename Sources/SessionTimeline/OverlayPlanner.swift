/// The gap arithmetic of overlays: where the bed, the start gong and the interval gongs play.
///
/// The narration lane is planned first and fixes the output's length; overlays are placed over it
/// and cut at its end, so they never lengthen the file. docs/sound.md states the rules.
enum OverlayPlanner {
    /// Adds `layers`' overlays to `timeline` (sorted by start; the bed first among equals) and the
    /// sounds that were not found to `skipped`. `intervalStarts` are the interval gongs' frames.
    static func place(
        _ layers: SessionLayers,
        intervalStarts: [Frames],
        in timeline: inout Timeline,
        skipped: inout [SkippedSound]
    ) {
        let end = timeline.totalFrames
        let sampleRate = timeline.sampleRate
        var overlays: [TimelineOverlay] = []
        func gain(of sound: ChosenSound) -> Double {
            sound.gain * Loudness.normalizingGain(measured: sound.source.loudness, target: layers.loudnessTarget)
        }
        func cue(_ choice: SoundChoice?, kind: TimelineOverlay.Kind, at starts: [Frames]) {
            switch choice {
            case .chosen(let sound)?:
                let length = sampleRate.frames(converting: sound.source.frameCount, from: sound.source.sampleRate)
                for start in starts where start < end {
                    overlays.append(
                        TimelineOverlay(
                            index: 0,
                            lane: .cues,
                            kind: kind,
                            name: sound.name,
                            startFrame: start,
                            frameCount: min(length, end - start),
                            gain: gain(of: sound),
                            source: sound.source
                        )
                    )
                }
            case .skipped(let sound)?: skipped.append(sound)
            case nil: break
            }
        }

        switch layers.ambience {
        case .chosen(let sound)? where end > .zero:
            let period = sampleRate.frames(converting: sound.source.frameCount, from: sound.source.sampleRate)
            // Fades that would overlap are shortened in proportion, so they meet without a plateau.
            var fadeIn = layers.ambienceFadeIn
            var fadeOut = layers.ambienceFadeOut
            if fadeIn + fadeOut > end {
                let total = fadeIn + fadeOut
                fadeIn = Frames(fadeIn.count * end.count / total.count)
                fadeOut = end - fadeIn
            }
            overlays.append(
                TimelineOverlay(
                    index: 0,
                    lane: .ambience,
                    kind: .ambience,
                    name: sound.name,
                    startFrame: .zero,
                    frameCount: end,
                    gain: gain(of: sound),
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
        cue(layers.startGong, kind: .gong, at: [.zero])
        cue(layers.intervalGong, kind: .gong, at: intervalStarts)

        overlays.sort { ($0.startFrame, $0.lane == .ambience ? 0 : 1) < ($1.startFrame, $1.lane == .ambience ? 0 : 1) }
        for index in overlays.indices { overlays[index].index = index }
        timeline.overlays = overlays
    }
}
