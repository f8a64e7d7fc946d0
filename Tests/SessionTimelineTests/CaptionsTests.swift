import Foundation
import SessionTimeline
import Testing

/// Captions from words' frames: cues by sentence, two lines of 42 characters, times never early.
@Suite("Captions")
struct CaptionsTests {
    /// A timeline at 1 kHz (a frame a millisecond, so times read off directly) of one segment at
    /// 2 s, its words spoken each `wordFrames` long with `gapFrames` between, and a bell.
    static func timeline(text: String, sentences: [String], wordFrames: Int64 = 300, gapFrames: Int64 = 100) -> Timeline
    {
        var words: [SpeechMark] = []
        var marks: [SpeechMark] = []
        var frame: Int64 = 2_000
        for sentence in sentences {
            let first = frame
            for word in sentence.split(separator: " ") {
                let bare = word.trimmingCharacters(in: .punctuationCharacters)
                words.append(SpeechMark(text: bare, startFrame: Frames(frame), frameCount: Frames(wordFrames)))
                frame += wordFrames + gapFrames
            }
            marks.append(
                SpeechMark(text: sentence, startFrame: Frames(first), frameCount: Frames(frame - gapFrames - first))
            )
        }
        let clip = PlacedClip(
            text: text,
            phase: "opening",
            segmentId: "a",
            plannedStartFrame: Frames(2_000),
            lateByFrames: .zero,
            key: "k",
            words: words,
            sentences: marks
        )
        return timelineAtOneKilohertz([(.silence, 2_000, nil), (.segment, frame - 2_000, clip), (.bell, 1_000, nil)])
    }

    @Test("WebVTT: a cue per sentence from its first word to its last, every later word timed, punctuation kept")
    func webVTT() {
        let timeline = Self.timeline(
            text: "Notice the breath. Let it go, slowly.",
            sentences: ["Notice the breath.", "Let it go, slowly."]
        )
        #expect(
            Captions.webVTT(timeline) == """
                WEBVTT

                00:00:02.000 --> 00:00:03.100
                Notice <00:00:02.400>the <00:00:02.800>breath.

                00:00:03.200 --> 00:00:04.700
                Let <00:00:03.600>it <00:00:04.000>go, <00:00:04.400>slowly.

                """
        )
        #expect(
            Captions.subRip(timeline) == """
                1
                00:00:02,000 --> 00:00:03,100
                Notice the breath.

                2
                00:00:03,200 --> 00:00:04,700
                Let it go, slowly.

                """
        )
    }

    @Test("A long sentence fills two lines of at most 42 characters, then goes on in the next cue")
    func lineFilling() {
        let sentence =
            "Let the weight of your body settle into the chair beneath you, and notice where it meets the floor and where your hands rest."
        let timeline = Self.timeline(text: sentence, sentences: [sentence])
        let cues = Captions.cues(of: timeline)
        #expect(cues.count == 2)
        for cue in cues {
            #expect(cue.lines.count <= Captions.maximumLines)
            for line in cue.lines { #expect(line.count <= Captions.maximumLineLength, "\(line)") }
        }
        #expect(cues.flatMap(\.lines).joined(separator: " ") == sentence, "every word once, in order")
        #expect(
            cues[0].lines == ["Let the weight of your body settle into", "the chair beneath you, and notice where it"]
        )
        #expect(cues[1].startFrame > cues[0].endFrame)
    }

    @Test("Times round up to the millisecond, so nothing shows before its first frame")
    func rounding() {
        var timeline = Self.timeline(text: "Hi.", sentences: ["Hi."])
        timeline.sampleRate = 44_100
        let vtt = Captions.webVTT(timeline)
        // Frame 2,000 at 44.1 kHz is 45.351… ms: shown at 46 ms, never 45.
        #expect(vtt.contains("00:00:00.046 --> "), "\(vtt)")
    }

    @Test("Text that would be markup is escaped; items without words are left out, and said so")
    func escapingAndUnmarked() {
        let timeline = Self.timeline(text: "Tom&Jerry <go>.", sentences: ["Tom&Jerry <go>."])
        #expect(Captions.webVTT(timeline).contains("\nTom&amp;Jerry <00:00:02.400>&lt;go&gt;.\n"))
        var bare = timeline
        bare.items[1] = TimelineItem(
            index: 1,
            startFrame: bare.items[1].startFrame,
            frameCount: bare.items[1].frameCount,
            content: RecordedItem(
                kind: .segment,
                clip: PlacedClip(
                    text: "Rock.",
                    phase: "opening",
                    segmentId: "a",
                    plannedStartFrame: .zero,
                    lateByFrames: .zero,
                    key: "k"
                )
            ).content
        )
        #expect(Captions.itemsWithoutWords(in: bare).map(\.index) == [1])
        #expect(Captions.webVTT(bare) == "WEBVTT\n")
        #expect(Captions.leftOut(of: bare)?.hasPrefix("1 of 1 spoken items have no word timing (") == true)
        #expect(Captions.leftOut(of: timeline) == nil)
    }

    @Test("The JSON transcript has a segment per word, in seconds; formats come from the file's extension")
    func transcriptAndFormats() throws {
        let timeline = Self.timeline(text: "Notice the breath.", sentences: ["Notice the breath."])
        let json = try JSONSerialization.jsonObject(with: Captions.transcriptJSON(timeline)) as? [String: Any]
        #expect(json?["version"] as? String == "1.0.0")
        let segments = try #require(json?["segments"] as? [[String: Any]])
        #expect(segments.map { $0["body"] as? String } == ["Notice", "the", "breath."])
        #expect(segments.map { $0["startTime"] as? Double } == [2.0, 2.4, 2.8])
        #expect(segments.map { $0["endTime"] as? Double } == [2.4, 2.8, 3.1])
        #expect(CaptionFormat(path: "out/a.VTT") == .webVTT)
        #expect(CaptionFormat(path: "a.srt") == .subRip && CaptionFormat(path: "a.json") == .transcriptJSON)
        #expect(CaptionFormat(path: "a.txt") == nil && CaptionFormat(path: "vtt") == nil)
        #expect(CaptionFormat.chaptersPath(forCaptionsAt: "out/s.vtt") == "out/s.chapters.vtt")
        #expect(CaptionFormat.chaptersPath(forCaptionsAt: "out/s.srt") == nil)
    }
}
