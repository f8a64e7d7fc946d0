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

/// One clip that starts after its planned start because the clip before it ran long, named as a
/// person fixing the script needs it: where it is, by how much, and which clip overran it.
package struct LateClip: Sendable, Equatable, Encodable {
    /// Where it is written: the script's JSON path (`segments[1]`, `interjections[0]`), or for a
    /// kind whose clips the script does not list one by one, the timeline's (`items[5]`).
    package var path: String
    /// Its segment's id; `nil` for an interjection or a kind's cue.
    package var id: String?
    /// What it says.
    package var text: String
    /// How much later than planned it starts, in seconds (to the millisecond).
    package var lateSeconds: Double
    /// Where the clip that ran past its planned start is, like ``path``; `nil` if none is found.
    package var overrunBy: String?
    /// Where that clip ends in the output, in seconds.
    package var overrunEndSeconds: Double?
    /// That clip as ``line`` names it, `segments[0] ("opening")`, and its end as `m:ss.mmm`.
    private var overrun: (name: String, end: String)?

    package static func == (lhs: LateClip, rhs: LateClip) -> Bool {
        (lhs.path, lhs.id, lhs.text, lhs.lateSeconds) == (rhs.path, rhs.id, rhs.text, rhs.lateSeconds)
            && (lhs.overrunBy, lhs.overrunEndSeconds) == (rhs.overrunBy, rhs.overrunEndSeconds)
    }

    private enum CodingKeys: String, CodingKey {
        case path, id, text, lateSeconds, overrunBy, overrunEndSeconds
    }

    /// `segments[1] ("body") starts 3.1 s late: segments[0] ("opening") runs to 0:11.104`.
    package var line: String {
        let tenths = Int((lateSeconds * 10).rounded())
        let late = "\(name(path, id: id, text: text)) starts \(tenths / 10).\(tenths % 10) s late"
        guard let overrun else { return late }
        return "\(late): \(overrun.name) runs to \(overrun.end)"
    }

    /// `segments[1] ("body")`, or with no id, the text: `interjections[0] ("Come back.")`.
    private func name(_ path: String, id: String?, text: String) -> String {
        "\(path) (\(quoted(id ?? printable(text, limit: 40), limit: 40)))"
    }

    /// The late clips of `timeline`, in order, each named in `script` when it is the one the
    /// timeline was planned from (segments by id, interjections by their text), else by the
    /// timeline's item. Clips that waited for a gong are not late (``TimelineLateness``).
    package static func all(in timeline: Timeline, script: Script?) -> [LateClip] {
        let rate = timeline.sampleRate
        var guided: GuidedSession?
        if case .guided(let session)? = script?.kind { guided = session }
        func place(_ index: Int) -> (path: String, id: String?, text: String) {
            let item = timeline.items[index]
            let text = item.clip?.text ?? item.name ?? ""
            if let guided, let clip = item.clip {
                if let id = clip.segmentId, let found = guided.segments.firstIndex(where: { $0.id == id }) {
                    return ("segments[\(found)]", id, text)
                }
                if clip.segmentId == nil,
                    let found = guided.interjections.firstIndex(where: { $0.textOptions.contains(clip.text) })
                {
                    return ("interjections[\(found)]", nil, text)
                }
            }
            return ("items[\(index)]", nil, text)
        }
        var late: [LateClip] = []
        for (index, item) in timeline.items.enumerated() {
            guard let clip = item.clip, clip.lateByFrames > .zero, clip.lateCause != .gong else { continue }
            let here = place(index)
            var entry = LateClip(
                path: here.path,
                id: here.id,
                text: here.text,
                lateSeconds: Timeline.rounded(rate.seconds(of: clip.lateByFrames))
            )
            // The clip before it on the narration lane: the last spoken item that starts earlier.
            if let before = timeline.items[..<index].lastIndex(where: { $0.clip != nil }) {
                let overrun = place(before)
                let end = timeline.items[before].startFrame + timeline.items[before].frameCount
                entry.overrunBy = overrun.path
                entry.overrunEndSeconds = Timeline.rounded(rate.seconds(of: end))
                let name = entry.name(overrun.path, id: overrun.id, text: overrun.text)
                entry.overrun = (name, FrameClock.time(end, rate))
            }
            late.append(entry)
        }
        return late
    }
}
