/// Where a session's playback is, both ways: elapsed time ↔ (item, offset in the item's frames).
///
/// An app that was stopped mid-session saves the item and the offset in it, and maps them back
/// to a time to resume at (or a time to the item to start). Items may play at different rates
/// (an on-device queue plays 22,050 Hz clips and 8 kHz silences), so every boundary is counted
/// exactly in ticks of 1 / ``ticksPerSecond`` s, the least common multiple of the items' rates,
/// where each item's frame is a whole number of ticks. docs/position.md has the rounding rules.
package struct PlaybackMap: Sendable, Equatable {
    /// One item as playback sees it: what it is, its phase, and its length at its own rate.
    package struct Item: Sendable, Equatable {
        /// What the item holds: `segment`, `interjection`, `silence`, `bell`, ….
        package var kind: String
        /// The phase the item starts in; `nil` if the session names none.
        package var phase: String?
        /// The rate the item plays at.
        package var sampleRate: SampleRate
        /// The item's length at ``sampleRate``.
        package var frameCount: Frames
        /// The timeline item a queue item plays; `nil` when the items are the timeline's own.
        package var timelineIndex: Int?

        package init(
            kind: String,
            phase: String?,
            sampleRate: SampleRate,
            frameCount: Frames,
            timelineIndex: Int? = nil
        ) {
            self.kind = kind
            self.phase = phase
            self.sampleRate = sampleRate
            self.frameCount = frameCount
            self.timelineIndex = timelineIndex
        }
    }

    /// What ``ScriptProblem/location`` names in a ``ScriptError/Code-swift.enum/positionOutOfRange``
    /// error: the argument that is out of range, for a caller to name as its user wrote it.
    package enum Argument: String, Sendable {
        /// The elapsed time given to ``locate(seconds:)``.
        case seconds
        /// The item index given to an `elapsed` method.
        case itemIndex
        /// The offset given to an `elapsed` method, in seconds or frames.
        case offset
    }

    /// The most ticks a session may last: 2^53, so that every elapsed time is a `Double` exactly
    /// and seconds convert to ticks without losing a tick.
    package static let maximumTicks: Int64 = 1 << 53

    /// The items in playback order; an item's index is its position here.
    package let items: [Item]
    /// How many ticks make a second: the least common multiple of the items' rates (1 if there are none).
    package let ticksPerSecond: Int64
    /// Where each item starts, in ticks, and after them where the last ends.
    private let boundaries: [Int64]
    /// The phases tiling the session, each from its start tick to the next one's.
    private let phaseStarts: [PhaseStart]

    /// Where a phase starts, in ticks; it runs to the next one's start.
    private struct PhaseStart: Sendable, Equatable {
        var name: String?
        var tick: Int64
    }

    /// Maps `items`, played one after another from time 0; a position's phase is its item's.
    /// - Throws: ``ScriptError/Code-swift.enum/unmappablePlayback`` when the rates' common tick
    ///   makes the session longer than ``maximumTicks``.
    package init(items: [Item]) throws(ScriptError) {
        let ticksPerSecond = try Self.commonTicks(of: items)
        let boundaries = try Self.boundaries(of: items, ticksPerSecond: ticksPerSecond)
        var phaseStarts: [PhaseStart] = []
        for (index, item) in items.enumerated() where index == 0 || phaseStarts.last?.name != item.phase {
            phaseStarts.append(PhaseStart(name: item.phase, tick: boundaries[index]))
        }
        self.init(items: items, ticksPerSecond: ticksPerSecond, boundaries: boundaries, phaseStarts: phaseStarts)
    }

    /// Maps a timeline's narration lane at its rate; phases are ``Timeline/phases``, so silences and
    /// the bell take the phase they fall in. Overlays need nothing of their own: a time inside one
    /// is a time in the lane under it.
    /// - Throws: ``ScriptError/Code-swift.enum/unmappablePlayback`` for a lane longer than ``maximumTicks``.
    package init(timeline: Timeline) throws(ScriptError) {
        let phases = timeline.phases
        func phase(at frame: Frames) -> String? {
            phases.last { $0.startFrame <= frame }?.name ?? phases.first?.name
        }
        let items = timeline.items.map { item in
            Item(
                kind: item.kind.rawValue,
                phase: phase(at: item.startFrame),
                sampleRate: timeline.sampleRate,
                frameCount: item.frameCount
            )
        }
        let ticksPerSecond = Int64(timeline.sampleRate.hertz)
        let boundaries = try Self.boundaries(of: items, ticksPerSecond: ticksPerSecond)
        self.init(
            items: items,
            ticksPerSecond: ticksPerSecond,
            boundaries: boundaries,
            phaseStarts: phases.map { PhaseStart(name: $0.name, tick: $0.startFrame.count) }
        )
    }

    private init(items: [Item], ticksPerSecond: Int64, boundaries: [Int64], phaseStarts: [PhaseStart]) {
        self.items = items
        self.ticksPerSecond = ticksPerSecond
        self.boundaries = boundaries
        self.phaseStarts = phaseStarts
    }

    /// The session's length in seconds: the end of its last item.
    package var durationSeconds: Double { seconds(ofTicks: boundaries[items.count]) }

    /// The one rate every item plays at, or `nil` when they differ (or there are none): elapsed
    /// frames mean something only at one rate.
    package var commonRate: SampleRate? {
        guard let first = items.first?.sampleRate, items.allSatisfy({ $0.sampleRate == first }) else { return nil }
        return first
    }

    /// The item and offset playing `seconds` after the start.
    ///
    /// `seconds` is taken to the nearest tick, then to the nearest frame of the item it falls in,
    /// halves rounded up. A time that rounds to an item's end is the next item's start, except the
    /// session's end, which is the last item's end. Items of no frames are never the answer.
    /// - Throws: ``ScriptError/Code-swift.enum/positionOutOfRange`` at ``Argument/seconds`` for a
    ///   time that is not a number, negative, or past ``durationSeconds``, or a session of no items.
    package func locate(seconds: Double) throws(ScriptError) -> PlaybackPosition {
        guard seconds.isFinite, seconds >= 0, seconds <= durationSeconds, !items.isEmpty else {
            throw outOfRange(
                .seconds,
                Self.problem(seconds: seconds),
                range: "positions run from 0 to \(formatted(durationSeconds)) s"
            )
        }
        let total = boundaries[items.count]
        let tick = min(Int64((seconds * Double(ticksPerSecond)).rounded(.toNearestOrAwayFromZero)), total)
        // The last item starting at or before `tick`: of items sharing a start, the one with frames.
        var index = boundaries.lastIndex { $0 <= tick && $0 < total } ?? 0
        let ticksPerFrame = ticksPerSecond / Int64(items[index].sampleRate.hertz)
        var offset = (2 * (tick - boundaries[index]) + ticksPerFrame) / (2 * ticksPerFrame)
        if offset >= items[index].frameCount.count, let next = nextPlayingItem(after: index) {
            index = next
            offset = 0
        }
        return position(item: index, offsetFrames: min(offset, items[index].frameCount.count))
    }

    /// The elapsed time at `offsetFrames` frames into item `itemIndex`, exactly.
    /// - Throws: ``ScriptError/Code-swift.enum/positionOutOfRange`` for an item that does not
    ///   exist or an offset that is negative or past the item's end.
    package func elapsed(itemIndex: Int, offsetFrames: Frames) throws(ScriptError) -> PlaybackElapsed {
        let item = try item(at: itemIndex)
        guard (0...item.frameCount.count).contains(offsetFrames.count) else {
            throw outOfRange(
                .offset,
                "\(offsetFrames) frames is \(offsetFrames.count < 0 ? "negative" : "past item \(itemIndex)'s end")",
                range: "offsets in it run from 0 to \(item.frameCount) frames"
            )
        }
        let ticks = boundaries[itemIndex] + offsetFrames.count * (ticksPerSecond / Int64(item.sampleRate.hertz))
        return PlaybackElapsed(
            seconds: seconds(ofTicks: ticks),
            frames: commonRate.map { Frames(ticks / (ticksPerSecond / Int64($0.hertz))) }
        )
    }

    /// The elapsed time at `offsetSeconds` into item `itemIndex`, the offset taken to the item's
    /// nearest frame by ``SampleRate/frames(atSeconds:)``.
    /// - Throws: ``ScriptError/Code-swift.enum/positionOutOfRange`` for an item that does not
    ///   exist or an offset that is not a number, negative, or past the item's length in seconds.
    package func elapsed(itemIndex: Int, offsetSeconds: Double) throws(ScriptError) -> PlaybackElapsed {
        let item = try item(at: itemIndex)
        let length = item.sampleRate.seconds(of: item.frameCount)
        guard offsetSeconds.isFinite, offsetSeconds >= 0, offsetSeconds <= length,
            let frames = item.sampleRate.frames(atSeconds: offsetSeconds)
        else {
            throw outOfRange(
                .offset,
                !offsetSeconds.isFinite
                    ? "\(offsetSeconds) is not a time"
                    : "\(formatted(offsetSeconds)) is \(offsetSeconds < 0 ? "negative" : "past item \(itemIndex)'s end")",
                range: "offsets in it run from 0 to \(formatted(length)) s"
            )
        }
        return try elapsed(itemIndex: itemIndex, offsetFrames: min(frames, item.frameCount))
    }

    /// What is wrong with `seconds` as a time in a session of no items or one it is outside.
    private static func problem(seconds: Double) -> String {
        if !seconds.isFinite { return "\(seconds) is not a time" }
        if seconds < 0 { return "\(formatted(seconds)) is before the session's start" }
        if seconds == 0 { return "the session has no items" }
        return "\(formatted(seconds)) is past the session's end"
    }

    private func item(at index: Int) throws(ScriptError) -> Item {
        guard items.indices.contains(index) else {
            throw outOfRange(
                .itemIndex,
                "\(index) is not an item",
                range: items.isEmpty ? "the session has no items" : "items run from 0 to \(items.count - 1)"
            )
        }
        return items[index]
    }

    private func nextPlayingItem(after index: Int) -> Int? {
        items.indices.dropFirst(index + 1).first { items[$0].frameCount.count > 0 }
    }

    private func position(item index: Int, offsetFrames: Int64) -> PlaybackPosition {
        let item = items[index]
        let ticks = boundaries[index] + offsetFrames * (ticksPerSecond / Int64(item.sampleRate.hertz))
        // The session's end is in the phase of its last tick.
        let phaseTick = ticks == boundaries[items.count] ? ticks - 1 : ticks
        return PlaybackPosition(
            itemIndex: index,
            offsetFrames: Frames(offsetFrames),
            offsetSeconds: item.sampleRate.seconds(of: Frames(offsetFrames)),
            phase: (phaseStarts.last { $0.tick <= phaseTick } ?? phaseStarts.first)?.name ?? nil,
            kind: item.kind,
            timelineIndex: item.timelineIndex
        )
    }

    /// Ticks as seconds: exact up to the `Double` nearest, since both numbers are below 2^53.
    private func seconds(ofTicks ticks: Int64) -> Double {
        Double(ticks) / Double(ticksPerSecond)
    }

    private func outOfRange(_ argument: Argument, _ problem: String, range: String) -> ScriptError {
        ScriptError(.positionOutOfRange, ScriptProblem(location: argument.rawValue, rule: "\(problem); \(range)"))
    }

    /// The least common multiple of the items' rates, checked against ``maximumTicks``.
    private static func commonTicks(of items: [Item]) throws(ScriptError) -> Int64 {
        guard let common = SampleRate.commonTicksPerSecond(items.map(\.sampleRate), limit: maximumTicks) else {
            let rates = Set(items.map(\.sampleRate.hertz)).sorted()
            throw ScriptError(
                .unmappablePlayback,
                ScriptProblem(
                    location: "items",
                    rule:
                        "the sample rates \(rates.map(String.init).joined(separator: ", ")) Hz need more than 2^53 ticks a second to be counted exactly together"
                )
            )
        }
        return common
    }

    /// Every item's start in ticks, and the last one's end, checked against ``maximumTicks``.
    private static func boundaries(of items: [Item], ticksPerSecond: Int64) throws(ScriptError) -> [Int64] {
        var boundaries: [Int64] = [0]
        for item in items {
            let (length, overflow) = item.frameCount.count.multipliedReportingOverflow(
                by: ticksPerSecond / Int64(item.sampleRate.hertz)
            )
            let start = boundaries[boundaries.count - 1]
            guard item.frameCount.count >= 0, !overflow, length <= maximumTicks - start else {
                throw ScriptError(
                    .unmappablePlayback,
                    ScriptProblem(
                        location: "items[\(boundaries.count - 1)]",
                        rule: item.frameCount.count < 0
                            ? "frameCount \(item.frameCount) is negative"
                            : "the session is too long to count in ticks of 1/\(ticksPerSecond) s (at most 2^53)"
                    )
                )
            }
            boundaries.append(start + length)
        }
        return boundaries
    }
}
