import SessionTimeline
import Testing

/// A timeline at 1 kHz (a frame a millisecond) of items of these kinds, lengths and clips, one
/// after the other from frame 0.
func timelineAtOneKilohertz(
    _ lengths: [(TimelineItem.Kind, Int64, PlacedClip?)],
    overlays: [TimelineOverlay] = []
) -> Timeline {
    var start: Int64 = 0
    var items: [TimelineItem] = []
    for (index, (kind, length, clip)) in lengths.enumerated() {
        items.append(
            TimelineItem(
                index: index,
                startFrame: Frames(start),
                frameCount: Frames(length),
                content: RecordedItem(kind: kind, clip: clip).content
            )
        )
        start += length
    }
    return Timeline(
        scriptId: "s",
        title: "S",
        seed: 1,
        sampleRate: 1_000,
        channelCount: 1,
        items: items,
        overlays: overlays
    )
}

/// Positions both ways: elapsed seconds ↔ (item, offset), for a timeline and for a mixed-rate queue.
@Suite("Playback positions")
struct PlaybackMapTests {
    /// A 5-second timeline at 1 kHz: opening 0–1 s, silence 1–1.5 s, body 1.5–3.5 s, an
    /// interjection 3.5–3.75 s, the bell 3.75–5 s. Phases: opening to 1.5 s, body after.
    static func timeline(overlays: [TimelineOverlay] = []) -> Timeline {
        func clip(_ phase: String) -> PlacedClip {
            PlacedClip(
                text: phase,
                phase: phase,
                segmentId: nil,
                plannedStartFrame: .zero,
                lateByFrames: .zero,
                key: "k"
            )
        }
        return timelineAtOneKilohertz(
            [
                (.segment, 1_000, clip("opening")), (.silence, 500, nil), (.segment, 2_000, clip("body")),
                (.interjection, 250, clip("interjection")), (.bell, 1_250, nil),
            ],
            overlays: overlays
        )
    }

    /// A queue's items: a 3 s clip at 22,050 Hz, 72,345 frames of 8 kHz silence (9.043125 s), and a
    /// 1 s clip; 3,528,000 ticks a second.
    static let queueItems = [
        PlaybackMap.Item(kind: "segment", phase: "opening", sampleRate: 22_050, frameCount: 66_150, timelineIndex: 0),
        PlaybackMap.Item(kind: "silence", phase: "opening", sampleRate: 8_000, frameCount: 72_345, timelineIndex: 1),
        PlaybackMap.Item(kind: "segment", phase: "body", sampleRate: 22_050, frameCount: 22_050, timelineIndex: 2),
    ]

    struct Case: Sendable, CustomTestStringConvertible {
        let seconds: Double
        let item: Int
        let offset: Int64
        let phase: String
        let kind: String
        var testDescription: String { "\(seconds) s → item \(item) + \(offset)" }

        /// The position this row expects, with offsets at `rate`.
        func position(rate: SampleRate, timelineIndex: Int? = nil) -> PlaybackPosition {
            PlaybackPosition(
                itemIndex: item,
                offsetFrames: Frames(offset),
                offsetSeconds: rate.seconds(of: Frames(offset)),
                phase: phase,
                kind: kind,
                timelineIndex: timelineIndex
            )
        }
    }

    @Test(
        "A timeline at 1 kHz: seconds → item, offset, phase, kind",
        arguments: [
            Case(seconds: 0, item: 0, offset: 0, phase: "opening", kind: "segment"),
            Case(seconds: 0.4, item: 0, offset: 400, phase: "opening", kind: "segment"),
            Case(seconds: 0.9994, item: 0, offset: 999, phase: "opening", kind: "segment"),
            // Rounds to item 0's end: the silence's start.
            Case(seconds: 0.9996, item: 1, offset: 0, phase: "opening", kind: "silence"),
            Case(seconds: 1.2, item: 1, offset: 200, phase: "opening", kind: "silence"),
            Case(seconds: 1.5, item: 2, offset: 0, phase: "body", kind: "segment"),
            // An interjection and the bell are in the phase they fall in.
            Case(seconds: 3.6, item: 3, offset: 100, phase: "body", kind: "interjection"),
            Case(seconds: 4, item: 4, offset: 250, phase: "body", kind: "bell"),
            // The end, and a time that rounds to it, are the last item's end.
            Case(seconds: 5, item: 4, offset: 1_250, phase: "body", kind: "bell"),
            Case(seconds: 4.9996, item: 4, offset: 1_250, phase: "body", kind: "bell"),
        ]
    )
    func timelineTable(_ row: Case) throws {
        let map = try PlaybackMap(timeline: Self.timeline())
        #expect(try map.locate(seconds: row.seconds) == row.position(rate: 1_000))
    }

    @Test(
        "Mixed rates, 22,050 Hz and 8 kHz: seconds → item, offset in the item's own frames",
        arguments: [
            Case(seconds: 0, item: 0, offset: 0, phase: "opening", kind: "segment"),
            Case(seconds: 1.5, item: 0, offset: 33_075, phase: "opening", kind: "segment"),
            Case(seconds: 2.99999, item: 1, offset: 0, phase: "opening", kind: "silence"),
            Case(seconds: 3, item: 1, offset: 0, phase: "opening", kind: "silence"),
            Case(seconds: 3.00005, item: 1, offset: 0, phase: "opening", kind: "silence"),
            Case(seconds: 3.0001, item: 1, offset: 1, phase: "opening", kind: "silence"),
            Case(seconds: 12.04, item: 1, offset: 72_320, phase: "opening", kind: "silence"),
            Case(seconds: 12.0431, item: 2, offset: 0, phase: "body", kind: "segment"),
            Case(seconds: 12.043125, item: 2, offset: 0, phase: "body", kind: "segment"),
            Case(seconds: 12.543125, item: 2, offset: 11_025, phase: "body", kind: "segment"),
            Case(seconds: 13.043125, item: 2, offset: 22_050, phase: "body", kind: "segment"),
        ]
    )
    func mixedRateTable(_ row: Case) throws {
        let map = try PlaybackMap(items: Self.queueItems)
        #expect(map.ticksPerSecond == 3_528_000)
        let rate = Self.queueItems[row.item].sampleRate
        #expect(try map.locate(seconds: row.seconds) == row.position(rate: rate, timelineIndex: row.item))
    }

    @Test("Item and offset → elapsed time, with frames only when the items share a rate")
    func elapsedTable() throws {
        let timeline = try PlaybackMap(timeline: Self.timeline())
        #expect(try timeline.elapsed(itemIndex: 2, offsetFrames: 100) == PlaybackElapsed(seconds: 1.6, frames: 1_600))
        #expect(
            try timeline.elapsed(itemIndex: 2, offsetSeconds: 0.1004) == PlaybackElapsed(seconds: 1.6, frames: 1_600)
        )
        #expect(try timeline.elapsed(itemIndex: 4, offsetSeconds: 1.25) == PlaybackElapsed(seconds: 5, frames: 5_000))
        let queue = try PlaybackMap(items: Self.queueItems)
        #expect(try queue.elapsed(itemIndex: 0, offsetFrames: 0) == PlaybackElapsed(seconds: 0, frames: nil))
        #expect(try queue.elapsed(itemIndex: 1, offsetFrames: 72_320) == PlaybackElapsed(seconds: 12.04, frames: nil))
        #expect(try queue.elapsed(itemIndex: 1, offsetSeconds: 9.04) == PlaybackElapsed(seconds: 12.04, frames: nil))
        #expect(try queue.elapsed(itemIndex: 2, offsetSeconds: 1) == PlaybackElapsed(seconds: 13.043125, frames: nil))
        #expect(queue.durationSeconds == 13.043125)
    }

    @Test("Overlays change nothing: a time under a gong is in the narration item under it")
    func overlaysMapToTheLane() throws {
        let gong = TimelineOverlay(
            index: 0,
            lane: .cues,
            kind: .gong,
            name: "gong",
            startFrame: 800,
            frameCount: 2_000,
            gain: 1,
            source: AudioSourceInfo(path: nil, sampleRate: 1_000, frameCount: 2_000, gapless: true)
        )
        let map = try PlaybackMap(timeline: Self.timeline(overlays: [gong]))
        #expect(map == (try PlaybackMap(timeline: Self.timeline())))
        #expect(try map.locate(seconds: 0.9).itemIndex == 0)
        #expect(
            try map.locate(seconds: 1.3)
                == PlaybackPosition(
                    itemIndex: 1,
                    offsetFrames: 300,
                    offsetSeconds: 0.3,
                    phase: "opening",
                    kind: "silence"
                )
        )
        #expect(try map.locate(seconds: 2.7).itemIndex == 2)
    }

    /// The one problem of the ``ScriptError`` `body` throws, after checking its code.
    static func problem(_ body: () throws -> Void) -> ScriptProblem? {
        do {
            try body()
            return nil
        } catch {
            let error = error as? ScriptError
            #expect(error?.code == .positionOutOfRange)
            return error?.problems.count == 1 ? error?.problems[0] : nil
        }
    }

    @Test("Out of range: the argument and a sentence with the range")
    func outOfRange() throws {
        let map = try PlaybackMap(timeline: Self.timeline())
        let queue = try PlaybackMap(items: Self.queueItems)
        let cases: [(ScriptProblem?, String, String)] = [
            (
                Self.problem { _ = try map.locate(seconds: 5.5) }, "seconds",
                "5.5 is past the session's end; positions run from 0 to 5 s"
            ),
            (
                Self.problem { _ = try map.locate(seconds: -1) }, "seconds",
                "-1 is before the session's start; positions run from 0 to 5 s"
            ),
            (
                Self.problem { _ = try map.locate(seconds: .nan) }, "seconds",
                "nan is not a time; positions run from 0 to 5 s"
            ),
            (
                Self.problem { _ = try queue.locate(seconds: 13.0432) }, "seconds",
                "13.0432 is past the session's end; positions run from 0 to 13.043125 s"
            ),
            (
                Self.problem { _ = try map.elapsed(itemIndex: 5, offsetFrames: 0) }, "itemIndex",
                "5 is not an item; items run from 0 to 4"
            ),
            (
                Self.problem { _ = try map.elapsed(itemIndex: -1, offsetSeconds: 0) }, "itemIndex",
                "-1 is not an item; items run from 0 to 4"
            ),
            (
                Self.problem { _ = try map.elapsed(itemIndex: 0, offsetSeconds: 1.5) }, "offset",
                "1.5 is past item 0's end; offsets in it run from 0 to 1 s"
            ),
            (
                Self.problem { _ = try map.elapsed(itemIndex: 0, offsetSeconds: -0.5) }, "offset",
                "-0.5 is negative; offsets in it run from 0 to 1 s"
            ),
            (
                Self.problem { _ = try map.elapsed(itemIndex: 0, offsetFrames: 1_001) }, "offset",
                "1001 frames is past item 0's end; offsets in it run from 0 to 1000 frames"
            ),
            (
                Self.problem { _ = try queue.elapsed(itemIndex: 1, offsetSeconds: 9.1) }, "offset",
                "9.1 is past item 1's end; offsets in it run from 0 to 9.043125 s"
            ),
        ]
        for (problem, location, rule) in cases {
            #expect(problem == ScriptProblem(location: location, rule: rule))
        }
    }

    @Test("Rates whose common tick is too fine, and sessions too long to count, are errors")
    func unmappable() throws {
        let rates = [767_993, 767_999, 768_000].map { SampleRate($0)! }
        let fine = rates.map { PlaybackMap.Item(kind: "segment", phase: nil, sampleRate: $0, frameCount: 1) }
        #expect(
            throws: ScriptError(
                .unmappablePlayback,
                ScriptProblem(
                    location: "items",
                    rule:
                        "the sample rates 767993, 767999, 768000 Hz need more than 2^53 ticks a second to be counted exactly together"
                )
            )
        ) {
            try PlaybackMap(items: fine)
        }
        let long = [
            PlaybackMap.Item(kind: "segment", phase: nil, sampleRate: 44_100, frameCount: Frames(1 << 50)),
            PlaybackMap.Item(kind: "silence", phase: nil, sampleRate: 48_000, frameCount: 1),
        ]
        #expect(
            throws: ScriptError(
                .unmappablePlayback,
                ScriptProblem(
                    location: "items[0]",
                    rule: "the session is too long to count in ticks of 1/7056000 s (at most 2^53)"
                )
            )
        ) {
            try PlaybackMap(items: long)
        }
    }

    /// Random items: 1 to 12 of them, at rates apps play, 1 to 300,000 frames each.
    static func randomItems(_ generator: inout SeededGenerator) -> [PlaybackMap.Item] {
        let rates: [SampleRate] = [8_000, 11_025, 16_000, 22_050, 24_000, 44_100, 48_000]
        return (0..<(1 + Int(generator.uniform(below: 12)))).map { index in
            PlaybackMap.Item(
                kind: index % 2 == 0 ? "segment" : "silence",
                phase: "p\(index / 3)",
                sampleRate: rates[Int(generator.uniform(below: UInt64(rates.count)))],
                frameCount: Frames(1 + Int64(generator.uniform(below: 300_000)))
            )
        }
    }

    /// A time uniform in `[0, duration]`.
    static func randomSeconds(_ generator: inout SeededGenerator, in duration: Double) -> Double {
        min(duration, Double(generator.next() >> 11) / Double(1 << 53) * duration)
    }

    /// Checks both round trips on `map`: every (item, offset) comes back exactly, and every time
    /// comes back within half a frame of its item (and half a tick of the seconds' rounding).
    static func checkRoundTrips(_ map: PlaybackMap, _ generator: inout SeededGenerator) throws {
        let last = map.items.count - 1
        let end = try map.locate(seconds: map.durationSeconds)
        #expect(
            end.itemIndex == last && end.offsetFrames == map.items[last].frameCount,
            "the end is the last item's end"
        )
        let endElapsed = try map.elapsed(itemIndex: last, offsetFrames: map.items[last].frameCount)
        #expect(endElapsed.seconds == map.durationSeconds)
        #expect(try map.locate(seconds: endElapsed.seconds) == end)
        for _ in 0..<200 {
            let item = Int(generator.uniform(below: UInt64(map.items.count)))
            let offset = Frames(Int64(generator.uniform(below: UInt64(map.items[item].frameCount.count))))
            let elapsed = try map.elapsed(itemIndex: item, offsetFrames: offset)
            let position = try map.locate(seconds: elapsed.seconds)
            #expect(
                position.itemIndex == item && position.offsetFrames == offset,
                "item \(item) + \(offset) → \(elapsed.seconds) s → item \(position.itemIndex) + \(position.offsetFrames)"
            )

            let seconds = randomSeconds(&generator, in: map.durationSeconds)
            let located = try map.locate(seconds: seconds)
            let back = try map.elapsed(itemIndex: located.itemIndex, offsetFrames: located.offsetFrames).seconds
            let rate = Double(map.items[located.itemIndex].sampleRate.hertz)
            let bound = 0.5 / rate + 0.5 / Double(map.ticksPerSecond) + 1e-9
            #expect(
                abs(back - seconds) <= bound,
                "\(seconds) s → item \(located.itemIndex) + \(located.offsetFrames) → \(back) s"
            )
        }
    }

    @Test("Property: random mixed-rate items round-trip exactly at frame resolution", arguments: 0..<20)
    func mixedRateRoundTrips(seed: UInt64) throws {
        var generator = SeededGenerator(seed: 0x51_7E + seed)
        try Self.checkRoundTrips(try PlaybackMap(items: Self.randomItems(&generator)), &generator)
    }

    @Test("Property: random timelines round-trip exactly at frame resolution", arguments: 0..<20)
    func timelineRoundTrips(seed: UInt64) throws {
        var generator = SeededGenerator(seed: 0x7131 + seed)
        let rate: SampleRate = [8_000, 22_050, 44_100, 48_000][Int(generator.uniform(below: 4))]
        var timeline = Self.timeline()
        timeline.sampleRate = rate
        var start: Int64 = 0
        timeline.items = Self.randomItems(&generator).enumerated().map { index, item in
            defer { start += item.frameCount.count }
            return TimelineItem(index: index, startFrame: Frames(start), frameCount: item.frameCount, content: .silence)
        }
        try Self.checkRoundTrips(try PlaybackMap(timeline: timeline), &generator)
    }
}
