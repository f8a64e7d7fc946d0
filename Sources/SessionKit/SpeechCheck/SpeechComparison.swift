/// What a recognizer heard of a clip against the clip's text, word by word (``SpokenWords``):
/// the words aligned by least edits, the word error rate, and the longest run of words that
/// differ, which the check judges by (``SpeechCheckRules``).
///
/// A small recognizer mishears a synthetic voice often, and always the same way: it hears
/// sounds, and writes other words for them ("notice the weight" as "know this in a way"). A run
/// of differing words that sounds like its text is such a mishearing, and is not held against
/// the clip; a left-out sentence (words not heard at all) or another text never sounds alike.
package struct SpeechComparison: Sendable, Equatable {
    /// The text's words, normalized.
    package var expected: [String]
    /// The words heard, normalized.
    package var heard: [String]
    /// Words substituted, left out and added: the edits from `expected` to `heard`.
    package var errors: Int
    /// The text's words not heard: substituted or left out, in runs that do not sound like their
    /// text (``soundsAlike(_:_:)``). Words heard that the text does not have are not counted: a
    /// recognizer adds words to a pause or a noise, a voice does not.
    package var unheardWords: Int
    /// The most of the text's words in one run not heard, with no matching word between them.
    package var longestRun: Int
    /// The run's words: what the text says there, and what was heard.
    package var runExpected: [String]
    package var runHeard: [String]

    /// `errors` over the text's words (1 for a text of no words that was heard saying some).
    package var wordErrorRate: Double {
        expected.isEmpty ? (heard.isEmpty ? 0 : 1) : Double(errors) / Double(expected.count)
    }

    /// Compares `text` with the words `heard`.
    package init(text: String, heard: [String]) {
        self.init(expected: SpokenWords.of(text), heard: heard.flatMap(SpokenWords.of))
    }

    /// Aligns two lists of normalized words by least edits (substitutions, deletions and
    /// insertions alike cost one; a match costs nothing), in O(n·m) time and memory.
    package init(expected: [String], heard: [String]) {
        self.expected = expected
        self.heard = heard
        let (n, m) = (expected.count, heard.count)
        var cost = [Int](repeating: 0, count: (n + 1) * (m + 1))
        func at(_ i: Int, _ j: Int) -> Int { i * (m + 1) + j }
        for i in 0...n { cost[at(i, 0)] = i }
        for j in 0...m { cost[at(0, j)] = j }
        if n > 0 && m > 0 {
            for i in 1...n {
                for j in 1...m {
                    let substitution = cost[at(i - 1, j - 1)] + (expected[i - 1] == heard[j - 1] ? 0 : 1)
                    cost[at(i, j)] = min(substitution, cost[at(i - 1, j)] + 1, cost[at(i, j - 1)] + 1)
                }
            }
        }
        errors = cost[at(n, m)]
        // Back from the end: the runs of edits between matching words.
        var runs: [(expected: Range<Int>, heard: Range<Int>, edits: Int)] = []
        var (i, j) = (n, m)
        var run = (expectedEnd: n, heardEnd: m, edits: 0)
        while i > 0 || j > 0 {
            if i > 0, j > 0, expected[i - 1] == heard[j - 1], cost[at(i, j)] == cost[at(i - 1, j - 1)] {
                if run.edits > 0 { runs.append((i..<run.expectedEnd, j..<run.heardEnd, run.edits)) }
                (i, j) = (i - 1, j - 1)
                run = (i, j, 0)
                continue
            }
            if i > 0, j > 0, cost[at(i, j)] == cost[at(i - 1, j - 1)] + 1 {
                (i, j) = (i - 1, j - 1)
            } else if i > 0, cost[at(i, j)] == cost[at(i - 1, j)] + 1 {
                i -= 1
            } else {
                j -= 1
            }
            run.edits += 1
        }
        if run.edits > 0 { runs.append((0..<run.expectedEnd, 0..<run.heardEnd, run.edits)) }
        // A run that sounds like its text is the recognizer's mishearing, not the voice's fault.
        let differing = runs.filter { run in
            !Self.soundsAlike(Array(expected[run.expected]), Array(heard[run.heard]))
        }
        let longest = differing.max { $0.expected.count < $1.expected.count }
        longestRun = longest?.expected.count ?? 0
        unheardWords = differing.reduce(0) { $0 + $1.expected.count }
        runExpected = longest.map { Array(expected[$0.expected]) } ?? []
        runHeard = longest.map { Array(heard[$0.heard]) } ?? []
    }

    /// The most words a side of a run may have to sound alike: a mishearing spans a few words.
    static let alikeWords = 12
    /// The largest share of letters that may differ between two runs that sound alike, once both
    /// are spelled by sound (``soundSpelling(_:)``). Measured on the mishearings of tiny.en on
    /// Piper's and eSpeak NG's meditations ("notice the weight" heard as "know this in a way":
    /// 0.42; "helpful habit is" as "help will have it as": 0.14) against 2,000 pairs of other
    /// words of the meditations (1 % at or under 0.45, the median 0.64).
    static let alikeDistance = 0.45

    /// Whether `heard` sounds like `expected`: neither empty, at most ``alikeWords`` words each,
    /// and their sound spellings within ``alikeDistance`` of each other (letters edited, over the
    /// longer).
    static func soundsAlike(_ expected: [String], _ heard: [String]) -> Bool {
        guard !expected.isEmpty, !heard.isEmpty, expected.count <= alikeWords, heard.count <= alikeWords else {
            return false
        }
        let (a, b) = (soundSpelling(expected.joined()), soundSpelling(heard.joined()))
        var previous = Array(0...b.count)
        for (row, letter) in a.enumerated() {
            var current = [row + 1] + [Int](repeating: 0, count: b.count)
            for (column, other) in b.enumerated() {
                current[column + 1] = min(
                    previous[column] + (letter == other ? 0 : 1),
                    previous[column + 1] + 1,
                    current[column] + 1
                )
            }
            previous = current
        }
        return Double(previous[b.count]) <= alikeDistance * Double(max(a.count, b.count))
    }

    /// Letters spelled roughly by sound, so that what a recognizer mishears compares with the
    /// text: a few English spellings of one sound made one (`ph` `f`, `c` `k`, `z` `s`, `th` `t`,
    /// `y` `i`, …), every run of vowels one vowel, and doubled letters single.
    static func soundSpelling(_ letters: String) -> [Character] {
        var text = letters
        for (spelling, sound) in [
            ("ph", "f"), ("ck", "k"), ("qu", "kw"), ("q", "k"), ("x", "ks"), ("z", "s"), ("c", "k"), ("v", "f"),
            ("gh", ""), ("wh", "w"), ("th", "t"), ("y", "i"),
        ] {
            text = text.replacing(spelling, with: sound)
        }
        var spelled: [Character] = []
        for letter in text {
            let sound: Character = "aeiou".contains(letter) ? "a" : letter
            if spelled.last != sound { spelled.append(sound) }
        }
        return spelled
    }

    /// The share of the text's words not heard (0 for a text of no words).
    package var unheardShare: Double {
        expected.isEmpty ? 0 : Double(unheardWords) / Double(expected.count)
    }

    /// Why the clip fails `rules`, as a phrase; `nil` when it passes.
    package func failure(under rules: SpeechCheckRules) -> String? {
        let heardNothing = heard.isEmpty && !expected.isEmpty
        let allowedShare =
            expected.count < rules.shortClipWords ? rules.maximumUnheardShareOfShortClips : rules.maximumUnheardShare
        guard heardNothing || unheardShare > allowedShare || longestRun > rules.maximumRun else { return nil }
        if heardNothing { return "no speech heard where the script says \(Self.quote(expected))" }
        let rate = (wordErrorRate * 100).rounded() / 100
        return "heard \(Self.quote(runHeard)) where the script says \(Self.quote(runExpected)) "
            + "(\(unheardWords) of its \(expected.count) words not heard, \(longestRun) in a row; "
            + "word error rate \(rate))"
    }

    /// Words in quotes, the first 12 then `…`.
    static func quote(_ words: [String]) -> String {
        "\"" + words.prefix(12).joined(separator: " ") + (words.count > 12 ? " …" : "") + "\""
    }
}

/// When the speech check fails a clip (docs/speech-check.md): when nothing is heard where the
/// text has words (silence or noise); when more than ``maximumRun`` of its words in a row are
/// not heard (a sentence left out, a clip cut short, another text); or when more than
/// ``maximumUnheardShare`` of its words are not heard, or ``maximumUnheardShareOfShortClips``
/// for a clip of fewer than ``shortClipWords`` words (a small recognizer mishears one or two
/// words of a short clip of a synthetic voice: "Notice the contact points holding you" heard as
/// "know this look contact by installing you").
package struct SpeechCheckRules: Sendable, Equatable {
    package var maximumRun = 4
    package var maximumUnheardShare = 0.25
    package var maximumUnheardShareOfShortClips = 0.5
    package var shortClipWords = 20

    package init() {}
}
