import SessionTimeline

/// What a decoded file holds where its timeline has silence and where it has items, gathered
/// block by block as the file is decoded.
///
/// Its memory grows with the timeline's item count, never with the file's length: the silent
/// spans and the items are sorted by start frame, so one cursor into each follows the decoding.
struct SignalScan {
    /// A stretch the timeline leaves silent (no sounding item, no overlay), and what was found in it.
    struct SilentSpan {
        /// The whole span.
        let spanStart: Int64
        let spanEnd: Int64
        /// The part judged: the span less the codec's guards next to sound.
        let start: Int64
        let end: Int64
        /// The sounding item that ends where the span starts, and the one that starts where it ends.
        let itemBefore: Int?
        let itemAfter: Int?
        /// The first and last frame louder than the rules' silence ceiling, and the loudest sample.
        var firstLoud: Int64?
        var lastLoud: Int64?
        var peak: Float = 0
    }

    /// A sounding item (segment, interjection, bell) and what was found in it.
    struct ItemStatistics {
        /// The item's position in ``Timeline/items``.
        let index: Int
        let start: Int64
        let end: Int64
        /// The first frame at or above ``VerificationRules/onsetLevel``.
        var firstSound: Int64?
        /// The largest mean power of a window of the item.
        var loudestWindowPower: Double = 0
        var windowSum: Double = 0
        var windowFill = 0
    }

    private(set) var spans: [SilentSpan]
    private(set) var items: [ItemStatistics]
    private var spanCursor = 0
    private var itemCursor = 0
    private let silenceCeiling: Float
    private let clippingLevel: Float
    private let windowFrames: Int

    /// Frames scanned so far.
    private(set) var position: Int64 = 0
    /// The largest absolute sample.
    private(set) var peak: Float = 0
    /// How many samples were at or above the clipping level, and where the first was.
    private(set) var clippedSamples: Int64 = 0
    private(set) var firstClippedFrame: Int64?

    /// A scan of a file meant to follow `timeline` (or of a file alone, when it is `nil`),
    /// judged by `rules`.
    init(timeline: Timeline?, rules: VerificationRules, sampleRate: SampleRate) {
        silenceCeiling = rules.silenceCeiling
        clippingLevel = rules.clippingLevel
        windowFrames = max(1, Int((VerificationRules.windowSeconds * Double(sampleRate.hertz)).rounded()))
        guard let timeline else {
            (spans, items) = ([], [])
            return
        }
        let sounding = timeline.items.filter { $0.kind != .silence && $0.frameCount > .zero }
        items = sounding.map {
            ItemStatistics(index: $0.index, start: $0.startFrame.count, end: ($0.startFrame + $0.frameCount).count)
        }
        spans = Self.silentSpans(
            timeline: timeline,
            sounding: sounding,
            guardBefore: rules.guardBeforeSound.count,
            guardAfter: rules.guardAfterSound.count
        )
    }

    /// The complement of every sounding item and overlay in `0 ..< totalFrames`, each span less
    /// the guard after the sound before it and before the sound after it; spans the guards use up
    /// are left out.
    private static func silentSpans(
        timeline: Timeline,
        sounding: [TimelineItem],
        guardBefore: Int64,
        guardAfter: Int64
    ) -> [SilentSpan] {
        let total = timeline.totalFrames.count
        var sounds = sounding.map { ($0.startFrame.count, ($0.startFrame + $0.frameCount).count) }
        sounds += timeline.overlays.map { ($0.startFrame.count, ($0.startFrame + $0.frameCount).count) }
        sounds.sort { $0.0 < $1.0 }
        let itemEnding = Dictionary(
            sounding.map { (($0.startFrame + $0.frameCount).count, $0.index) },
            uniquingKeysWith: { first, _ in first }
        )
        let itemStarting = Dictionary(sounding.map { ($0.startFrame.count, $0.index) }, uniquingKeysWith: { a, _ in a })
        var spans: [SilentSpan] = []
        var cursor: Int64 = 0
        func addSpan(upTo end: Int64) {
            guard end > cursor else { return }
            let start = cursor > 0 ? cursor + guardAfter : cursor
            let judgedEnd = end < total ? end - guardBefore : end
            guard judgedEnd > start else { return }
            spans.append(
                SilentSpan(
                    spanStart: cursor,
                    spanEnd: end,
                    start: start,
                    end: judgedEnd,
                    itemBefore: itemEnding[cursor],
                    itemAfter: itemStarting[end]
                )
            )
        }
        for (start, end) in sounds {
            addSpan(upTo: min(start, total))
            cursor = max(cursor, end)
        }
        addSpan(upTo: total)
        return spans
    }

    /// Adds `frames` interleaved frames of `channelCount` channels, the next ones of the file.
    mutating func add(_ samples: Span<Float>, frames: Int, channelCount: Int) {
        for frame in 0..<frames {
            let position = self.position + Int64(frame)
            var level: Float = 0
            var power: Float = 0
            for index in (frame * channelCount)..<((frame + 1) * channelCount) {
                let sample = samples[index]
                let magnitude = abs(sample)
                if magnitude >= clippingLevel {
                    clippedSamples += 1
                    if firstClippedFrame == nil { firstClippedFrame = position }
                }
                level = max(level, magnitude)
                power += sample * sample
            }
            peak = max(peak, level)
            observeSilence(level: level, at: position)
            observeItem(level: level, power: Double(power) / Double(channelCount), at: position)
        }
        position += Int64(frames)
    }

    private mutating func observeSilence(level: Float, at position: Int64) {
        while spanCursor < spans.count, spans[spanCursor].end <= position { spanCursor += 1 }
        guard spanCursor < spans.count, spans[spanCursor].start <= position, level > silenceCeiling else { return }
        if spans[spanCursor].firstLoud == nil { spans[spanCursor].firstLoud = position }
        spans[spanCursor].lastLoud = position
        spans[spanCursor].peak = max(spans[spanCursor].peak, level)
    }

    private mutating func observeItem(level: Float, power: Double, at position: Int64) {
        while itemCursor < items.count, items[itemCursor].end <= position {
            closeWindow(of: itemCursor)
            itemCursor += 1
        }
        guard itemCursor < items.count, items[itemCursor].start <= position else { return }
        if level >= VerificationRules.onsetLevel, items[itemCursor].firstSound == nil {
            items[itemCursor].firstSound = position
        }
        items[itemCursor].windowSum += power
        items[itemCursor].windowFill += 1
        if items[itemCursor].windowFill == windowFrames { closeWindow(of: itemCursor) }
    }

    private mutating func closeWindow(of index: Int) {
        guard items[index].windowFill > 0 else { return }
        let power = items[index].windowSum / Double(items[index].windowFill)
        items[index].loudestWindowPower = max(items[index].loudestWindowPower, power)
        items[index].windowSum = 0
        items[index].windowFill = 0
    }

    /// Closes the window of the item decoding stopped in.
    mutating func finish() {
        if itemCursor < items.count { closeWindow(of: itemCursor) }
    }
}
