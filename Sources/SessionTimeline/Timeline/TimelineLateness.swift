/// How late a timeline's speech starts: the clips pushed past their planned start because the
/// clip before them ran long. A render with late speech is not wrong, but a person should know,
/// and an unattended batch may refuse it (a maximum lateness). A clip that waited for a gong's
/// strike is not counted: that wait is the rule, not an accident of lengths.
package struct TimelineLateness: Sendable, Equatable {
    /// How many clips start after their planned start.
    package var lateCount: Int
    /// The latest of them: how late it starts, and what it says; `nil` when none is late.
    package var worst: (frames: Frames, text: String)?

    package static func == (lhs: TimelineLateness, rhs: TimelineLateness) -> Bool {
        lhs.lateCount == rhs.lateCount && lhs.worst?.frames == rhs.worst?.frames && lhs.worst?.text == rhs.worst?.text
    }

    /// The clips of `timeline` later than `allowed` (0: every late clip).
    package init(_ timeline: Timeline, beyond allowed: Frames = .zero) {
        lateCount = 0
        for item in timeline.items {
            guard let clip = item.clip, clip.lateByFrames > allowed, clip.lateCause != .gong else { continue }
            lateCount += 1
            if clip.lateByFrames > worst?.frames ?? .zero { worst = (clip.lateByFrames, clip.text) }
        }
    }
}

extension Timeline {
    /// How late its speech starts.
    package var lateness: TimelineLateness { TimelineLateness(self) }
}
