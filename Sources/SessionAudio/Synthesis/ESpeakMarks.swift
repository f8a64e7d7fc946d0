import Foundation
internal import SessionTimeline

/// Where eSpeak NG spoke each word and sentence of a text, from its synthesis events, placed
/// where the sound is.
///
/// eSpeak reports each word's first character and length in the text, and the sample its
/// synthesis of the word starts at; each sentence's first character; and the sample each clause
/// ends at. The event's sample is where eSpeak begins the word's phonemes, which is not always
/// where it is heard: a word after a pause (or at the very start) begins with silence up to a
/// plosive's burst, and a word before a pause ends in it. So a word whose event falls in
/// silence starts at its first sample of sound (``HeardSound/decodedLevel``, −40 dBFS, or louder), and every word ends after its
/// last such sample before the next event: in a pause, the listener hears no word. A sentence
/// runs from its first word's start to its last word's end. Words keep the script's text (its
/// characters between white space, without the punctuation around them), matched to eSpeak's
/// events as ``token(at:in:after:)`` says.
enum ESpeakMarks {
    /// The words and sentences of `text` as eSpeak spoke them in `samples`, given its `events`;
    /// `nil` when an event points outside the samples or before the one before it (marks that do
    /// not fit are never kept).
    static func marks(
        of text: String,
        events: [ESpeakTextEvent],
        samples: [Int16],
        level: Int16 = HeardSound.decodedLevel
    ) -> (words: [SpeechMark], sentences: [SpeechMark])? {
        let scalars = Array(text.unicodeScalars)
        let tokens = Self.words(of: scalars)
        var words: [SpeechMark] = []
        // The last of `tokens` a word event was matched to.
        var lastToken = -1
        // Each sentence's first scalar (from 0), and the index of its first word.
        var sentenceStarts: [(scalar: Int, firstWord: Int)] = []
        var previousSample = 0
        for (index, event) in events.enumerated() {
            guard event.sample >= previousSample, event.sample <= samples.count else { return nil }
            previousSample = event.sample
            switch event.kind {
            case .clauseEnd:
                continue
            case .sentence:
                guard event.textPosition >= 1, event.textPosition <= scalars.count + 1 else { return nil }
                sentenceStarts.append((event.textPosition - 1, words.count))
            case .word:
                guard let token = Self.token(at: event, in: tokens, after: lastToken) else { continue }
                lastToken = token
                let next = min(samples.count, events[(index + 1)...].first { $0.sample > event.sample }?.sample ?? .max)
                let (start, end) = heard(from: event.sample, before: next, in: samples, level: level)
                words.append(
                    SpeechMark(
                        text: String(String.UnicodeScalarView(scalars[tokens[token]])),
                        startFrame: Frames(Int64(start)),
                        frameCount: Frames(Int64(end - start))
                    )
                )
            }
        }
        var sentences: [SpeechMark] = []
        for (index, sentence) in sentenceStarts.enumerated() {
            let nextStart: (scalar: Int, firstWord: Int) =
                index + 1 < sentenceStarts.count ? sentenceStarts[index + 1] : (scalars.count, words.count)
            guard sentence.firstWord < nextStart.firstWord, sentence.scalar <= nextStart.scalar else { continue }
            let first = words[sentence.firstWord]
            let last = words[nextStart.firstWord - 1]
            let sentenceText = String(String.UnicodeScalarView(scalars[sentence.scalar..<nextStart.scalar]))
                .trimmingCharacters(in: .whitespacesAndNewlines)
            sentences.append(
                SpeechMark(
                    text: sentenceText,
                    startFrame: first.startFrame,
                    frameCount: last.startFrame + last.frameCount - first.startFrame
                )
            )
        }
        return (words, sentences)
    }

    /// The words of a text, as ranges of its scalars: each run of characters between white space,
    /// less the punctuation around it (a run of punctuation alone is no word).
    static func words(of scalars: [Unicode.Scalar]) -> [Range<Int>] {
        var words: [Range<Int>] = []
        var index = 0
        while index < scalars.count {
            while index < scalars.count, scalars[index].properties.isWhitespace { index += 1 }
            var (first, end) = (index, index)
            while end < scalars.count, !scalars[end].properties.isWhitespace { end += 1 }
            index = end
            let isPunctuation = { (scalar: Unicode.Scalar) in CharacterSet.punctuationCharacters.contains(scalar) }
            while first < end, isPunctuation(scalars[first]) { first += 1 }
            while end > first, isPunctuation(scalars[end - 1]) { end -= 1 }
            if end > first { words.append(first..<end) }
        }
        return words
    }

    /// The index in `tokens` of the word `event` starts, if it is a word after token `last`.
    ///
    /// eSpeak's positions are not always a word's: it reports words of no characters (at a
    /// clause's end), now and then a position inside the word before (its next word's event at
    /// "Most" + 1 for "of" in "Most of the time"), and joins some short words to another ("on the"
    /// is one word to it). So an event is the word whose characters hold its position; an event
    /// of no characters, outside every word (a symbol said as a word: `&`), or inside a word
    /// already matched is no new word. A word may then have no mark of its own, never a wrong one.
    static func token(at event: ESpeakTextEvent, in tokens: [Range<Int>], after last: Int) -> Int? {
        let position = event.textPosition - 1
        guard event.length > 0, position >= 0,
            let token = tokens.firstIndex(where: { $0.contains(position) })
        else { return nil }
        return token > last ? token : nil
    }

    /// The samples of `samples` from `start` up to `bound` a listener hears as the word: from its
    /// first sound if it starts in silence, to just after its last sound.
    static func heard(
        from start: Int,
        before bound: Int,
        in samples: [Int16],
        level: Int16
    ) -> (start: Int, end: Int) {
        func sounds(_ index: Int) -> Bool { HeardSound.sounds(samples, index, level: level) }
        var first = start
        if start < bound, !sounds(start) {
            while first < bound, !sounds(first) { first += 1 }
            // A word eSpeak made no sound for keeps its event's place.
            if first == bound { first = start }
        }
        var end = bound
        while end > first + 1, !sounds(end - 1) { end -= 1 }
        return (first, max(end, first + (bound > first ? 1 : 0)))
    }

    /// Where an event at `sample` of `spoken` belongs in `clip`, the same speech spoken another
    /// time (at its own rate), given `aligned`, where the alignment put it (within a frame, 5 ms).
    ///
    /// Most events are inside sound, and 5 ms is close enough. An event in silence before a sound
    /// is not: the word starts at that sound, and a few milliseconds either way decide whether it
    /// falls in the silence (and moves to the sound) or in the sound before the pause (and stays,
    /// up to a pause too early); an event at a sound's very start bounds the word before it, which
    /// must not reach into that sound. So an event with no sound in the 10 ms before it keeps its
    /// distance to the next sound: it is placed that far before the onset after silence nearest
    /// to where the alignment puts that sound in `clip` (within 20 ms), or left where aligned if
    /// there is none.
    static func carried(
        _ sample: Int,
        from spoken: [Int16],
        to aligned: Int,
        in clip: [Int16],
        rates: (spoken: Int, clip: Int)
    ) -> Int {
        let silentBefore = (max(0, sample - rates.spoken / 100)..<min(sample, spoken.count)).allSatisfy {
            !HeardSound.sounds(spoken, $0, level: HeardSound.decodedLevel)
        }
        guard sample < spoken.count, silentBefore,
            let onset = (sample..<min(spoken.count, sample + rates.spoken / 2)).first(where: {
                HeardSound.sounds(spoken, $0, level: HeardSound.decodedLevel)
            })
        else { return aligned }
        let quiet = rates.clip / 100
        let distance = (onset - sample) * rates.clip / rates.spoken
        let expected = aligned + distance
        let reach = 2 * quiet
        guard
            let nearest = HeardSound.nearestOnsetAfterSilence(
                to: expected,
                in: expected - reach..<expected + reach + 1,
                of: clip,
                quiet: quiet,
                level: HeardSound.decodedLevel
            )
        else { return aligned }
        return max(0, nearest - distance)
    }
}
