import SessionTimeline
import Testing

/// Where a voice pauses between sentences: abbreviations, initials, decimals, times and ordinal
/// dates in English and German never part one; a full stop, `!`, `?` or `…` before a capital does.
@Suite("Sentences")
struct SentenceSplitterTests {
    @Test(
        "English",
        arguments: [
            ("Sit with Dr. Smith today.", ["Sit with Dr. Smith today."]),
            ("Breathe in. Breathe out.", ["Breathe in.", "Breathe out."]),
            ("Mr. and Mrs. Jones walk at 5:30 a.m. every day.", ["Mr. and Mrs. Jones walk at 5:30 a.m. every day."]),
            ("Hold it for 3.5 seconds. Then let go.", ["Hold it for 3.5 seconds.", "Then let go."]),
            (
                "Read J. R. R. Tolkien, e.g. The Hobbit. Rest now.",
                ["Read J. R. R. Tolkien, e.g. The Hobbit.", "Rest now."]
            ),
            ("Notice the breath, the body, etc. and stay.", ["Notice the breath, the body, etc. and stay."]),
            ("Is it there? Yes! Good…  Now rest.", ["Is it there?", "Yes!", "Good…", "Now rest."]),
            ("And then... slowly open your eyes.", ["And then... slowly open your eyes."]),
            ("\"Let it be.\" She smiled.", ["\"Let it be.\"", "She smiled."]),
            ("Turn to No. 5 in the book. Say no. Then rest.", ["Turn to No. 5 in the book.", "Say no.", "Then rest."]),
            ("Visit St. Ives (see Fig. 2). Rest.", ["Visit St. Ives (see Fig. 2).", "Rest."]),
            ("Sleep well", ["Sleep well"]),
            ("  ", []),
        ]
    )
    func english(text: String, expected: [String]) {
        #expect(SentenceSplitter.sentences(of: text) == expected)
    }

    @Test(
        "German",
        arguments: [
            ("Atme z. B. langsam ein. Dann aus.", ["Atme z. B. langsam ein.", "Dann aus."]),
            ("Atme z.B. langsam ein.", ["Atme z.B. langsam ein."]),
            ("Übung Nr. 3 beginnt jetzt.", ["Übung Nr. 3 beginnt jetzt."]),
            ("Das dauert ca. drei Minuten. Bleib dabei.", ["Das dauert ca. drei Minuten.", "Bleib dabei."]),
            ("Wir beginnen um 5:30 Uhr, d. h. früh.", ["Wir beginnen um 5:30 Uhr, d. h. früh."]),
            ("Am 3. Mai üben wir. Am 4. ruhen wir.", ["Am 3. Mai üben wir.", "Am 4. ruhen wir."]),
            ("Halte 2,5 Sekunden. Lass los.", ["Halte 2,5 Sekunden.", "Lass los."]),
            ("Frau Dr. Müller bzw. Prof. Weber leitet an.", ["Frau Dr. Müller bzw. Prof. Weber leitet an."]),
            ("Spüre Hände, Füße usw. Dann ruhe.", ["Spüre Hände, Füße usw.", "Dann ruhe."]),
            ("„Lass es sein.“ Sie lächelt.", ["„Lass es sein.“", "Sie lächelt."]),
            ("Sie sagt: „Prof. Weber kommt.“ Gut.", ["Sie sagt: „Prof. Weber kommt.“", "Gut."]),
            ("30 Sekunden verbleiben! Weiter so.", ["30 Sekunden verbleiben!", "Weiter so."]),
        ]
    )
    func german(text: String, expected: [String]) {
        #expect(SentenceSplitter.sentences(of: text) == expected)
    }
}
