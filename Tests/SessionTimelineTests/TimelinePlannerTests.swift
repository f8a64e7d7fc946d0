import SessionTimeline
import Testing

@Suite("Gap arithmetic")
struct TimelinePlannerTests {
    typealias Cue = TimelinePlanner.Cue

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let cues: [(start: Int64, length: Int64)]
        let sessionEnd: Int64
        var strikes: [Range<Int64>] = []
        let expected: [TimelinePlanner.Stretch]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "gaps become silence, trailing silence pads to the end",
            cues: [(0, 100), (300, 50)],
            sessionEnd: 1_000,
            expected: [
                .clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(100), frameCount: Frames(200)),
                .clip(cue: 1, start: Frames(300), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(350), frameCount: Frames(650)),
                .bell(start: Frames(1_000)),
            ]
        ),
        Case(
            name: "a clip planned before the cursor starts late",
            cues: [(0, 500), (200, 100)],
            sessionEnd: 1_000,
            expected: [
                .clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil),
                .clip(cue: 1, start: Frames(500), lateBy: Frames(300), cause: .clipBefore),
                .silence(start: Frames(600), frameCount: Frames(400)),
                .bell(start: Frames(1_000)),
            ]
        ),
        Case(
            name: "ties keep input order (segments before interjections)",
            cues: [(100, 10), (100, 20), (100, 5)],
            sessionEnd: 200,
            expected: [
                .silence(start: Frames(0), frameCount: Frames(100)),
                .clip(cue: 0, start: Frames(100), lateBy: Frames(0), cause: nil),
                .clip(cue: 1, start: Frames(110), lateBy: Frames(10), cause: .clipBefore),
                .clip(cue: 2, start: Frames(130), lateBy: Frames(30), cause: .clipBefore),
                .silence(start: Frames(135), frameCount: Frames(65)),
                .bell(start: Frames(200)),
            ]
        ),
        Case(
            name: "cues are placed in time order, whatever their input order",
            cues: [(500, 10), (0, 10)],
            sessionEnd: 600,
            expected: [
                .clip(cue: 1, start: Frames(0), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(10), frameCount: Frames(490)),
                .clip(cue: 0, start: Frames(500), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(510), frameCount: Frames(90)),
                .bell(start: Frames(600)),
            ]
        ),
        Case(
            name: "content past the duration pushes the bell back, with no silence",
            cues: [(0, 1_200)],
            sessionEnd: 1_000,
            expected: [.clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil), .bell(start: Frames(1_200))]
        ),
        Case(
            name: "content ending exactly at the duration leaves no empty silence",
            cues: [(0, 1_000)],
            sessionEnd: 1_000,
            expected: [.clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil), .bell(start: Frames(1_000))]
        ),
        Case(
            name: "a clip starting exactly where the last ended needs no silence",
            cues: [(0, 100), (100, 100)],
            sessionEnd: 200,
            expected: [
                .clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil),
                .clip(cue: 1, start: Frames(100), lateBy: Frames(0), cause: nil),
                .bell(start: Frames(200)),
            ]
        ),
        Case(
            name: "no cues at all is silence and the bell",
            cues: [],
            sessionEnd: 1_000,
            expected: [.silence(start: Frames(0), frameCount: Frames(1_000)), .bell(start: Frames(1_000))]
        ),
        Case(
            name: "lateness carries through a chain of clips",
            cues: [(0, 300), (100, 300), (200, 300), (1_000, 10)],
            sessionEnd: 1_000,
            expected: [
                .clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil),
                .clip(cue: 1, start: Frames(300), lateBy: Frames(200), cause: .clipBefore),
                .clip(cue: 2, start: Frames(600), lateBy: Frames(400), cause: .clipBefore),
                .silence(start: Frames(900), frameCount: Frames(100)),
                .clip(cue: 3, start: Frames(1_000), lateBy: Frames(0), cause: nil),
                .bell(start: Frames(1_010)),
            ]
        ),
        Case(
            name: "a clip planned on a gong's strike waits for its end; one after it, or before it, does not",
            cues: [(0, 100), (500, 100), (2_000, 100)],
            sessionEnd: 3_000,
            strikes: [0..<250, 1_900..<2_200],
            expected: [
                .silence(start: Frames(0), frameCount: Frames(250)),
                .clip(cue: 0, start: Frames(250), lateBy: Frames(250), cause: .gong),
                .silence(start: Frames(350), frameCount: Frames(150)),
                .clip(cue: 1, start: Frames(500), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(600), frameCount: Frames(1_600)),
                .clip(cue: 2, start: Frames(2_200), lateBy: Frames(200), cause: .gong),
                .silence(start: Frames(2_300), frameCount: Frames(700)),
                .bell(start: Frames(3_000)),
            ]
        ),
        Case(
            name: "a clip pushed onto a strike by the one before waits for it too; overlapping strikes chain",
            cues: [(0, 100), (50, 100)],
            sessionEnd: 1_000,
            strikes: [80..<300, 250..<400],
            expected: [
                .clip(cue: 0, start: Frames(0), lateBy: Frames(0), cause: nil),
                .silence(start: Frames(100), frameCount: Frames(300)),
                .clip(cue: 1, start: Frames(400), lateBy: Frames(350), cause: .gong),
                .silence(start: Frames(500), frameCount: Frames(500)),
                .bell(start: Frames(1_000)),
            ]
        ),
    ]

    @Test("Stretches are placed as the timing rules say", arguments: cases)
    func placement(_ testCase: Case) {
        let cues = testCase.cues.map { Cue(plannedStart: Frames($0.start), frameCount: Frames($0.length)) }
        let strikes = testCase.strikes.map { Frames($0.lowerBound)..<Frames($0.upperBound) }
        let placed = TimelinePlanner.place(cues, sessionEnd: Frames(testCase.sessionEnd), strikes: strikes)
        #expect(placed == testCase.expected)
    }
}

@Suite("Planning a script")
struct ScriptPlanningTests {
    static func clip(_ key: String, frames: Int64, rate: SampleRate = 1_000) -> SourcedClip {
        SourcedClip(
            key: key,
            source: AudioSourceInfo(
                path: "/cache/\(key).mp3",
                sampleRate: rate,
                frameCount: Frames(frames),
                gapless: true
            )
        )
    }

    static let bell = AudioSourceInfo(path: nil, sampleRate: 1_000, frameCount: Frames(8_000), gapless: false)

    static func script(interjections: [Script.Interjection]) -> Script {
        Script(
            id: "s",
            category: "c",
            title: "T",
            durationSeconds: 60,
            kind: .guided(
                GuidedSession(
                    segments: [
                        .init(id: "a", startSeconds: 0, text: "A", phase: "opening"),
                        .init(id: "b", startSeconds: 20, text: "B", phase: "teachings"),
                    ],
                    interjections: interjections
                )
            )
        )
    }

    @Test("A one-second window plans its interjection at exactly that second")
    func oneSecondWindow() throws {
        let script = Self.script(interjections: [
            .init(windowStartSeconds: 30, windowEndSeconds: 30, textOptions: ["X"])
        ])
        for seed: UInt64 in [0, 1, 2, 99] {
            #expect(
                script.guided.resolveInterjections(seed: seed) == [
                    ResolvedInterjection(interjectionIndex: 0, plannedSeconds: 30, optionIndex: 0, text: "X")
                ]
            )
        }
    }

    @Test("A window holding no whole second plans at its start")
    func windowWithinASecond() {
        let script = Self.script(interjections: [
            .init(windowStartSeconds: 10.25, windowEndSeconds: 10.75, textOptions: ["X", "Y"])
        ])
        let resolved = script.guided.resolveInterjections(seed: 5)
        #expect(resolved.map(\.plannedSeconds) == [10.25])
    }

    @Test("Seed 7 makes the documented choices for the seed's two windows")
    func knownSeed() {
        let script = Self.script(interjections: [
            .init(windowStartSeconds: 350, windowEndSeconds: 370, textOptions: ["a", "b", "c"]),
            .init(windowStartSeconds: 440, windowEndSeconds: 460, textOptions: ["d", "e"]),
        ])
        // SplitMix64(7): uniform(below: 21) = 9, uniform(below: 3) = 0, uniform(below: 21) = 0, uniform(below: 2) = 1.
        #expect(
            script.guided.resolveInterjections(seed: 7) == [
                ResolvedInterjection(interjectionIndex: 0, plannedSeconds: 359, optionIndex: 0, text: "a"),
                ResolvedInterjection(interjectionIndex: 1, plannedSeconds: 440, optionIndex: 1, text: "e"),
            ]
        )
    }

    @Test("Every seed keeps interjections inside their windows")
    func choicesStayInWindows() {
        let script = Self.script(interjections: [
            .init(windowStartSeconds: 35, windowEndSeconds: 40, textOptions: ["p", "q", "r"])
        ])
        var seen = Set<Double>()
        for seed in UInt64(0)..<200 {
            let choice = script.guided.resolveInterjections(seed: seed)[0]
            #expect((35...40).contains(choice.plannedSeconds))
            #expect(choice.text == ["p", "q", "r"][choice.optionIndex])
            seen.insert(choice.plannedSeconds)
        }
        #expect(seen == [35, 36, 37, 38, 39, 40], "200 seeds reach every second of the window")
    }

    @Test("A planned timeline is contiguous, converts source lengths, and ties put segments first")
    func plannedTimeline() throws {
        let script = Self.script(interjections: [
            .init(windowStartSeconds: 20, windowEndSeconds: 20, textOptions: ["X"])
        ])
        let resolved = script.guided.resolveInterjections(seed: 1)
        let rate = SampleRate(1_000)
        let timeline = Timeline.plan(
            script: script,
            session: script.guided,
            seed: 1,
            sampleRate: rate,
            channelCount: 1,
            segmentClips: [Self.clip("ka", frames: 5_000), Self.clip("kb", frames: 4_000, rate: 2_000)],
            interjections: resolved,
            interjectionClips: [Self.clip("kx", frames: 1_000)],
            layers: SessionLayers(bell: .chosen(ChosenSound(name: "bell", source: Self.bell)))
        )
        let summary = timeline.items.map {
            ($0.kind, $0.startFrame.count, $0.frameCount.count, $0.clip?.lateByFrames.count)
        }
        let expected: [(TimelineItem.Kind, Int64, Int64, Int64?)] = [
            (.segment, 0, 5_000, 0),
            (.silence, 5_000, 15_000, nil),
            (.segment, 20_000, 2_000, 0),  // 4 000 frames at 2 kHz are 2 000 at 1 kHz
            (.interjection, 22_000, 1_000, 2_000),
            (.silence, 23_000, 37_000, nil),
            (.bell, 60_000, 8_000, nil),
        ]
        #expect(summary.count == expected.count)
        for (got, want) in zip(summary, expected) {
            #expect(
                got.0 == want.0 && got.1 == want.1 && got.2 == want.2 && got.3 == want.3,
                "\(got) should be \(want)"
            )
        }
        #expect(timeline.items.map(\.index) == Array(0..<6))
        #expect(timeline.totalFrames == Frames(68_000))
        #expect(timeline.items[3].clip?.plannedStartFrame == Frames(20_000))
        #expect(timeline.items[2].clip?.segmentId == "b")
        #expect(timeline.items[3].clip?.phase == "teachings", "an interjection is in the phase it starts in")
        #expect(timeline.items[3].clip?.segmentId == nil)
    }

    @Test("A script without interjections plans its segments and the bell")
    func noInterjections() throws {
        let script = Self.script(interjections: [])
        let rate = SampleRate(1_000)
        let timeline = Timeline.plan(
            script: script,
            session: script.guided,
            seed: 0,
            sampleRate: rate,
            channelCount: 2,
            segmentClips: [Self.clip("ka", frames: 1_000), Self.clip("kb", frames: 1_000)],
            interjections: [],
            interjectionClips: [],
            layers: SessionLayers(bell: .chosen(ChosenSound(name: "bell", source: Self.bell)))
        )
        #expect(timeline.items.map(\.kind) == [.segment, .silence, .segment, .silence, .bell])
        #expect(timeline.totalFrames == Frames(68_000))
        #expect(timeline.channelCount == 2)
    }
}
