import Foundation

/// A session in the form the seed app plays it on the device (seed 000 §3B): a queue of files played
/// one after another (an `AVQueuePlayer`), the clips as they are and the silences between them as
/// small 8 kHz WAV files, with the overlays (bed, gongs) listed for the app to schedule.
///
/// Every item plays at its own rate, so the queue's time is the sum of its items'
/// `sourceFrames / sourceSampleRate`. ``QueuePlanner`` chooses each silence's length so that this sum
/// never drifts from the timeline it was made from (``QueueItem/timelineEndFrame``).
/// Its JSON form (`queue.json`) is described in docs/queue.md.
package struct SessionQueue: Sendable, Equatable {
    /// The version of the JSON schema this type writes and reads.
    package static let schemaVersion = 1
    /// The rate of the silence files: the seed's `SilenceGenerator` writes 8 kHz, which keeps a
    /// 4.5-minute silence at 4.3 MB.
    package static let silenceSampleRate: SampleRate = 8_000

    /// The script's id.
    package var scriptId: String
    /// The script's category (seed 000's `guidedCategory`, which its crash recovery persists).
    package var category: String?
    /// The script's title.
    package var title: String
    /// The seed that made the interjections' random choices.
    package var seed: UInt64
    /// The rate of the timeline the queue was made from.
    package var sampleRate: SampleRate
    /// The timeline's length at ``sampleRate``.
    package var totalFrames: Frames
    /// The files to play, in order.
    package var items: [QueueItem]
    /// Sounds the app plays over the queue at given times, each file listed once in ``files``.
    package var overlays: [QueueOverlay]
    /// The silence the app loops alongside the queue so that long gaps never end its audio
    /// session (seed 000's keepalive player; seeds 001 and 003 loop a 1-s file the same way).
    package var keepalive = QueueKeepalive()
    /// The loudness the gains were planned for, and whether they are in ``QueueItem/gain`` (the
    /// files as they are) or in the files (re-encoded); `nil` with loudness off.
    package var loudness: QueueLoudness?
    /// How the clips and sounds reach the queue: as they are, their gains in ``QueueItem/gain``,
    /// or rendered with them.
    package var delivery = QueuePlanner.Delivery.originals

    package init(
        scriptId: String,
        category: String? = nil,
        title: String,
        seed: UInt64,
        sampleRate: SampleRate,
        totalFrames: Frames,
        items: [QueueItem],
        overlays: [QueueOverlay]
    ) {
        self.scriptId = scriptId
        self.category = category
        self.title = title
        self.seed = seed
        self.sampleRate = sampleRate
        self.totalFrames = totalFrames
        self.items = items
        self.overlays = overlays
    }
}

/// The loudness a queue's gains were planned for, as the render plans it (``TimelineLoudness``).
package struct QueueLoudness: Sendable, Equatable {
    /// The target, LUFS.
    package var target: Double
    /// What the target applies to.
    package var anchor: LoudnessAnchor
    /// Whether the gains are in the files (re-encoded, every ``QueueItem/gain`` 1) rather than in
    /// the items' and overlays' gains.
    package var inFiles: Bool

    package init(target: Double, anchor: LoudnessAnchor, inFiles: Bool) {
        self.target = target
        self.anchor = anchor
        self.inFiles = inFiles
    }
}

/// The keepalive: one second of digital silence at the silences' rate, which the app loops at a
/// low volume for as long as the queue plays (seed 000: "looped silence at 0.01 volume").
package struct QueueKeepalive: Sendable, Equatable {
    /// The file's name in the queue's folder.
    package var file = "keepalive-silence-8000hz.wav"
    /// Its length: one second at ``SessionQueue/silenceSampleRate``.
    package var frameCount = Frames(Int64(SessionQueue.silenceSampleRate.hertz))
    /// The volume the app plays it at, as seed 000 does.
    package var volume = 0.01

    package init() {}
}

/// One file of a queue, played from its first frame to its last.
package struct QueueItem: Sendable, Equatable {
    /// The item's position in ``SessionQueue/items``.
    package var index: Int
    /// The timeline item it plays (a silence too short for one 8 kHz frame has no queue item).
    package var timelineIndex: Int
    /// The file's name in the queue's folder.
    package var file: String
    /// What it holds: a segment's or an interjection's clip, silence, or the bell.
    package var kind: TimelineItem.Kind
    /// The file's exact length in frames at ``sourceSampleRate``, as decoded.
    package var sourceFrames: Frames
    /// The file's own rate, the one it plays at.
    package var sourceSampleRate: SampleRate
    /// The phase the item starts in.
    package var phase: String
    /// The spoken text, for clips.
    package var text: String?
    /// The cue's or the bell's name, when the timeline item has one.
    package var name: String?
    /// The gain the app plays it at: the render's (a speech clip's less what the render's leveler
    /// and limiter take off it, ``QueuePlanner/staticGain(of:loudness:)``); 1 when re-encoded (the
    /// gain is in the file).
    package var gain: Double
    /// Where the timeline's item ends, at the timeline's rate: what the queue's item must end on.
    package var timelineEndFrame: Frames
    /// Where the item's audio comes from.
    package var origin: Origin
    /// Its words and sentences in its own file's frames (``sourceFrames`` at
    /// ``sourceSampleRate``), from the timeline's; `nil` where the timeline has none.
    package var words: [SpeechMark]?
    package var sentences: [SpeechMark]?

    /// `marks`, in the output's frames at `outputRate` from an item that starts at `itemStart`,
    /// in this item's own frames: each start rounded up (never before the word's first frame),
    /// each end rounded up, and none past its file's end.
    func ownTime(of marks: [SpeechMark]?, itemStart: Frames, outputRate: SampleRate) -> [SpeechMark]? {
        marks.map { marks in
            let (source, output) = (Int64(sourceSampleRate.hertz), Int64(outputRate.hertz))
            func own(_ frame: Frames) -> Int64 {
                min(sourceFrames.count, (max(0, (frame - itemStart).count) * source + output - 1) / output)
            }
            return marks.map { mark in
                let start = own(mark.startFrame)
                return SpeechMark(
                    text: mark.text,
                    startFrame: Frames(start),
                    frameCount: Frames(own(mark.startFrame + mark.frameCount) - start)
                )
            }
        }
    }

    /// Where an item's file comes from.
    package enum Origin: Sendable, Equatable {
        /// The source file (a cached clip, a sound's file), copied byte for byte; `inside` is
        /// the sound library folder a name found it in (``AudioSourceInfo/libraryFolder``).
        case copied(path: String, inside: String? = nil)
        /// The timeline's item rendered on its own at the timeline's rate: a re-encoded clip, the
        /// synthesized bell.
        case rendered
        /// Digital silence at ``SessionQueue/silenceSampleRate``.
        case silence
    }

    package init(
        index: Int,
        timelineIndex: Int,
        file: String,
        kind: TimelineItem.Kind,
        sourceFrames: Frames,
        sourceSampleRate: SampleRate,
        phase: String,
        text: String? = nil,
        name: String? = nil,
        gain: Double = 1,
        timelineEndFrame: Frames,
        origin: Origin
    ) {
        self.index = index
        self.timelineIndex = timelineIndex
        self.file = file
        self.kind = kind
        self.sourceFrames = sourceFrames
        self.sourceSampleRate = sourceSampleRate
        self.phase = phase
        self.text = text
        self.name = name
        self.gain = gain
        self.timelineEndFrame = timelineEndFrame
        self.origin = origin
    }
}

/// A sound the app schedules over the queue: the ambience bed or a gong or cue.
package struct QueueOverlay: Sendable, Equatable {
    /// The overlay of the timeline it stands for, with its start, length, gain and bed settings.
    package var overlay: TimelineOverlay
    /// The file's name in the queue's folder; overlays of one sound share one file.
    package var file: String
    /// Where the file comes from.
    package var origin: QueueItem.Origin

    package init(overlay: TimelineOverlay, file: String, origin: QueueItem.Origin) {
        self.overlay = overlay
        self.file = file
        self.origin = origin
    }
}

extension SessionQueue {
    /// The clock of this queue's items, at 0.
    package var clock: QueueClock {
        guard let clock = QueueClock(rates: [sampleRate, Self.silenceSampleRate] + items.map(\.sourceSampleRate)) else {
            preconditionFailure("a queue's rates were counted together when it was planned")
        }
        return clock
    }

    /// The queue's length in seconds: its items' lengths at their own rates, summed exactly.
    package var durationSeconds: Double {
        var clock = clock
        for item in items { clock.advance(by: item.sourceFrames, at: item.sourceSampleRate) }
        return clock.seconds
    }

    /// The largest gain of any item or overlay in dB, or 0 when none is over 1: what an app that
    /// plays by a volume of at most 1 (AVPlayer's) lowers every gain by, and raises the whole by.
    package var masterGainDecibels: Double {
        let loudest = (items.map(\.gain) + overlays.map(\.overlay.gain)).max() ?? 1
        return max(0, Self.decibels(loudest))
    }

    /// `gain` in dB, to 0.01, and no lower than −120 (a gain of 0).
    static func decibels(_ gain: Double) -> Double {
        gain > 0 ? max(-120, (2_000 * log10(gain)).rounded() / 100) : -120
    }

    /// The volume, 0…1, an app plays `gain` at: lowered by ``masterGainDecibels``.
    func volume(_ gain: Double) -> Double {
        min(1, gain / Loudness.linear(decibels: masterGainDecibels))
    }

    /// The largest distance, in seconds, between where a queue item ends and where its timeline
    /// item ends: how far the queue ever drifts from the rendered session.
    package var worstDriftSeconds: Double {
        var (clock, worst) = (clock, Int64(0))
        for item in items {
            clock.advance(by: item.sourceFrames, at: item.sourceSampleRate)
            worst = max(worst, abs(clock.elapsedTicks - clock.ticks(of: item.timelineEndFrame, at: sampleRate)))
        }
        return Double(worst) / Double(clock.ticksPerSecond)
    }
}

extension SessionQueue: Encodable {
    private enum CodingKeys: String, CodingKey {
        case schemaVersion, kind, scriptId, category, title, seed, sampleRate, totalFrames, durationSeconds
        case timelineDurationSeconds, silenceSampleRate, worstDriftSeconds, items, overlays, keepalive
        case loudness, masterGainDb
    }

    private enum LoudnessKeys: String, CodingKey {
        case target, anchor, gainsIn
    }

    private enum KeepaliveKeys: String, CodingKey {
        case file, volume, loop, sourceFrames, sourceSampleRate, durationSeconds
    }

    private enum ItemKeys: String, CodingKey {
        case index, timelineIndex, file, kind, startSeconds, durationSeconds, sourceFrames, sourceSampleRate
        case phase, text, name, gain, gainDb, volume, words, sentences
    }

    private enum OverlayKeys: String, CodingKey {
        case file, gainDb, volume
    }

    /// `queue.json`: the items with their start and length in the queue's own time, the overlays
    /// as the timeline writes them with their file added (docs/queue.md).
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schemaVersion, forKey: .schemaVersion)
        try container.encode("queue", forKey: .kind)
        try container.encode(scriptId, forKey: .scriptId)
        try container.encodeIfPresent(category, forKey: .category)
        try container.encode(title, forKey: .title)
        try container.encode(seed, forKey: .seed)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(totalFrames, forKey: .totalFrames)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        try container.encode(sampleRate.seconds(of: totalFrames), forKey: .timelineDurationSeconds)
        try container.encode(Self.silenceSampleRate, forKey: .silenceSampleRate)
        try container.encode(worstDriftSeconds, forKey: .worstDriftSeconds)
        if let loudness {
            var loudnessContainer = container.nestedContainer(keyedBy: LoudnessKeys.self, forKey: .loudness)
            try loudnessContainer.encode(loudness.target, forKey: .target)
            try loudnessContainer.encode(loudness.anchor, forKey: .anchor)
            try loudnessContainer.encode(loudness.inFiles ? "files" : "gains", forKey: .gainsIn)
        }
        try container.encode(masterGainDecibels, forKey: .masterGainDb)
        var itemsContainer = container.nestedUnkeyedContainer(forKey: .items)
        var clock = clock
        for item in items {
            var itemContainer = itemsContainer.nestedContainer(keyedBy: ItemKeys.self)
            let start = clock.seconds
            clock.advance(by: item.sourceFrames, at: item.sourceSampleRate)
            try itemContainer.encode(item.index, forKey: .index)
            try itemContainer.encode(item.timelineIndex, forKey: .timelineIndex)
            try itemContainer.encode(item.file, forKey: .file)
            try itemContainer.encode(item.kind, forKey: .kind)
            try itemContainer.encode(start, forKey: .startSeconds)
            try itemContainer.encode(item.sourceSampleRate.seconds(of: item.sourceFrames), forKey: .durationSeconds)
            try itemContainer.encode(item.sourceFrames, forKey: .sourceFrames)
            try itemContainer.encode(item.sourceSampleRate, forKey: .sourceSampleRate)
            try itemContainer.encode(item.phase, forKey: .phase)
            try itemContainer.encodeIfPresent(item.text, forKey: .text)
            try itemContainer.encodeIfPresent(item.name.map(AudioSourceInfo.writtenName), forKey: .name)
            try itemContainer.encode(item.gain, forKey: .gain)
            try itemContainer.encode(Self.decibels(item.gain), forKey: .gainDb)
            try itemContainer.encode(volume(item.gain), forKey: .volume)
            try itemContainer.encodeIfPresent(item.words, forKey: .words)
            try itemContainer.encodeIfPresent(item.sentences, forKey: .sentences)
        }
        var overlaysContainer = container.nestedUnkeyedContainer(forKey: .overlays)
        for overlay in overlays {
            let overlayEncoder = overlaysContainer.superEncoder()
            try overlay.overlay.encode(to: overlayEncoder, sampleRate: sampleRate)
            var fileContainer = overlayEncoder.container(keyedBy: OverlayKeys.self)
            try fileContainer.encode(overlay.file, forKey: .file)
            try fileContainer.encode(Self.decibels(overlay.overlay.gain), forKey: .gainDb)
            try fileContainer.encode(volume(overlay.overlay.gain), forKey: .volume)
        }
        var keepaliveContainer = container.nestedContainer(keyedBy: KeepaliveKeys.self, forKey: .keepalive)
        try keepaliveContainer.encode(keepalive.file, forKey: .file)
        try keepaliveContainer.encode(keepalive.volume, forKey: .volume)
        try keepaliveContainer.encode(true, forKey: .loop)
        try keepaliveContainer.encode(keepalive.frameCount, forKey: .sourceFrames)
        try keepaliveContainer.encode(Self.silenceSampleRate, forKey: .sourceSampleRate)
        try keepaliveContainer.encode(
            Self.silenceSampleRate.seconds(of: keepalive.frameCount),
            forKey: .durationSeconds
        )
    }
}
