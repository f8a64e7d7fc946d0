/// A rendered session's plan: every item placed at an exact frame, contiguous from frame 0.
///
/// The renderer writes exactly what a timeline says, so a timeline printed without rendering is
/// always the one a render with the same inputs and seed would follow. Its JSON form
/// (schema in docs/timeline.md) is what apps read to show the session's progress.
public struct Timeline: Sendable, Equatable, Codable {
    /// The version of the JSON schema this type writes.
    public static let schemaVersion = 1

    /// The script's id.
    public var scriptId: String
    /// The script's title.
    public var title: String
    /// The seed that made the interjections' random choices.
    public var seed: UInt64
    /// The output's sample rate.
    public var sampleRate: SampleRate
    /// The output's channel count.
    public var channelCount: ChannelCount
    /// Every item in order; each starts where the one before it ends.
    public var items: [TimelineItem]

    /// The output's length: the end of the last item.
    public var totalFrames: Frames { items.last.map { $0.startFrame + $0.frameCount } ?? .zero }

    /// The output's length in seconds.
    public var durationSeconds: Double { sampleRate.seconds(of: totalFrames) }

    public init(
        scriptId: String,
        title: String,
        seed: UInt64,
        sampleRate: SampleRate,
        channelCount: ChannelCount,
        items: [TimelineItem]
    ) {
        self.scriptId = scriptId
        self.title = title
        self.seed = seed
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.items = items
    }

    private enum CodingKeys: String, CodingKey {
        case schemaVersion, scriptId, title, seed, sampleRate, totalFrames, durationSeconds, items
        /// The JSON name of ``Timeline/channelCount`` (schema version 1).
        case channelCount = "channels"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.schemaVersion, forKey: .schemaVersion)
        try container.encode(scriptId, forKey: .scriptId)
        try container.encode(title, forKey: .title)
        try container.encode(seed, forKey: .seed)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(channelCount, forKey: .channelCount)
        try container.encode(totalFrames, forKey: .totalFrames)
        try container.encode(durationSeconds, forKey: .durationSeconds)
        var itemsContainer = container.nestedUnkeyedContainer(forKey: .items)
        for item in items {
            try item.encode(to: itemsContainer.superEncoder(), sampleRate: sampleRate)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let version = try container.decode(Int.self, forKey: .schemaVersion)
        guard version == Self.schemaVersion else {
            throw DecodingError.dataCorruptedError(
                forKey: .schemaVersion,
                in: container,
                debugDescription: "schemaVersion \(version) is not supported; this version reads \(Self.schemaVersion)"
            )
        }
        scriptId = try container.decode(String.self, forKey: .scriptId)
        title = try container.decode(String.self, forKey: .title)
        seed = try container.decode(UInt64.self, forKey: .seed)
        sampleRate = try container.decode(SampleRate.self, forKey: .sampleRate)
        channelCount = try container.decode(ChannelCount.self, forKey: .channelCount)
        items = try container.decode([TimelineItem].self, forKey: .items)
    }
}

/// One stretch of a timeline: a spoken clip, silence, or the bell.
public struct TimelineItem: Sendable, Equatable, Decodable {
    /// What an item holds.
    public enum Kind: String, Sendable, Codable {
        /// A script segment's clip.
        case segment
        /// An interjection's chosen clip.
        case interjection
        /// Digital silence: every sample zero.
        case silence
        /// The closing bell.
        case bell
    }

    /// The item's position in ``Timeline/items``.
    public var index: Int
    /// What the item holds.
    public var kind: Kind
    /// Where the item starts in the output.
    public var startFrame: Frames
    /// The item's length in the output.
    public var frameCount: Frames
    /// The spoken clip, for segments and interjections.
    public var clip: PlacedClip?
    /// The audio for anything that is not silence: a clip's file, the bell's file, or `builtin`.
    public var source: AudioSourceInfo?

    public init(
        index: Int,
        kind: Kind,
        startFrame: Frames,
        frameCount: Frames,
        clip: PlacedClip? = nil,
        source: AudioSourceInfo? = nil
    ) {
        self.index = index
        self.kind = kind
        self.startFrame = startFrame
        self.frameCount = frameCount
        self.clip = clip
        self.source = source
    }

    private enum CodingKeys: String, CodingKey {
        case index, kind, startFrame, frameCount, startSeconds, durationSeconds
        case text, phase, segmentId, plannedStartFrame, lateByFrames, key
        case source, sourceSampleRate, sourceFrames, gapless
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
            try container.encode(clip.key, forKey: .key)
        }
        if let source {
            try container.encode(source.path ?? AudioSourceInfo.builtinName, forKey: .source)
            try container.encode(source.sampleRate, forKey: .sourceSampleRate)
            try container.encode(source.frameCount, forKey: .sourceFrames)
            try container.encode(source.gapless, forKey: .gapless)
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        index = try container.decode(Int.self, forKey: .index)
        kind = try container.decode(Kind.self, forKey: .kind)
        startFrame = try container.decode(Frames.self, forKey: .startFrame)
        frameCount = try container.decode(Frames.self, forKey: .frameCount)
        if let key = try container.decodeIfPresent(String.self, forKey: .key) {
            clip = PlacedClip(
                text: try container.decode(String.self, forKey: .text),
                phase: try container.decode(String.self, forKey: .phase),
                segmentId: try container.decodeIfPresent(String.self, forKey: .segmentId),
                plannedStartFrame: try container.decode(Frames.self, forKey: .plannedStartFrame),
                lateByFrames: try container.decode(Frames.self, forKey: .lateByFrames),
                key: key
            )
        }
        if let path = try container.decodeIfPresent(String.self, forKey: .source) {
            source = AudioSourceInfo(
                path: path == AudioSourceInfo.builtinName ? nil : path,
                sampleRate: try container.decode(SampleRate.self, forKey: .sourceSampleRate),
                frameCount: try container.decode(Frames.self, forKey: .sourceFrames),
                gapless: try container.decode(Bool.self, forKey: .gapless)
            )
        }
    }
}

/// What the timeline records of a spoken clip besides its place.
public struct PlacedClip: Sendable, Equatable {
    /// The spoken text.
    public var text: String
    /// The segment's phase, or `interjection`.
    public var phase: String
    /// The segment's id; `nil` for interjections.
    public var segmentId: String?
    /// Where the script planned the clip to start.
    public var plannedStartFrame: Frames
    /// How much later than planned the clip starts because the clip before it ran long; 0 if on time.
    public var lateByFrames: Frames
    /// The clip's cache key.
    public var key: String

    public init(
        text: String,
        phase: String,
        segmentId: String?,
        plannedStartFrame: Frames,
        lateByFrames: Frames,
        key: String
    ) {
        self.text = text
        self.phase = phase
        self.segmentId = segmentId
        self.plannedStartFrame = plannedStartFrame
        self.lateByFrames = lateByFrames
        self.key = key
    }
}

/// A decodable audio source as measured before planning: where it is, its rate and exact length.
public struct AudioSourceInfo: Sendable, Equatable {
    /// What ``path`` is written as in JSON for audio the library makes itself.
    public static let builtinName = "builtin"

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

    public init(path: String?, sampleRate: SampleRate, frameCount: Frames, gapless: Bool, loudness: Double? = nil) {
        self.path = path
        self.sampleRate = sampleRate
        self.frameCount = frameCount
        self.gapless = gapless
        self.loudness = loudness
    }
}
