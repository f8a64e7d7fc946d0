/// The placing rule of announcements (a workout's round announcements and `last-round`): they
/// never overlap each other, and each ends by its deadline, starting earlier than planned when
/// it must. docs/sessions.md states it.
package enum AnnouncementChain {
    /// An announcement to place.
    package struct Entry: Sendable, Equatable {
        /// Where the rules want it to start.
        package var plannedStart: Frames
        /// Its length.
        package var frameCount: Frames
        /// Where it must have ended.
        package var deadline: Frames

        package init(plannedStart: Frames, frameCount: Frames, deadline: Frames) {
            self.plannedStart = plannedStart
            self.frameCount = frameCount
            self.deadline = deadline
        }
    }

    /// The start of each entry, by index.
    ///
    /// In planned order (ties keep input order): first each starts at its planned start, or when
    /// the one before it ends if that is later. Then, from the last back to the first, one that
    /// would end after its deadline or after the next one starts is moved earlier to end there,
    /// but not before frame 0. Last, any that still overlap the one before (only possible when
    /// there is no room before frame 0) start when it ends, late.
    package static func place(_ entries: [Entry]) -> [Frames] {
        let order = entries.indices.sorted { (entries[$0].plannedStart, $0) < (entries[$1].plannedStart, $1) }
        var starts = entries.map(\.plannedStart)
        var previousEnd = Frames.zero
        for index in order {
            starts[index] = max(entries[index].plannedStart, previousEnd)
            previousEnd = starts[index] + entries[index].frameCount
        }
        var nextStart: Frames?
        for index in order.reversed() {
            var latest = entries[index].deadline - entries[index].frameCount
            if let nextStart { latest = min(latest, nextStart - entries[index].frameCount) }
            if starts[index] > latest { starts[index] = max(latest, .zero) }
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
