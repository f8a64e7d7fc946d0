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
