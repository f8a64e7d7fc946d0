/// The placing rule of announcements (a workout's round announcements and `last-round`): they
/// never overlap each other, each ends by its deadline, starting earlier than planned when it
/// must, and a spoken one never plays while a cue sound does (seed 003 pauses speech for a cue).
/// docs/sessions.md states it.
package enum AnnouncementChain {
    /// An announcement to place.
    package struct Entry: Sendable, Equatable {
        /// Where the rules want it to start.
        package var plannedStart: Frames
        /// Its length.
        package var frameCount: Frames
        /// Where it must have ended.
        package var deadline: Frames
        /// Whether it is speech, which no cue sound may play over.
        package var isSpoken: Bool

        package init(plannedStart: Frames, frameCount: Frames, deadline: Frames, isSpoken: Bool = false) {
            self.plannedStart = plannedStart
            self.frameCount = frameCount
            self.deadline = deadline
            self.isSpoken = isSpoken
        }
    }

    /// The start of each entry, by index.
    ///
    /// In planned order (ties keep input order): first each starts at its planned start, or when
    /// the one before it ends if that is later. Then, from the last back to the first, one that
    /// would end after its deadline or after the next one starts is moved earlier to end there,
    /// but not before frame 0. Last, any that still overlap the one before (only possible when
    /// there is no room before frame 0) start when it ends, late.
    ///
    /// A spoken entry also keeps clear of `cues` (the cue sounds' spans, `start..<end`): going
    /// forward, one that would start while a cue plays, or have one start while it plays, starts
    /// when that cue ends; moved earlier, it ends before the cue starts instead (never before
    /// frame 0, where it gives up keeping clear).
    package static func place(_ entries: [Entry], clearOf cues: [Range<Frames>] = []) -> [Frames] {
        let order = entries.indices.sorted { (entries[$0].plannedStart, $0) < (entries[$1].plannedStart, $1) }
        /// The cues that play during `length` frames from `start`.
        func clashes(_ start: Frames, _ length: Frames) -> [Range<Frames>] {
            cues.filter { $0.lowerBound < start + length && start < $0.upperBound }
        }
        var starts = entries.map(\.plannedStart)
        var previousEnd = Frames.zero
        for index in order {
            let entry = entries[index]
            starts[index] = max(entry.plannedStart, previousEnd)
            // Later, past every cue it meets (each step moves past one, so it ends).
            while entry.isSpoken, let last = clashes(starts[index], entry.frameCount).map(\.upperBound).max() {
                starts[index] = last
            }
            previousEnd = starts[index] + entry.frameCount
        }
        var nextStart: Frames?
        for index in order.reversed() {
            let entry = entries[index]
            var latest = entry.deadline - entry.frameCount
            if let nextStart { latest = min(latest, nextStart - entry.frameCount) }
            if starts[index] > latest {
                starts[index] = max(latest, .zero)
                // Earlier, ending before every cue it meets.
                while entry.isSpoken, starts[index] > .zero,
                    let first = clashes(starts[index], entry.frameCount).map(\.lowerBound).min()
                {
                    starts[index] = max(first - entry.frameCount, .zero)
                }
            }
            nextStart = starts[index]
        }
        previousEnd = .zero
        for index in order {
            starts[index] = max(starts[index], previousEnd)
            previousEnd = starts[index] + entries[index].frameCount
        }
        return starts
    }
}
