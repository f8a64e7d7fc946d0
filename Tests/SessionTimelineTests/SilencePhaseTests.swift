import SessionTimeline
import Testing

/// The silence phase (seed 000: Opening → Teachings → Silence → Closing), by its one rule,
/// worked by hand.
@Suite("The silence phase")
struct SilencePhaseTests {
    typealias Q = QueuePlannerTests

    @Test("From the end of a phase's last segment to the next phase, when an interjection starts in between")
    func marked() {
        let timeline = Q.timeline([
            Q.clip(0, at: 0, frames: 10_000, segment: "opening"),
            Q.silence(1, at: 10_000, frames: 40_000),
            Q.clip(2, at: 50_000, frames: 5_000, segment: "teachings"),
            Q.silence(3, at: 55_000, frames: 20_000),
            Q.clip(4, at: 75_000, frames: 2_000, kind: .interjection),
            Q.silence(5, at: 77_000, frames: 23_000),
            Q.clip(6, at: 100_000, frames: 8_000, segment: "closing"),
        ]).markingSilence()
        // The opening's gap holds no interjection: it stays the opening's.
        #expect(timeline.phases.map(\.name) == ["opening", "teachings", "silence", "closing"])
        #expect(timeline.phases.map(\.startFrame.count) == [0, 50_000, 55_000, 100_000])
        #expect(timeline.phases.map(\.endFrame.count) == [50_000, 55_000, 100_000, 108_000])
        #expect(timeline.chapters.map(\.title) == ["opening", "teachings", "silence", "closing"])
    }

    @Test("None in the last phase, none without an interjection after the speech, none when the speech runs on")
    func unmarked() {
        // An interjection after the last phase's speech: the last phase has no next, so no silence.
        let last = Q.timeline([
            Q.clip(0, at: 0, frames: 10_000, segment: "opening"),
            Q.clip(1, at: 10_000, frames: 5_000, segment: "closing"),
            Q.silence(2, at: 15_000, frames: 10_000),
            Q.clip(3, at: 25_000, frames: 2_000, kind: .interjection),
        ])
        #expect(last.markingSilence() == last)
        // The interjection starts before the speech ends (late speech runs over it).
        let over = Q.timeline([
            Q.clip(0, at: 0, frames: 10_000, segment: "opening"),
            Q.clip(1, at: 10_000, frames: 2_000, kind: .interjection),
            Q.clip(2, at: 12_000, frames: 5_000, segment: "opening"),
            Q.clip(3, at: 17_000, frames: 5_000, segment: "closing"),
        ])
        #expect(over.markingSilence().phases.map(\.name) == ["opening", "closing"])
    }
}
