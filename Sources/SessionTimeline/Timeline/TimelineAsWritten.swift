extension Timeline {
    /// The timeline as its JSON reads back: each source's path and each sound's name as a
    /// timeline writes them, without this machine's folders (``AudioSourceInfo/written(_:inside:)``).
    /// What a test compares a timeline read from a file with.
    package var asWritten: Timeline {
        func written(_ audio: ItemAudio) -> ItemAudio {
            var audio = audio
            audio.source = written(audio.source)
            return audio
        }
        func written(_ source: AudioSourceInfo) -> AudioSourceInfo {
            var source = source
            source.path = source.path.map { AudioSourceInfo.written($0, inside: source.libraryFolder) }
            source.libraryFolder = nil
            return source
        }
        var timeline = self
        for (index, item) in items.enumerated() {
            timeline.items[index].content =
                switch item.content {
                case .silence, .recorded: item.content
                case .segment(let clip, let audio): .segment(clip, written(audio))
                case .spokenCue(let clip, let audio, let name, let cue):
                    .spokenCue(clip, written(audio), name: name, cue: cue)
                case .interjection(let clip, let audio): .interjection(clip, written(audio))
                case .bell(let audio, let name, let cue):
                    .bell(written(audio), name: AudioSourceInfo.writtenName(name), cue: cue)
                }
        }
        for index in overlays.indices {
            timeline.overlays[index].source = written(overlays[index].source)
            timeline.overlays[index].name = AudioSourceInfo.writtenName(overlays[index].name)
        }
        timeline.skippedSounds = skippedSounds.map(\.written)
        return timeline
    }
}
