/// Parts text into sentences the way a person reading it aloud would pause: at `.`, `!`, `?` or
/// `…` (and runs of them, `?!`, `...`) followed by a space, but not after an abbreviation, an
/// initial or a German ordinal date, and not before a word that starts in lower case.
///
/// English and German are covered: `Dr. Smith`, `e.g. this`, `J. R. R. Tolkien`, `z. B. so`,
/// `Nr. 5`, `ca. drei`, `am 3. Mai`. Numbers never part a sentence (`3.5`, `5:30`, `1.000`:
/// a break needs a space after the mark). Where a voice speaks each sentence separately and
/// pauses between them (Piper), this rule decides where those pauses are.
package enum SentenceSplitter {
    /// The sentences of `text`, each trimmed, in order; the empty ones left out.
    package static func sentences(of text: String) -> [String] {
        sentences(of: text, endingWhere: endsSentence)
    }

    /// `text` parted at every mark before a space, abbreviations or not: how Piper's own split
    /// parted it before this rule (what ``SpeechPacing`` compares with to key clips).
    package static func sentencesAtEveryMark(of text: String) -> [String] {
        sentences(of: text, endingWhere: { _, _, _ in true })
    }

    /// The paragraphs of `text` (parted by a blank line), each as its sentences; the empty ones left out.
    package static func paragraphs(of text: String) -> [[String]] {
        text.split(separator: /\n[ \t\r\f\v]*\n/).map { sentences(of: String($0)) }.filter { !$0.isEmpty }
    }

    private static func sentences(
        of text: String,
        endingWhere endsSentence: (_ marks: String, _ word: String, _ next: String) -> Bool
    ) -> [String] {
        let characters = Array(text)
        var sentences: [String] = []
        var start = 0
        var index = 0
        while index < characters.count {
            guard terminators.contains(characters[index]) else {
                index += 1
                continue
            }
            // The run of marks, then any closing quotes and brackets.
            let markStart = index
            while index < characters.count, terminators.contains(characters[index]) { index += 1 }
            let marks = String(characters[markStart..<index])
            while index < characters.count, closers.contains(characters[index]) { index += 1 }
            guard index < characters.count, characters[index].isWhitespace else { continue }
            // The word before the marks, and the one after the space.
            var wordStart = markStart
            while wordStart > start, !characters[wordStart - 1].isWhitespace { wordStart -= 1 }
            let word = String(characters[wordStart..<markStart])
            var nextStart = index
            while nextStart < characters.count, characters[nextStart].isWhitespace { nextStart += 1 }
            var nextEnd = nextStart
            while nextEnd < characters.count, !characters[nextEnd].isWhitespace { nextEnd += 1 }
            let next = String(characters[nextStart..<nextEnd])
            if endsSentence(marks, word, next) {
                append(characters[start..<index], to: &sentences)
                start = nextStart
            }
            index = nextStart
        }
        append(characters[start...], to: &sentences)
        return sentences
    }

    /// Whether `marks` after `word` end a sentence when `next` follows.
    static func endsSentence(marks: String, word: String, next: String) -> Bool {
        guard let first = next.first(where: { $0.isLetter || $0.isNumber }) else { return true }
        // A word in lower case goes on the sentence (`etc. and`, `ca. drei`, `and then… slowly`).
        if first.isLowercase { return false }
        guard marks == "." else { return true }
        let bare = word.trimmingLeading { openers.contains($0) }
        let letters = bare.filter(\.isLetter)
        // An initial (`J.`, `z.`, `B.`) or an abbreviation (`Dr.`, `e.g.`, `Nr.`).
        if letters.count == 1 && bare.count == 1 { return false }
        if abbreviations.contains(bare.lowercased()) { return false }
        // `No. 5`, `Nos. 3 and 4`: a number follows; `Say no. Then…` ends a sentence.
        if ["no", "nos"].contains(bare.lowercased()), first.isNumber { return false }
        // A German ordinal date: `am 3. Mai`.
        if !bare.isEmpty, bare.allSatisfy(\.isNumber), months.contains(next.lowercased().filter(\.isLetter)) {
            return false
        }
        return true
    }

    private static func append(_ characters: ArraySlice<Character>, to sentences: inout [String]) {
        let sentence = String(characters).trimmingWhitespace
        if !sentence.isEmpty { sentences.append(sentence) }
    }

    static let terminators: Set<Character> = [".", "!", "?", "…"]
    /// What may close a sentence after its mark: English quotes (`”`, `’`), German ones (`“`, `‘`),
    /// guillemets either way round, brackets.
    static let closers: Set<Character> = ["\"", "'", "”", "’", "“", "‘", "»", "«", ")", "]"]
    static let openers: Set<Character> = ["\"", "'", "“", "‘", "„", "‚", "»", "«", "(", "["]

    /// Abbreviations that a capitalised word (a name, a number) usually follows: a full stop
    /// after them never ends a sentence. Lower case, without the final full stop.
    static let abbreviations: Set<String> = [
        // English titles and references.
        "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "mt", "ft", "gen", "col", "capt", "lt", "sgt", "rev", "hon",
        "fig", "vs", "cf", "e.g", "i.e", "approx", "vol", "pp",
        // German.
        "z.b", "d.h", "u.a", "bzw", "vgl", "ca", "nr", "hr", "hrn", "fr", "frl", "str", "tel", "abs", "bd", "hl",
        "dipl", "ing", "mag", "kap", "evtl", "ggf", "inkl", "zzgl", "sog", "s.o", "s.u", "o.ä",
        "u.ä", "usf", "geb", "gest", "jh", "ev", "kath", "bspw", "insb",
    ]

    /// German months, lower case, for ordinal dates (`am 3. Mai`).
    static let months: Set<String> = [
        "januar", "jänner", "februar", "märz", "april", "mai", "juni", "juli", "august", "september", "oktober",
        "november", "dezember",
    ]
}

extension String {
    /// Without leading and trailing whitespace and newlines.
    fileprivate var trimmingWhitespace: String {
        var characters = Substring(self)
        while characters.first?.isWhitespace == true { characters.removeFirst() }
        while characters.last?.isWhitespace == true { characters.removeLast() }
        return String(characters)
    }

    /// Without the leading characters that satisfy `predicate`.
    fileprivate func trimmingLeading(where predicate: (Character) -> Bool) -> String {
        String(drop(while: predicate))
    }
}
