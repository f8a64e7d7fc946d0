import Foundation

/// A text as the words a listener hears, so that a script and what a recognizer heard of it
/// compare word by word: lower case, no punctuation, numbers in words (`10` and `ten`, `3rd` and
/// `third`, `50%` and `fifty percent`, `7:30` and `seven thirty`), contractions spelled out on
/// both sides (`don't` and `do not`; `it's` and `it is`, while a possessive `'s` stays), a few
/// spellings the recognizer and scripts disagree on made one (`ok` and `okay`), and hyphens and
/// dashes parted (`well-being` is `well being`).
package enum SpokenWords {
    /// `text`'s words, normalized.
    package static func of(_ text: String) -> [String] {
        var text = text.precomposedStringWithCompatibilityMapping.lowercased()
        text = text.replacing("\u{2019}", with: "'").replacing("\u{2018}", with: "'")
        // 7:30 → 7 30; 7:00 → 7.
        text = text.replacing(/(\d):(\d\d)\b/) { match in
            match.output.2 == "00" ? "\(match.output.1)" : "\(match.output.1) \(match.output.2)"
        }
        text = text.replacing(/(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(st|nd|rd|th|%)?/) { match in
            " "
                + spoken(
                    whole: String(match.output.1),
                    fraction: match.output.2.map(String.init),
                    suffix: match.output.3.map(String.init)
                ) + " "
        }
        text = text.replacing("%", with: " percent ").replacing("&", with: " and ")
        text = text.replacing(/[a-z]+'(?:t|s|re|ve|ll|m|d)\b|\bcannot\b|\by'all\b/) { match in
            spelledOut(String(match.output))
        }
        text = text.replacing("'", with: "")
        var words: [String] = []
        for word in text.split(whereSeparator: { !($0.isLetter || $0.isNumber) }) {
            words += (sameWords[String(word)] ?? String(word)).split(separator: " ").map(String.init)
        }
        // "one hundred and five" is 105 as well as "one hundred five".
        return words.indices.compactMap { index in
            let word = words[index]
            let isNumberAnd =
                word == "and" && index > 0 && index < words.count - 1
                && ["hundred", "thousand"].contains(words[index - 1]) && numberWords.contains(words[index + 1])
            return isNumberAnd ? nil : word
        }
    }

    private static let ones = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
        "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    ]
    private static let tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
    private static let numberWords = Set(ones + tens.filter { !$0.isEmpty })
    private static let ordinals = [
        "one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth", "nine": "ninth",
        "twelve": "twelfth",
    ]
    /// Spellings the recognizer and scripts disagree on; both sides go through it.
    private static let sameWords = [
        "ok": "okay", "alright": "all right", "mhm": "mm", "hmm": "mm", "mr": "mister", "mrs": "missus",
        "dr": "doctor",
    ]
    /// Pronouns and question words whose `'s` is "is" (else it is a possessive, and stays).
    private static let isContracted: Set<String> = [
        "it", "that", "there", "here", "what", "where", "who", "how", "he", "she", "this", "everything", "nothing",
        "something", "someone", "everyone", "now", "when", "why",
    ]
    private static let irregular = [
        "won't": "will not", "can't": "can not", "cannot": "can not", "shan't": "shall not", "let's": "let us",
        "ain't": "is not", "y'all": "you all",
    ]

    /// A contraction spelled out: `don't` → `do not`; `it's` → `it is`; `body's` stays.
    static func spelledOut(_ word: String) -> String {
        if let whole = irregular[word] { return whole }
        guard let apostrophe = word.lastIndex(of: "'") else { return word }
        let stem = String(word[..<apostrophe])
        switch word[word.index(after: apostrophe)...] {
        case "t" where stem.hasSuffix("n"): return stem.dropLast() + " not"
        case "s": return isContracted.contains(stem) ? stem + " is" : word
        case "re": return stem + " are"
        case "ve": return stem + " have"
        case "ll": return stem + " will"
        case "m": return stem + " am"
        case "d": return stem + " would"
        default: return word
        }
    }

    /// A number as words: `1,250.5` → `one thousand two hundred fifty point five`; with `st`,
    /// `nd`, `rd` or `th`, the ordinal; with `%`, followed by `percent`.
    static func spoken(whole: String, fraction: String?, suffix: String?) -> String {
        let digits = whole.filter(\.isNumber)
        var words = Int(digits).map(cardinal) ?? digits.map { ones[Int(String($0)) ?? 0] }.joined(separator: " ")
        if let fraction {
            words += " point " + fraction.map { ones[Int(String($0)) ?? 0] }.joined(separator: " ")
        } else if let suffix, ["st", "nd", "rd", "th"].contains(suffix) {
            var parts = words.split(separator: " ").map(String.init)
            let last = parts.removeLast()
            let ordinal =
                ordinals[last] ?? (last.hasSuffix("y") ? last.dropLast() + "ieth" : last + "th")
            words = (parts + [ordinal]).joined(separator: " ")
        }
        if suffix == "%" { words += " percent" }
        return words
    }

    /// 0…9,999 in words, without "and" (`one hundred five`); beyond, digit by digit.
    static func cardinal(_ number: Int) -> String {
        switch number {
        case ..<20: return ones[max(0, number)]
        case ..<100: return tens[number / 10] + (number % 10 == 0 ? "" : " " + ones[number % 10])
        case ..<1_000: return ones[number / 100] + " hundred" + (number % 100 == 0 ? "" : " " + cardinal(number % 100))
        case ..<10_000:
            return cardinal(number / 1_000) + " thousand" + (number % 1_000 == 0 ? "" : " " + cardinal(number % 1_000))
        default: return String(number).map { ones[Int(String($0)) ?? 0] }.joined(separator: " ")
        }
    }
}
