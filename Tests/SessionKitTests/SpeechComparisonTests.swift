import Testing

@testable import SessionKit

@Suite("What was heard against the script")
struct SpeechComparisonTests {
    @Test(
        "Texts are compared as spoken words: case, punctuation, numbers, contractions, hyphens",
        arguments: [
            ("Breathe in, slowly… and OUT!", "breathe in slowly and out"),
            ("Hold for 10 seconds.", "hold for ten seconds"),
            ("Round 3 of 12: 45 seconds", "round three of twelve forty five seconds"),
            ("Your 3rd set, the 21st day", "your third set the twenty first day"),
            ("At 7:30, not 7:00", "at seven thirty not seven"),
            ("1,250 steps, 2.5 km, 50%", "one thousand two hundred fifty steps two point five km fifty percent"),
            ("one hundred and five", "one hundred five"),
            ("Don't worry, it's fine; you're here, we'll go", "do not worry it is fine you are here we will go"),
            ("Your body’s weight. Can't. Won't. Let's.", "your bodys weight can not will not let us"),
            ("Well-being — OK, alright", "well being okay all right"),
            ("Rock & roll", "rock and roll"),
        ]
    )
    func normalized(text: String, words: String) {
        #expect(SpokenWords.of(text) == words.split(separator: " ").map(String.init))
    }

    @Test("The same words heard are no errors, however spelled")
    func same() {
        let comparison = SpeechComparison(
            text: "Breathe in for 4 counts. Don't rush.",
            heard: ["Breathe", "in", "for", "four", "counts.", "Do", "not", "rush."]
        )
        #expect(comparison.errors == 0 && comparison.longestRun == 0 && comparison.wordErrorRate == 0)
        #expect(comparison.failure(under: SpeechCheckRules()) == nil)
    }

    @Test("Substitutions, deletions and insertions count one each in the error rate; a run counts the script's words")
    func edits() throws {
        let comparison = SpeechComparison(
            expected: "a b c d e f g h i j".split(separator: " ").map(String.init),
            heard: "a x c d q r s t u v j k".split(separator: " ").map(String.init)
        )
        // The least edits: b/x; e/q f/r g/s h/t i/u and v added (one run of 6); k added.
        #expect(comparison.errors == 8)
        #expect(comparison.unheardWords == 6, "b, and e to i; the words added are not the script's")
        #expect(comparison.longestRun == 5)
        #expect(comparison.runExpected == ["e", "f", "g", "h", "i"])
        #expect(comparison.runHeard == ["q", "r", "s", "t", "u", "v"])
        let reason = try #require(comparison.failure(under: SpeechCheckRules()))
        #expect(
            reason
                == #"heard "q r s t u v" where the script says "e f g h i" (6 of its 10 words not heard, 5 in a row; word error rate 0.8)"#
        )
    }

    @Test(
        "A run heard as other words that sound like it is a mishearing; other words, or none, are not",
        arguments: [
            ("notice the weight of your body", "know this in a way of your body", true),
            ("a helpful habit is to pause", "a help will have it as to pause", true),
            ("the thought pulls you away notice it", "the thoughtful new way know this it", true),
            // Other words of the meditations, and a sentence left out.
            ("rest your hands on your knees", "the sky is wide and open", false),
            ("breathe in and let it go now", "breathe now", false),
        ] as [(String, String, Bool)]
    )
    func mishearings(text: String, heard: String, alike: Bool) {
        let comparison = SpeechComparison(text: text, heard: heard.split(separator: " ").map(String.init))
        #expect(comparison.errors > 0)
        #expect((comparison.failure(under: SpeechCheckRules()) == nil) == alike)
        #expect((comparison.unheardWords == 0) == alike, "\(comparison)")
    }

    @Test(
        "The rules: more than 4 words in a row not heard, more than a quarter not heard (half, under 20 words), or nothing",
        arguments: [
            (
                "one two three four five six seven eight nine ten", "one two three four five six seven eight nine ten",
                nil
            ),
            // A sentence of five words left out: a run of 5.
            (
                "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen",
                "one two three four five eleven twelve thirteen fourteen fifteen", "5 in a row"
            ),
            // Four words left out of twenty: a run of 4, a share of 0.2: passes.
            ("a b c d e f g h i j k l m n o p q r s t", "a b c d e f g h i j k l m n o p", nil),
            // Six of twenty, two and two and two: over a quarter.
            ("a b c d e f g h i j k l m n o p q r s t", "a d e f g j k l m n q r s t", "6 of its 20 words not heard"),
            // Words added are the recognizer's: five of them do not fail a clip.
            ("rest now", "and so we will rest now", nil),
            // One word of three misheard passes; two of three, not sounding alike, fail.
            ("peace be still", "go be still", nil),
            ("peace be still", "go home still", "2 of its 3 words not heard"),
            // Half of a short clip heard passes.
            ("notice the contact points holding you", "and notice the contact by installing you", nil),
            ("breathe", "", "no speech heard"),
            ("", "", nil),
        ] as [(String, String, String?)]
    )
    func rules(text: String, heard: String, failure: String?) {
        let comparison = SpeechComparison(text: text, heard: heard.split(separator: " ").map(String.init))
        let reason = comparison.failure(under: SpeechCheckRules())
        if let failure {
            #expect(reason?.contains(failure) == true, "\(reason ?? "passed")")
        } else {
            #expect(reason == nil)
        }
    }
}
