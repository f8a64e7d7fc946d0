import SessionTimeline
import Testing

@testable import SessionAudio

@Suite("eSpeak NG's word events as the script's words")
struct ESpeakMarksTests {
    /// Speech of `words` words, each 1,000 samples of sound after 500 of silence.
    static func samples(words: Int) -> [Int16] {
        (0..<words).flatMap { _ in [Int16](repeating: 0, count: 500) + [Int16](repeating: 5_000, count: 1_000) }
    }

    static func word(_ position: Int, _ length: Int, _ sample: Int) -> ESpeakTextEvent {
        ESpeakTextEvent(kind: .word, textPosition: position, length: length, sample: sample)
    }

    @Test("An onset after silence: the nearest sound after 10 ms under −50 dBFS; the clip's start counts as silence")
    func onsetsAfterSilence() {
        // Sound from 5 (the clip's start is silence before it), a click at 295 after 95 quiet
        // samples (not enough), sound again at 600 after 200, a sample at −51 dBFS at 900 (silence).
        var samples = [Int16](repeating: 0, count: 1_200)
        for index in 5..<200 { samples[index] = 2_000 }
        samples[295] = 2_000
        for index in 600..<800 { samples[index] = -2_000 }
        samples[900] = HeardSound.level - 1
        samples[1_000] = HeardSound.level
        func nearest(_ target: Int, _ range: Range<Int>) -> Int? {
            HeardSound.nearestOnsetAfterSilence(to: target, in: range, of: samples, quiet: 100)
        }
        #expect(nearest(0, 0..<100) == 5)
        #expect(nearest(295, 250..<350) == nil, "95 samples of silence are not 100")
        #expect(nearest(350, -50..<2_000) == 600, "the range is clamped to the samples")
        #expect(nearest(1_100, 0..<1_200) == 1_000, "a sample below −50 dBFS is silence; one at it is sound")
        #expect(nearest(800, 0..<1_200) == 600, "of two at the same distance, the earlier")
        #expect(nearest(700, 601..<700) == nil, "inside sound there is no onset")
    }

    @Test("Words are the script's, punctuation trimmed, each from its first sound to its last")
    func plain() throws {
        let text = "Notice, \"the\" breath."
        let events = [
            ESpeakTextEvent(kind: .sentence, textPosition: 1, length: 0, sample: 0),
            Self.word(1, 6, 0), Self.word(10, 3, 1_500), Self.word(16, 6, 3_000),
            ESpeakTextEvent(kind: .clauseEnd, textPosition: 22, length: 0, sample: 4_500),
        ]
        let marks = try #require(ESpeakMarks.marks(of: text, events: events, samples: Self.samples(words: 3)))
        #expect(marks.words.map(\.text) == ["Notice", "the", "breath"])
        #expect(marks.words.map(\.startFrame.count) == [500, 2_000, 3_500], "each starts at its sound, after silence")
        #expect(marks.words.map(\.frameCount.count) == [1_000, 1_000, 1_000], "and ends with it")
        #expect(marks.sentences.map(\.text) == [text])
        #expect(marks.sentences.first?.startFrame.count == 500 && marks.sentences.first?.frameCount.count == 4_000)
    }

    @Test("Events of no characters, inside a word already matched, or on a symbol are no new word; never a wrong one")
    func oddEvents() throws {
        let text = "Most of the time & more"
        let events = [
            Self.word(1, 4, 0),  // Most
            Self.word(2, 4, 1_500),  // eSpeak's position inside "Most", for "of"
            Self.word(0, 0, 2_000),  // a word of no characters
            Self.word(9, 3, 3_000),  // the
            Self.word(13, 4, 4_500),  // time
            Self.word(18, 1, 6_000),  // "&", said as "and"
            Self.word(20, 4, 7_500),  // more
        ]
        let marks = try #require(ESpeakMarks.marks(of: text, events: events, samples: Self.samples(words: 6)))
        #expect(marks.words.map(\.text) == ["Most", "the", "time", "more"])
        #expect(marks.words.map(\.startFrame.count) == [500, 3_500, 5_000, 8_000])
    }

    @Test("Events out of order or past the speech give no marks at all")
    func broken() {
        let samples = Self.samples(words: 2)
        #expect(
            ESpeakMarks.marks(of: "a b", events: [Self.word(1, 1, 1_500), Self.word(3, 1, 0)], samples: samples) == nil
        )
        #expect(
            ESpeakMarks.marks(of: "a b", events: [Self.word(1, 1, 0), Self.word(3, 1, 9_999)], samples: samples) == nil
        )
    }
}
