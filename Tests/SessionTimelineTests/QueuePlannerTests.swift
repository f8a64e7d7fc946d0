import Foundation
import SessionTimeline
import Testing

@Suite("The on-device queue's arithmetic")
struct QueuePlannerTests {
    /// A clip item of `frames` at the timeline's rate, from a source of `sourceFrames` at `sourceRate`.
    static func clip(
        _ index: Int,
        at start: Int64,
        frames: Int64,
        sourceFrames: Int64? = nil,
        sourceRate: SampleRate = 22_050,
        segment: String? = "intro",
        kind: TimelineItem.Kind = .segment
    ) -> TimelineItem {
        let clip = PlacedClip(
            text: "text \(index)",
            phase: kind == .interjection ? "interjection" : segment ?? "intro",
            segmentId: kind == .interjection ? nil : segment,
            plannedStartFrame: Frames(start),
            lateByFrames: .zero,
            key: "key\(index)"
        )
        let audio = ItemAudio(
            source: AudioSourceInfo(
                path: "cache/key\(index).mp3",
                sampleRate: sourceRate,
                frameCount: Frames(sourceFrames ?? frames),
                gapless: true
            ),
            gain: 1
        )
        return TimelineItem(
            index: index,
            startFrame: Frames(start),
            frameCount: Frames(frames),
            content: kind == .interjection ? .interjection(clip, audio) : .segment(clip, audio)
        )
    }

    static func silence(_ index: Int, at start: Int64, frames: Int64) -> TimelineItem {
        TimelineItem(index: index, startFrame: Frames(start), frameCount: Frames(frames), content: .silence)
    }

    static func timeline(_ items: [TimelineItem], rate: SampleRate = 22_050) -> Timeline {
        Timeline(scriptId: "s", title: "S", seed: 3, sampleRate: rate, channelCount: .mono, items: items)
    }

    @Test("Each silence ends on the 8 kHz frame nearest the timeline's end of it, worked by hand")
    func silenceLengths() throws {
        // 22,050 Hz: 1,000 frames of clip, then silence to 23,050 (1 s more: 8,000 frames exactly);
        // a second clip of 1,001 frames ends at 24,051; silence to 24,062 is 11 frames = 3.99 frames
        // at 8 kHz, and the queue is then at 24,051/22,050 s, so 11 × 8,000 / 22,050 rounds to 4;
        // 1 frame of silence (0.36 of an 8 kHz frame) is left out; the bell's source is built in.
        let bell = TimelineItem(
            index: 5,
            startFrame: 24_063,
            frameCount: 100,
            content: .bell(
                ItemAudio(
                    source: AudioSourceInfo(path: nil, sampleRate: 22_050, frameCount: 100, gapless: false),
                    gain: 1
                ),
                name: "builtin",
                cue: nil
            )
        )
        let timeline = Self.timeline([
            Self.clip(0, at: 0, frames: 1_000),
            Self.silence(1, at: 1_000, frames: 22_050),
            Self.clip(2, at: 23_050, frames: 1_001, segment: "body"),
            Self.silence(3, at: 24_051, frames: 11),
            Self.silence(4, at: 24_062, frames: 1),
            bell,
        ])
        let queue = try QueuePlanner.plan(timeline, delivery: .originals)
        #expect(
            queue.items.map(\.file) == [
                "001-intro.mp3", "silence-8000hz-8000.wav", "003-body.mp3", "silence-8000hz-4.wav", "005-bell.wav",
            ]
        )
        #expect(queue.items.map(\.timelineIndex) == [0, 1, 2, 3, 5])
        #expect(queue.items.map(\.sourceFrames) == [1_000, 8_000, 1_001, 4, 100])
        #expect(queue.items.map(\.sourceSampleRate) == [22_050, 8_000, 22_050, 8_000, 22_050])
        #expect(
            queue.items.map(\.origin) == [
                .copied(path: "cache/key0.mp3"), .silence, .copied(path: "cache/key2.mp3"), .silence, .rendered,
            ]
        )
        #expect(queue.items.map(\.phase) == ["intro", "intro", "body", "body", "body"])
        // The queue ends at 24,051/22,050 + 4/8,000 s; the timeline at 24,163/22,050 − the bell's 100.
        let expectedEnd = 24_051.0 / 22_050 + 4.0 / 8_000 + 100.0 / 22_050
        #expect(abs(queue.durationSeconds - expectedEnd) < 1e-12)
        #expect(queue.worstDriftSeconds <= 0.5 / 8_000)
    }

    @Test("A clip at another rate plays its own frames; the next silence takes back its rounding")
    func otherRates() throws {
        // A 24 kHz clip of 24,001 frames is round(24,001 × 22,050 / 24,000) = 22,051 frames here.
        let timeline = Self.timeline([
            Self.clip(0, at: 0, frames: 22_051, sourceFrames: 24_001, sourceRate: 24_000),
            Self.silence(1, at: 22_051, frames: 22_049),
        ])
        let queue = try QueuePlanner.plan(timeline, delivery: .originals)
        #expect(queue.items.map(\.sourceFrames) == [24_001, 8_000])
        #expect(queue.items.map(\.sourceSampleRate) == [24_000, 8_000])
        // 2 s exactly in the timeline; the queue: 24,001/24,000 + 1 s.
        #expect(abs(queue.durationSeconds - (24_001.0 / 24_000 + 1)) < 1e-12)
        #expect(queue.worstDriftSeconds <= 0.5 / 8_000)
    }

    @Test("Re-encoded, every clip is the timeline's own frames in the chosen format; silences stay 8 kHz WAV")
    func rendered() throws {
        let timeline = Self.timeline([
            Self.clip(0, at: 0, frames: 22_051, sourceFrames: 24_001, sourceRate: 24_000),
            Self.silence(1, at: 22_051, frames: 22_049),
            Self.clip(2, at: 44_100, frames: 500, kind: .interjection),
        ])
        let queue = try QueuePlanner.plan(timeline, delivery: .rendered(fileExtension: "mp3"))
        #expect(queue.items.map(\.file) == ["001-intro.mp3", "silence-8000hz-8000.wav", "003-interjection.mp3"])
        #expect(queue.items.map(\.sourceFrames) == [22_051, 8_000, 500])
        #expect(queue.items.map(\.sourceSampleRate) == [22_050, 8_000, 22_050])
        #expect(queue.items.map(\.origin) == [.rendered, .silence, .rendered])
    }

    @Test("Silences of one length share a file; overlays of one sound share a file", arguments: [false, true])
    func sharedFiles(reencoded: Bool) throws {
        var timeline = Self.timeline([
            Self.clip(0, at: 0, frames: 100),
            Self.silence(1, at: 100, frames: 22_050),
            Self.clip(2, at: 22_150, frames: 22_050),
            Self.silence(3, at: 44_200, frames: 22_050),
        ])
        let gong = AudioSourceInfo(path: "library/gong.wav", sampleRate: 44_100, frameCount: 88_200, gapless: false)
        timeline.overlays = [0, 22_050, 44_100].enumerated().map { index, start in
            TimelineOverlay(
                index: index,
                lane: .cues,
                kind: .gong,
                name: "gong",
                startFrame: Frames(Int64(start)),
                frameCount: 100,
                gain: 1,
                source: gong
            )
        }
        let queue = try QueuePlanner.plan(timeline, delivery: reencoded ? .rendered(fileExtension: "wav") : .originals)
        #expect(queue.items[1].file == "silence-8000hz-8000.wav")
        #expect(queue.items[3].file == "silence-8000hz-8000.wav")
        #expect(queue.overlays.map(\.file) == ["gong-gong.wav", "gong-gong.wav", "gong-gong.wav"])
        #expect(queue.overlays.map(\.origin) == Array(repeating: .copied(path: "library/gong.wav"), count: 3))
    }

    @Test("File names: lower-case ASCII words joined by -")
    func slugs() throws {
        let item = Self.clip(0, at: 0, frames: 10, segment: "Body Scan — Part 2!")
        let queue = try QueuePlanner.plan(Self.timeline([item]), delivery: .originals)
        #expect(queue.items.map(\.file) == ["001-body-scan-part-2.mp3"])
    }

    @Test(
        "However long the session, no queue item ends more than half an 8 kHz frame from its timeline item",
        arguments: [(UInt64(1), SampleRate(22_050)), (2, 44_100), (3, 48_000), (4, 22_050)]
    )
    func noDrift(seed: UInt64, rate: SampleRate) throws {
        // Three hours of clips and silences at random lengths, clips at the session's rate: the
        // bound is exact. Lengths come from a splitmix64 stream, so every run is the same.
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int64) -> Int64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int64((z ^ (z >> 31)) % UInt64(bound))
        }
        var items: [TimelineItem] = []
        var cursor: Int64 = 0
        let end = Int64(rate.hertz) * 3 * 3_600
        while cursor < end {
            let length = 1 + next(Int64(rate.hertz) * (items.count % 2 == 0 ? 20 : 90))
            items.append(
                items.count % 2 == 0
                    ? Self.clip(items.count, at: cursor, frames: length, sourceRate: rate)
                    : Self.silence(items.count, at: cursor, frames: length)
            )
            cursor += length
        }
        let queue = try QueuePlanner.plan(Self.timeline(items, rate: rate), delivery: .originals)
        var clock = queue.clock
        for item in queue.items {
            clock.advance(by: item.sourceFrames, at: item.sourceSampleRate)
            let target = clock.ticks(of: item.timelineEndFrame, at: rate)
            // Half an 8 kHz frame, in ticks.
            #expect(abs(clock.elapsedTicks - target) * 16_000 <= clock.ticksPerSecond, "item \(item.index)")
        }
        #expect(queue.worstDriftSeconds <= 0.5 / 8_000)
        #expect(queue.items.count >= items.count - items.count / 100)
    }

    @Test(
        "A copied clip plays at its item's gain, less what the render's leveler takes off it and the limiter's make-up; re-encoded at 1",
        arguments: [true, false]
    )
    func gains(leveling: Bool) throws {
        var item = Self.clip(0, at: 0, frames: 11_025)
        guard case .segment(let clip, var audio) = item.content else { return }
        // The clip measures −25 LUFS, −27.5 through the leveler: the render raises it 11.5 dB
        // (gain 3.76) and levels it; played as it is, it needs 2.5 dB less.
        (audio.source.loudness, audio.source.leveledLoudness, audio.gain) = (-25, -27.5, 3.76)
        item.content = .segment(clip, audio)
        var timeline = Self.timeline([item, Self.silence(1, at: 11_025, frames: 11_025)])
        // The speech anchor's 0.6 dB made up for the render's limiter: the app has none.
        timeline.loudness = TimelineLoudness(target: -16, ceiling: -1, speechGain: 0.6, speechLeveling: leveling)
        let queue = try QueuePlanner.plan(timeline, delivery: .originals)
        let expected = (leveling ? 3.76 * pow(10, -2.5 / 20) : 3.76) * pow(10, -0.6 / 20)
        #expect(abs(queue.items[0].gain - expected) < 1e-12, "\(queue.items[0].gain)")
        #expect(queue.items[1].gain == 1, "a silence plays at 1")
        #expect(queue.loudness == QueueLoudness(target: -16, anchor: .speech, inFiles: false))
        #expect(abs(queue.masterGainDecibels - (leveling ? 8.4 : 10.9)) < 0.006, "\(queue.masterGainDecibels)")
        let reencoded = try QueuePlanner.plan(timeline, delivery: .rendered(fileExtension: "wav"))
        #expect(reencoded.items.allSatisfy { $0.gain == 1 } && reencoded.masterGainDecibels == 0)
        #expect(reencoded.loudness?.inFiles == true)
    }

    @Test("queue.json: the items in the queue's own time, the overlays as the timeline writes them, plus their file")
    func json() throws {
        var timeline = Self.timeline([
            Self.clip(0, at: 0, frames: 11_025),
            Self.silence(1, at: 11_025, frames: 11_025),
        ])
        timeline.overlays = [
            TimelineOverlay(
                index: 0,
                lane: .cues,
                kind: .gong,
                name: "gong",
                startFrame: 0,
                frameCount: 22_050,
                gain: 0.5,
                source: AudioSourceInfo(
                    path: "library/gong.wav",
                    sampleRate: 22_050,
                    frameCount: 22_050,
                    gapless: false
                )
            )
        ]
        let json = String(
            decoding: CanonicalJSON.encode(try QueuePlanner.plan(timeline, delivery: .originals)),
            as: UTF8.self
        )
        #expect(
            json == """
                {
                  "durationSeconds" : 1,
                  "items" : [
                    {
                      "durationSeconds" : 0.5,
                      "file" : "001-intro.mp3",
                      "gain" : 1,
                      "gainDb" : 0,
                      "index" : 0,
                      "kind" : "segment",
                      "phase" : "intro",
                      "sourceFrames" : 11025,
                      "sourceSampleRate" : 22050,
                      "startSeconds" : 0,
                      "text" : "text 0",
                      "timelineIndex" : 0,
                      "volume" : 1
                    },
                    {
                      "durationSeconds" : 0.5,
                      "file" : "silence-8000hz-4000.wav",
                      "gain" : 1,
                      "gainDb" : 0,
                      "index" : 1,
                      "kind" : "silence",
                      "phase" : "intro",
                      "sourceFrames" : 4000,
                      "sourceSampleRate" : 8000,
                      "startSeconds" : 0.5,
                      "timelineIndex" : 1,
                      "volume" : 1
                    }
                  ],
                  "keepalive" : {
                    "durationSeconds" : 1,
                    "file" : "keepalive-silence-8000hz.wav",
                    "loop" : true,
                    "sourceFrames" : 8000,
                    "sourceSampleRate" : 8000,
                    "volume" : 0.01
                  },
                  "kind" : "queue",
                  "masterGainDb" : 0,
                  "overlays" : [
                    {
                      "durationSeconds" : 1,
                      "file" : "gong-gong.wav",
                      "frameCount" : 22050,
                      "gain" : 0.5,
                      "gainDb" : -6.02,
                      "gapless" : false,
                      "index" : 0,
                      "kind" : "gong",
                      "lane" : "cues",
                      "loop" : false,
                      "name" : "gong",
                      "source" : "gong.wav",
                      "sourceFrames" : 22050,
                      "sourceSampleRate" : 22050,
                      "startFrame" : 0,
                      "startSeconds" : 0,
                      "volume" : 0.5
                    }
                  ],
                  "sampleRate" : 22050,
                  "schemaVersion" : 1,
                  "scriptId" : "s",
                  "seed" : 3,
                  "silenceSampleRate" : 8000,
                  "timelineDurationSeconds" : 1,
                  "title" : "S",
                  "totalFrames" : 22050,
                  "worstDriftSeconds" : 0
                }

                """
        )
    }
}

extension QueuePlannerTests {
    @Test("Rates that cannot be counted together are a planning error, not a crash")
    func uncountableRates() {
        // Three large co-prime rates: their common tick passes what 64 bits count over ten days.
        let timeline = Self.timeline(
            [
                Self.clip(0, at: 0, frames: 10, sourceRate: 191_999),
                Self.clip(1, at: 10, frames: 10, sourceRate: 191_993),
                Self.clip(2, at: 20, frames: 10, sourceRate: 191_977),
            ],
            rate: 22_050
        )
        #expect(throws: ScriptError.self) { try QueuePlanner.plan(timeline, delivery: .originals) }
    }
}
