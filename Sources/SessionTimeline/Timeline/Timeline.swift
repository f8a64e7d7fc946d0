/// A rendered session's plan: the narration lane (every item placed at an exact frame,
/// contiguous from frame 0) and the overlays mixed over it.
///
/// The renderer writes exactly what a timeline says, so a timeline printed without rendering is
/// always the one a render with the same inputs and seed would follow. Its JSON form
/// (schema in docs/timeline.md) is what apps read to show the session's progress.
public struct Timeline: Sendable, Equatable, Codable {
    /// The version of the JSON schema this type writes.
    public static let schemaVersion = 3
    /// The versions this type reads: version 1 is read as a timeline with no overlays, version 2
    /// with its names of the loudness ceiling and integrated loudness (`truePeakCeiling`, `integrated`).
    package static let readableSchemaVersions = 1...3

    /// The script's id.
    public var scriptId: String
    /// The category the script belongs to (`reactivity`; a kind's name for the other kinds), what
    /// the seed app persists as `guidedCategory`; `nil` in a timeline written before it was kept.
    public var category: String?
    /// The script's title.
    public var title: String
    /// The seed that made the interjections' random choices.
    public var seed: UInt64
    /// The output's sample rate.
    public var sampleRate: SampleRate
    /// The output's channel count.
    public var channelCount: ChannelCount
    /// The narration lane in order; each item starts where the one before it ends.
    public var items: [TimelineItem]
    /// Where the script's time 0 is in the output: the lead-in before it.
    public var leadInFrames: Frames
    /// Sounds mixed over the narration lane, by start frame.
    public var overlays: [TimelineOverlay]
    /// Sounds asked for but not found, and so left out.
    public var skippedSounds: [SkippedSound]
    /// The loudness target and ceiling, and the output's measurement once rendered; `nil` when loudness is off.
    public var loudness: TimelineLoudness?
    /// The session's kind when it is not a guided script (`timer`, `breathing`, …); `nil` for guided.
    public var sessionKind: String?
    /// The session's own parts (warm-up, work, rest, breathing blocks, …), tiling the output, for
    /// kinds that define them; `nil` when ``phases`` come from the narration's segments.
    package var definedPhases: [TimelinePhase]?
    /// How the audio file was encoded, once one is written; `nil` for a timeline alone.
    public var encoding: AudioEncoding?
    /// The size and SHA-256 of the file the render wrote; `nil` for a timeline alone, or for audio
    /// written to standard output or a FIFO, which leave no file to check.
    package var audioFile: AudioFileStamp?
    /// The voice the clips are spoken in (`piper:en_US-joe-medium`, `espeak:en-us`); `nil` when not known.
    public var voice: String?
    /// The voice asked for, when it could not be had and ``voice`` stood in for it; `nil` otherwise.
    public var requestedVoice: String?

    /// The output's length: the end of the last item.
    public var totalFrames: Frames { items.last.map { $0.startFrame + $0.frameCount } ?? .zero }

    /// The output's length in seconds, for messages (library users have
    /// `sampleRate.seconds(of: totalFrames)`: time is frames, seconds only at the edges).
    package var durationSeconds: Double { sampleRate.seconds(of: totalFrames) }

    package init(
        scriptId: String,
        category: String? = nil,
        title: String,
        seed: UInt64,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        items: [TimelineItem],
        leadInFrames: Frames = .zero,
        overlays: [TimelineOverlay] = [],
        skippedSounds: [SkippedSound] = [],
        loudness: TimelineLoudness? = nil,
        sessionKind: String? = nil,
        definedPhases: [TimelinePhase]? = nil
    ) {
        self.scriptId = scriptId
        self.category = category
        self.title = title
        self.seed = seed
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.items = items
        self.leadInFrames = leadInFrames
        self.overlays = overlays
        self.skippedSounds = skippedSounds
        self.loudness = loudness
        self.sessionKind = sessionKind
        self.definedPhases = definedPhases
    }

    /// The session's phases, tiling the output: ``definedPhases`` when the kind defines them, else
    /// runs of segments with one phase name, in time order. The first starts at frame 0 (lead-in included), each later one where its first
    /// segment starts, and each ends where the next starts; the last ends at ``totalFrames``.
    /// Interjections and the bell belong to whichever phase they fall in.
    public var phases: [TimelinePhase] { definedPhases ?? narrationPhases }

    /// This timeline with a `silence` phase in each phase (but the last) whose speech ends before
    /// the next phase starts with only interjections after it: from where the phase's last segment
    /// ends to where the next phase starts, when an interjection starts in that span. Seed 000's
    /// app shows Opening → Teachings → Silence → Closing; an interjection in the silence belongs
    /// to it. A phase with no interjection after its speech keeps its gap.
    package func markingSilence() -> Timeline {
        let phases = narrationPhases
        var marked: [TimelinePhase] = []
        for (index, phase) in phases.enumerated() {
            guard index + 1 < phases.count else {
                marked.append(phase)
                continue
            }
            let next = phases[index + 1].startFrame
            let speechEnd = items.filter {
                $0.kind == .segment && $0.startFrame >= phase.startFrame && $0.startFrame < next
            }
            .map { $0.startFrame + $0.frameCount }.max()
            guard let speechEnd, speechEnd < next,
                items.contains(where: { $0.kind == .interjection && $0.startFrame >= speechEnd && $0.startFrame < next }
                )
            else {
                marked.append(phase)
                continue
            }
            marked.append(TimelinePhase(name: phase.name, startFrame: phase.startFrame, endFrame: speechEnd))
            marked.append(TimelinePhase(name: "silence", startFrame: speechEnd, endFrame: next))
        }
        var timeline = self
        if marked.count != phases.count { timeline.definedPhases = marked }
        return timeline
    }

    /// One chapter per phase, named as the phase: what an audio file's chapters are made from.
    public var chapters: [AudioChapter] {
        phases.map { AudioChapter(title: $0.name, startFrame: $0.startFrame, endFrame: $0.endFrame) }
    }

    private var narrationPhases: [TimelinePhase] {
        var phases: [TimelinePhase] = []
        for item in items where item.kind == .segment {
            guard let name = item.clip?.phase, phases.last?.name != name else { continue }
            if phases.isEmpty {
                phases.append(TimelinePhase(name: name, startFrame: .zero, endFrame: .zero))
            } else {
                phases[phases.count - 1].endFrame = item.startFrame
                phases.append(TimelinePhase(name: name, startFrame: item.startFrame, endFrame: .zero))
            }
        }
        if !phases.isEmpty { phases[phases.count - 1].endFrame = totalFrames }
        return phases
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion, scriptId, category, title, seed, sampleRate, totalFrames, durationSeconds, items
        case leadInFrames, leadInSeconds, overlays, phases, skippedSounds, loudness
        case sessionKind = "kind"
        case encoding, audioFile, voice, requestedVoice
        /// The JSON name of ``Timeline/channelCount``.
        case channelCount = "channels"
    }

    private enum PhaseKeys: String, CodingKey {
        case name, startFrame, endFrame, startSeconds, endSeconds, speechLoudness
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schemaVersion, forKey: .schemaVersion)
        try container.encodeIfPresent(sessionKind, forKey: .sessionKind)
        try container.encode(scriptId, forKey: .scriptId)
        try container.encodeIfPresent(category, forKey: .category)
        try container.encode(title, forKey: .title)
        try container.encode(seed, forKey: .seed)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(channelCount, forKey: .channelCount)
        try container.encode(totalFrames, forKey: .totalFrames)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encodeIfPresent(voice, forKey: .voice)
        try container.encodeIfPresent(requestedVoice, forKey: .requestedVoice)
        try container.encode(leadInFrames, forKey: .leadInFrames)
        try container.encode(sampleRate.seconds(of: leadInFrames), forKey: .leadInSeconds)
        var itemsContainer = container.nestedUnkeyedContainer(forKey: .items)
        for item in items {
            try item.encode(to: itemsContainer.superEncoder(), sampleRate: sampleRate)
        }
        var overlaysContainer = container.nestedUnkeyedContainer(forKey: .overlays)
        for overlay in overlays {
            try overlay.encode(to: overlaysContainer.superEncoder(), sampleRate: sampleRate)
        }
        var phasesContainer = container.nestedUnkeyedContainer(forKey: .phases)
        let phaseSpeech = loudness?.phaseSpeech ?? []
        for (index, phase) in phases.enumerated() {
            var phaseContainer = phasesContainer.nestedContainer(keyedBy: PhaseKeys.self)
            try phaseContainer.encode(phase.name, forKey: .name)
            try phaseContainer.encode(phase.startFrame, forKey: .startFrame)
            try phaseContainer.encode(phase.endFrame, forKey: .endFrame)
            try phaseContainer.encode(sampleRate.seconds(of: phase.startFrame), forKey: .startSeconds)
            try phaseContainer.encode(sampleRate.seconds(of: phase.endFrame), forKey: .endSeconds)
            if phaseSpeech.indices.contains(index) {
                try phaseContainer.encode(phaseSpeech[index].map(Self.rounded), forKey: .speechLoudness)
            }
        }
        try container.encode(skippedSounds.map(\.written), forKey: .skippedSounds)
        if let loudness {
            try container.encode(loudness, forKey: .loudness)
        } else {
            try container.encodeNil(forKey: .loudness)
        }
        try container.encodeIfPresent(encoding, forKey: .encoding)
        try container.encodeIfPresent(audioFile, forKey: .audioFile)
    }

    /// The timeline with every item and overlay `decibels` louder than it plays now.
    package func scalingGains(byDecibels decibels: Double) -> Timeline {
        let factor = Loudness.linear(decibels: decibels)
        var scaled = self
        for index in scaled.items.indices { scaled.items[index].scaleGain(by: factor) }
        for index in scaled.overlays.indices { scaled.overlays[index].gain *= factor }
        return scaled
    }

    /// A measurement to 0.01 dB, as meters show it: the JSON does not carry noise digits.
    package static func rounded(_ decibels: Double) -> Double {
        (decibels * 100).rounded() / 100
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .schemaVersion)
        guard Self.readableSchemaVersions.contains(version) else {
            throw DecodingError.dataCorruptedError(
                forKey: .schemaVersion,
                in: container,
                debugDescription:
                    "schemaVersion \(version) is not supported; this version reads \(Self.readableSchemaVersions.lowerBound) to \(Self.readableSchemaVersions.upperBound)"
            )
        }
        scriptId = try container.decode(String.self, forKey: .scriptId)
        title = try container.decode(String.self, forKey: .title)
        seed = try container.decode(UInt64.self, forKey: .seed)
        sampleRate = try container.decode(SampleRate.self, forKey: .sampleRate)
        channelCount = try container.decode(ChannelCount.self, forKey: .channelCount)
        items = try container.decode([TimelineItem].self, forKey: .items)
        leadInFrames = try container.decodeIfPresent(Frames.self, forKey: .leadInFrames) ?? .zero
        overlays = try container.decodeIfPresent([TimelineOverlay].self, forKey: .overlays) ?? []
        skippedSounds = try container.decodeIfPresent([SkippedSound].self, forKey: .skippedSounds) ?? []
        if container.contains(.loudness), try !container.decodeNil(forKey: .loudness) {
            loudness = try container.decode(TimelineLoudness.self, forKey: .loudness)
        } else {
            loudness = nil
        }
        sessionKind = try container.decodeIfPresent(String.self, forKey: .sessionKind)
        category = try container.decodeIfPresent(String.self, forKey: .category)
        encoding = try container.decodeIfPresent(AudioEncoding.self, forKey: .encoding)
        audioFile = try container.decodeIfPresent(AudioFileStamp.self, forKey: .audioFile)
        voice = try container.decodeIfPresent(String.self, forKey: .voice)
        requestedVoice = try container.decodeIfPresent(String.self, forKey: .requestedVoice)
        definedPhases = nil
        if container.contains(.phases) {
            var phasesContainer = try container.nestedUnkeyedContainer(forKey: .phases)
            var written: [TimelinePhase] = []
            var phaseSpeech: [Double?] = []
            while !phasesContainer.isAtEnd {
                let phase = try phasesContainer.nestedContainer(keyedBy: PhaseKeys.self)
                if phase.contains(.speechLoudness) {
                    phaseSpeech.append(try phase.decodeIfPresent(Double.self, forKey: .speechLoudness))
                }
                written.append(
                    TimelinePhase(
                        name: try phase.decode(String.self, forKey: .name),
                        startFrame: try phase.decode(Frames.self, forKey: .startFrame),
                        endFrame: try phase.decode(Frames.self, forKey: .endFrame)
                    )
                )
            }
            // Phases the narration does not imply were the kind's own.
            if written != narrationPhases { definedPhases = written }
            if phaseSpeech.count == written.count { loudness?.phaseSpeech = phaseSpeech }
        }
        try checkEnds(codingPath: decoder.codingPath)
    }

    /// Refuses a timeline with an item, overlay or phase that ends past ten days at its rate
    /// (``SampleRate/maximumSeconds``), or a phase that ends before it starts, naming the first
    /// one: what reads a timeline (a picture's axis, a position's arithmetic) may then rely on
    /// every frame being a plausible place in a session.
    private func checkEnds(codingPath: [any CodingKey]) throws {
        let limit = Frames(Int64(sampleRate.hertz) * Int64(SampleRate.maximumSeconds))
        func refuse(_ list: String, _ index: Int, _ problem: String) -> DecodingError {
            let place = codingPath + [PathKey(list), PathKey(index)]
            return .dataCorrupted(DecodingError.Context(codingPath: place, debugDescription: problem))
        }
        let past = "ends past ten days at \(sampleRate)"
        for (index, item) in items.enumerated() where item.startFrame + item.frameCount > limit {
            throw refuse("items", index, past)
        }
        for (index, overlay) in overlays.enumerated() where overlay.startFrame + overlay.frameCount > limit {
            throw refuse("overlays", index, past)
        }
        for (index, phase) in (definedPhases ?? []).enumerated() {
            if phase.endFrame > limit { throw refuse("phases", index, past) }
            if phase.endFrame < phase.startFrame { throw refuse("phases", index, "ends before it starts") }
        }
    }
}

/// One stretch of a timeline: a spoken clip, silence, or the bell.
public struct TimelineItem: Sendable, Equatable, Decodable {
    /// What an item holds, as its JSON `kind` names it.
    public enum Kind: String, Sendable, Codable {
        /// A script segment's clip, or a spoken cue of a session of another kind.
        case segment
        /// An interjection's chosen clip.
        case interjection
        /// Digital silence: every sample zero.
        case silence
        /// The closing bell.
        case bell
    }

    /// What an item plays, each kind with exactly what it needs: a planned item is always one of
    /// the first five, so the renderer finds every sound it is asked to play.
    package enum Content: Sendable, Equatable {
        /// Digital silence: every sample zero.
        case silence
        /// A guided script's segment.
        case segment(PlacedClip, ItemAudio)
        /// A spoken cue of a timer, breathing, workout or stretching session (a `segment` in JSON):
        /// its name (`round-3`, `einatmen`, a stretch's id) and what it is.
        case spokenCue(PlacedClip, ItemAudio, name: String, cue: TimelineCue)
        /// An interjection's chosen clip.
        case interjection(PlacedClip, ItemAudio)
        /// The closing bell, by the name it was chosen by (a library name or a path); sessions of
        /// other kinds give it their `end` cue.
        case bell(ItemAudio, name: String, cue: TimelineCue?)
        /// An item a timeline file gives without what its kind has when planned (a timeline written
        /// by hand for `position`, whose clips have no source), kept as read: only ever read back.
        case recorded(RecordedItem)
    }

    /// The item's position in ``Timeline/items``.
    public var index: Int
    /// Where the item starts in the output.
    public var startFrame: Frames
    /// The item's length in the output.
    public var frameCount: Frames
    /// What the item plays.
    package var content: Content

    package init(index: Int, startFrame: Frames, frameCount: Frames, content: Content) {
        self.index = index
        self.startFrame = startFrame
        self.frameCount = frameCount
        self.content = content
    }

    /// What the item holds.
    public var kind: Kind {
        switch content {
        case .silence: .silence
        case .segment, .spokenCue: .segment
        case .interjection: .interjection
        case .bell: .bell
        case .recorded(let item): item.kind
        }
    }

    /// The spoken clip, for segments and interjections.
    public var clip: PlacedClip? {
        switch content {
        case .segment(let clip, _), .spokenCue(let clip, _, _, _), .interjection(let clip, _): clip
        case .silence, .bell: nil
        case .recorded(let item): item.clip
        }
    }

    /// What the item plays and at what gain; `nil` for silence.
    package var audio: ItemAudio? {
        switch content {
        case .segment(_, let audio), .spokenCue(_, let audio, _, _), .interjection(_, let audio):
            audio
        case .bell(let audio, _, _): audio
        case .silence: nil
        case .recorded(let item): item.audio
        }
    }

    /// The audio for anything that is not silence: a clip's file, the bell's file, or `builtin`.
    public var source: AudioSourceInfo? { audio?.source }

    /// The linear gain the source is played at: 1 unless loudness normalization changed it.
    public var gain: Double { audio?.gain ?? 1 }

    /// Plays the item's source `factor` times as loud as it does now; silence stays silence.
    package mutating func scaleGain(by factor: Double) {
        switch content {
        case .segment(let clip, var audio):
            audio.gain *= factor
            content = .segment(clip, audio)
        case .spokenCue(let clip, var audio, let name, let cue):
            audio.gain *= factor
            content = .spokenCue(clip, audio, name: name, cue: cue)
        case .interjection(let clip, var audio):
            audio.gain *= factor
            content = .interjection(clip, audio)
        case .bell(var audio, let name, let cue):
            audio.gain *= factor
            content = .bell(audio, name: name, cue: cue)
        case .recorded(var item):
            item.audio?.gain *= factor
            content = .recorded(item)
        case .silence:
            break
        }
    }

    /// The name the bell was chosen by (a library name or a path), or a cue's name in sessions of
    /// other kinds (`round-3`, `einatmen`, a stretch's id); `nil` for a guided script's other items.
    public var name: String? {
        switch content {
        case .spokenCue(_, _, let name, _), .bell(_, let name, _): name
        case .silence, .segment, .interjection: nil
        case .recorded(let item): item.name
        }
    }

    /// What a cue of a timer, breathing, workout or stretching session is; `nil` otherwise.
    public var cue: TimelineCue? {
        switch content {
        case .spokenCue(_, _, _, let cue): cue
        case .bell(_, _, let cue): cue
        case .silence, .segment, .interjection: nil
        case .recorded(let item): item.cue
        }
    }

    private enum CodingKeys: String, CodingKey {
        case index, kind, startFrame, frameCount, startSeconds, durationSeconds
        case text, phase, segmentId, plannedStartFrame, lateByFrames, lateCause, key, gain, name, words, sentences
        case wordsUnavailable
    }

    func encode(to encoder: any Encoder, sampleRate: SampleRate) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(index, forKey: .index)
        try container.encode(kind, forKey: .kind)
        try container.encode(startFrame, forKey: .startFrame)
        try container.encode(frameCount, forKey: .frameCount)
        try container.encode(sampleRate.seconds(of: startFrame), forKey: .startSeconds)
        try container.encode(sampleRate.seconds(of: frameCount), forKey: .durationSeconds)
        if let clip {
            try container.encode(clip.text, forKey: .text)
            try container.encode(clip.phase, forKey: .phase)
            try container.encodeIfPresent(clip.segmentId, forKey: .segmentId)
            try container.encode(clip.plannedStartFrame, forKey: .plannedStartFrame)
            try container.encode(clip.lateByFrames, forKey: .lateByFrames)
            try container.encodeIfPresent(clip.lateCause, forKey: .lateCause)
            try container.encode(clip.key, forKey: .key)
            try container.encodeIfPresent(clip.words, forKey: .words)
            try container.encodeIfPresent(clip.sentences, forKey: .sentences)
            try container.encodeIfPresent(clip.wordsUnavailable, forKey: .wordsUnavailable)
        }
        try container.encodeIfPresent(name.map(AudioSourceInfo.writtenName), forKey: .name)
        try cue?.encode(to: encoder)
        if let audio {
            try container.encode(audio.gain, forKey: .gain)
            try audio.source.encode(to: encoder)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        // Read in this order, so that a file with several mistakes is told of the same one first.
        index = try container.decode(Int.self, forKey: .index)
        var read = RecordedItem(kind: try container.decode(Kind.self, forKey: .kind))
        startFrame = try container.decode(Frames.self, forKey: .startFrame)
        frameCount = try container.decode(Frames.self, forKey: .frameCount)
        if let key = try container.decodeIfPresent(String.self, forKey: .key) {
            read.clip = PlacedClip(
                text: try container.decode(String.self, forKey: .text),
                phase: try container.decode(String.self, forKey: .phase),
                segmentId: try container.decodeIfPresent(String.self, forKey: .segmentId),
                plannedStartFrame: try container.decode(Frames.self, forKey: .plannedStartFrame),
                lateByFrames: try container.decode(Frames.self, forKey: .lateByFrames),
                lateCause: try container.decodeIfPresent(PlacedClip.LateCause.self, forKey: .lateCause),
                key: key,
                words: try container.decodeIfPresent([SpeechMark].self, forKey: .words),
                sentences: try container.decodeIfPresent([SpeechMark].self, forKey: .sentences),
                wordsUnavailable: try container.decodeIfPresent(String.self, forKey: .wordsUnavailable)
            )
        }
        let source = try AudioSourceInfo(decodingIfPresentFrom: decoder)
        let gain = try container.decodeIfPresent(Double.self, forKey: .gain) ?? 1
        read.audio = source.map { ItemAudio(source: $0, gain: gain) }
        read.name = try container.decodeIfPresent(String.self, forKey: .name)
        read.cue = try TimelineCue(decodingIfPresentFrom: decoder)
        // An item's `plannedStartFrame` is its clip's; its cue has none of its own.
        read.cue?.plannedStartFrame = nil
        content = read.content
    }
}

/// What a sounding item plays: its source, at a gain.
package struct ItemAudio: Sendable, Equatable {
    /// A clip's file, the bell's file, or the built-in bell.
    package var source: AudioSourceInfo
    /// The linear gain the source is played at: 1 unless loudness normalization changed it.
    package var gain: Double

    package init(source: AudioSourceInfo, gain: Double) {
        self.source = source
        self.gain = gain
    }
}

/// A timeline item's fields as a file gives them, each there or not whatever the kind.
package struct RecordedItem: Sendable, Equatable {
    package var kind: TimelineItem.Kind
    package var clip: PlacedClip?
    package var audio: ItemAudio?
    package var name: String?
    package var cue: TimelineCue?

    package init(
        kind: TimelineItem.Kind,
        clip: PlacedClip? = nil,
        audio: ItemAudio? = nil,
        name: String? = nil,
        cue: TimelineCue? = nil
    ) {
        self.kind = kind
        self.clip = clip
        self.audio = audio
        self.name = name
        self.cue = cue
    }

    /// The planned item these fields make, or the fields themselves when they make none.
    package var content: TimelineItem.Content {
        switch (kind, clip, audio, name, cue) {
        case (.silence, nil, nil, nil, nil): .silence
        case (.segment, let clip?, let audio?, nil, nil): .segment(clip, audio)
        case (.segment, let clip?, let audio?, let name?, let cue?): .spokenCue(clip, audio, name: name, cue: cue)
        case (.interjection, let clip?, let audio?, nil, nil): .interjection(clip, audio)
        case (.bell, nil, let audio?, let name?, let cue): .bell(audio, name: name, cue: cue)
        default: .recorded(self)
        }
    }
}

/// What the timeline records of a spoken clip besides its place.
public struct PlacedClip: Sendable, Equatable {
    /// The spoken text.
    public var text: String
    /// The segment's phase; for an interjection, the phase of ``Timeline/phases`` it starts in.
    public var phase: String
    /// The segment's id; `nil` for interjections.
    public var segmentId: String?
    /// Where the script planned the clip to start.
    public var plannedStartFrame: Frames
    /// How much later than planned the clip starts; 0 if on time.
    public var lateByFrames: Frames
    /// Why the clip starts late, when it does; `nil` when on time (and in timelines before it was
    /// recorded, where lateness was always the clip before's).
    public var lateCause: LateCause?
    /// The clip's cache key.
    public var key: String
    /// Each word where it is spoken in the output, when the clip's engine said; `nil` when not known.
    public var words: [SpeechMark]?
    /// Each sentence where it is spoken in the output, when the clip's engine said; `nil` when not known.
    public var sentences: [SpeechMark]?
    /// Why the clip has no `words`, when it has none: its voice gives no word timing (a server's),
    /// or its cached clip's could not be had. `nil` when it has words, and in timelines from
    /// before the reason was recorded.
    public var wordsUnavailable: String?

    package init(
        text: String,
        phase: String,
        segmentId: String?,
        plannedStartFrame: Frames,
        lateByFrames: Frames,
        lateCause: LateCause? = nil,
        key: String,
        words: [SpeechMark]? = nil,
        sentences: [SpeechMark]? = nil,
        wordsUnavailable: String? = nil
    ) {
        self.text = text
        self.phase = phase
        self.segmentId = segmentId
        self.plannedStartFrame = plannedStartFrame
        self.lateByFrames = lateByFrames
        self.lateCause = lateCause
        self.key = key
        self.words = words
        self.sentences = sentences
        self.wordsUnavailable = wordsUnavailable
    }
}

extension PlacedClip {
    /// Why a clip starts after its planned frame.
    public enum LateCause: String, Sendable, Codable {
        /// The clip before it ran past its planned start.
        case clipBefore = "clip"
        /// A gong's strike sounded there: the clip waited until it had fallen 10 dB.
        case gong
    }
}

/// A decodable audio source as measured before planning: where it is, its rate and exact length.
public struct AudioSourceInfo: Sendable, Equatable {
    /// What ``path`` is written as in JSON for audio the library makes itself.
    package static let builtinName = "builtin"

    /// The file's path; `nil` for audio the library synthesizes (the built-in bell).
    public var path: String?
    /// The source's own sample rate.
    public var sampleRate: SampleRate
    /// The source's exact length in frames at its own rate, as decoded (never a header's estimate).
    public var frameCount: Frames
    /// Whether encoder delay and padding recorded in the file (a LAME/Xing tag) were removed.
    public var gapless: Bool
    /// The source's EBU R128 integrated loudness in LUFS; `nil` if not measured, or if no part of
    /// it passes the measurement's gates (silence, or shorter than one 400 ms block).
    public var loudness: Double?
    /// A sound's true peak in dBTP, measured with its loudness so that its gain can keep the peak
    /// under the limiter's ceiling; `nil` for clips, and when not measured.
    public var truePeak: Double?
    /// A speech clip's integrated loudness after the speech leveler, LUFS: what its gain brings
    /// to the target when speech is leveled; `nil` for sounds, and when not measured.
    public var leveledLoudness: Double?
    /// A sound's loudest 400 ms in LUFS (EBU Tech 3341's maximum momentary loudness, silence
    /// around it counted): what levels a gong, a bell or a cue, however short; `nil` for clips
    /// and beds, and when not measured.
    public var loudestMomentary: Double?
    /// How long a sound's strike lasts, frames at ``sampleRate``: until its last 100 ms within
    /// 10 dB of its loudest. Speech does not start while a gong's strike sounds; `nil` for clips
    /// and beds, for silence, and when not measured.
    package var strikeFrames: Frames?
    /// The source's own channel count: a mono source is copied to every channel of the output,
    /// which a meter reads louder (``Loudness/layoutOffset(of:in:)``). Mono when not recorded.
    package var channelCount: ChannelCount = .mono
    /// The sound library folder a name found the file in; `nil` for a path given as it is, a
    /// clip, and a source read back from JSON. Every open of the file checks it still lies inside
    /// the folder: a name never reaches a file outside the library, even one swapped for a link
    /// after the lookup. Not written to JSON.
    package var libraryFolder: String?

    package init(
        path: String?,
        sampleRate: SampleRate,
        frameCount: Frames,
        gapless: Bool,
        loudness: Double? = nil,
        truePeak: Double? = nil,
        leveledLoudness: Double? = nil,
        loudestMomentary: Double? = nil,
        strikeFrames: Frames? = nil
    ) {
        self.path = path
        self.sampleRate = sampleRate
        self.frameCount = frameCount
        self.gapless = gapless
        self.loudness = loudness
        self.truePeak = truePeak
        self.leveledLoudness = leveledLoudness
        self.loudestMomentary = loudestMomentary
        self.strikeFrames = strikeFrames
    }
}

extension AudioSourceInfo {
    /// The source's length at `rate`, as every plan and the renderer count it.
    package func frameCount(at rate: SampleRate) -> Frames {
        rate.frames(converting: frameCount, from: sampleRate)
    }
}

extension AudioSourceInfo {
    /// How a file's `path` is written in a timeline or a queue, which apps read on other machines:
    /// never a folder of this one. A file in `folder` (the sound library a name found it in) is its
    /// path within the folder; any other (a clip in the cache, a sound given as a file) its name.
    package static func written(_ path: String, inside folder: String? = nil) -> String {
        if let folder {
            let prefix = folder.hasSuffix("/") ? folder : folder + "/"
            if path.hasPrefix(prefix), path.count > prefix.count { return String(path.dropFirst(prefix.count)) }
        }
        return path.split(separator: "/").last.map(String.init) ?? path
    }

    /// How a sound's `name` (a library name, or the path it was chosen by) is written: as it was
    /// given, but a path from the root as its file name.
    package static func writtenName(_ name: String) -> String {
        name.hasPrefix("/") ? written(name) : name
    }
}

extension AudioSourceInfo {
    /// The keys a source is written under, beside its item's or overlay's own.
    private enum CodingKeys: String, CodingKey {
        case source, sourceSampleRate, sourceFrames, gapless, loudness, truePeak, leveledLoudness
        case loudestMomentary = "maxMomentary"
        case strikeFrames = "sourceStrikeFrames"
        case channelCount = "sourceChannels"
    }

    /// Writes the source's fields into the keyed container of the item or overlay `encoder` is writing.
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path.map { Self.written($0, inside: libraryFolder) } ?? Self.builtinName, forKey: .source)
        try container.encode(sampleRate, forKey: .sourceSampleRate)
        try container.encode(frameCount, forKey: .sourceFrames)
        try container.encode(gapless, forKey: .gapless)
        try container.encodeIfPresent(loudness.map(Timeline.rounded), forKey: .loudness)
        try container.encodeIfPresent(truePeak.map(Timeline.rounded), forKey: .truePeak)
        try container.encodeIfPresent(leveledLoudness.map(Timeline.rounded), forKey: .leveledLoudness)
        try container.encodeIfPresent(loudestMomentary.map(Timeline.rounded), forKey: .loudestMomentary)
        try container.encodeIfPresent(strikeFrames, forKey: .strikeFrames)
        if channelCount != .mono { try container.encode(channelCount, forKey: .channelCount) }
    }

    /// The source written beside an item's or overlay's fields, or `nil` if there is none.
    init?(decodingIfPresentFrom decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let path = try container.decodeIfPresent(String.self, forKey: .source) else { return nil }
        self.init(
            path: path == Self.builtinName ? nil : path,
            sampleRate: try container.decode(SampleRate.self, forKey: .sourceSampleRate),
            frameCount: try container.decode(Frames.self, forKey: .sourceFrames),
            gapless: try container.decode(Bool.self, forKey: .gapless),
            loudness: try container.decodeIfPresent(Double.self, forKey: .loudness),
            truePeak: try container.decodeIfPresent(Double.self, forKey: .truePeak),
            leveledLoudness: try container.decodeIfPresent(Double.self, forKey: .leveledLoudness),
            loudestMomentary: try container.decodeIfPresent(Double.self, forKey: .loudestMomentary),
            strikeFrames: try container.decodeIfPresent(Frames.self, forKey: .strikeFrames)
        )
        channelCount = try container.decodeIfPresent(ChannelCount.self, forKey: .channelCount) ?? .mono
    }
}
