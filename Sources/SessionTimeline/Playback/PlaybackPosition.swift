/// Where playback is: an item, how far into it, and what is playing there.
package struct PlaybackPosition: Sendable, Equatable, Encodable {
    /// The item's index in ``PlaybackMap/items``.
    package var itemIndex: Int
    /// How far into the item, in frames at its own rate.
    package var offsetFrames: Frames
    /// The same offset in seconds.
    package var offsetSeconds: Double
    /// The phase the position is in; `nil` if the session names none.
    package var phase: String?
    /// What the item holds.
    package var kind: String
    /// The timeline item a queue item plays; `nil` for a timeline's own items.
    package var timelineIndex: Int?

    package init(
        itemIndex: Int,
        offsetFrames: Frames,
        offsetSeconds: Double,
        phase: String?,
        kind: String,
        timelineIndex: Int? = nil
    ) {
        self.itemIndex = itemIndex
        self.offsetFrames = offsetFrames
        self.offsetSeconds = offsetSeconds
        self.phase = phase
        self.kind = kind
        self.timelineIndex = timelineIndex
    }
}

/// How long a session has been playing at a position.
package struct PlaybackElapsed: Sendable, Equatable, Encodable {
    /// The elapsed time in seconds: the `Double` nearest the exact time.
    package var seconds: Double
    /// The elapsed time in frames, when every item plays at one rate (a timeline); `nil` otherwise.
    package var frames: Frames?

    package init(seconds: Double, frames: Frames?) {
        self.seconds = seconds
        self.frames = frames
    }
}

extension PlaybackPosition {
    private enum CodingKeys: String, CodingKey {
        case itemIndex, offsetFrames, offsetSeconds, phase, kind, timelineIndex
    }

    /// Writes every key, `phase` as `null` when there is none, and `timelineIndex` only for a queue.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(itemIndex, forKey: .itemIndex)
        try container.encode(offsetFrames, forKey: .offsetFrames)
        try container.encode(offsetSeconds, forKey: .offsetSeconds)
        try container.encode(phase, forKey: .phase)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(timelineIndex, forKey: .timelineIndex)
    }
}

extension PlaybackElapsed {
    private enum CodingKeys: String, CodingKey {
        case seconds = "elapsedSeconds"
        case frames = "elapsedFrames"
    }

    /// Writes `elapsedSeconds`, and `elapsedFrames` only when the items share one rate.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(seconds, forKey: .seconds)
        try container.encodeIfPresent(frames, forKey: .frames)
    }
}
