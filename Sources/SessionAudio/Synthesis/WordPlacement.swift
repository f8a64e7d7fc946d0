import Foundation
package import SessionTimeline

/// Words an engine timed by its own units (Piper's phonemes), placed where they are heard, as
/// ``ESpeakMarks`` places eSpeak NG's: the span an engine gives a word can begin in the silence
/// before it, or a little after its sound has begun (Piper's first phoneme of a word after a
/// pause was measured from 23 ms before to 20 ms after the first sound at −40 dBFS).
///
/// So a word is moved to the nearest onset after silence (a sample of sound, ``HeardSound/level``,
/// after 10 ms under it) within 30 ms of its span's start, when there is one after the word
/// before; else, if its span starts in silence, to its first sound. It ends after its last
/// sound in its span. A sentence runs from its first word's start to its last word's end.
package enum WordPlacement {
    /// A word as the engine timed it: the script's token, `[start, end)` in the clip's frames.
    package struct Word: Sendable {
        package var text: String
        package var start: Int
        package var end: Int

        package init(text: String, start: Int, end: Int) {
            self.text = text
            self.start = start
            self.end = end
        }
    }

    /// A sentence as spoken, with its words that were timed.
    package struct Sentence: Sendable {
        package var text: String
        package var words: [Word]

        package init(text: String, words: [Word]) {
            self.text = text
            self.words = words
        }
    }

    /// The marks of `sentences` in `samples`; `nil` when a span is empty, outside the samples or
    /// before the end of the word before (marks that do not fit are never kept).
    package static func marks(of sentences: [Sentence], in samples: [Int16], sampleRate: SampleRate) -> SpeechMarks? {
        let quiet = sampleRate.hertz / 100
        let reach = sampleRate.hertz * 3 / 100
        var words: [SpeechMark] = []
        var marks: [SpeechMark] = []
        var previousEnd = 0
        for sentence in sentences {
            let first = words.count
            for word in sentence.words {
                guard word.start >= previousEnd, word.start < word.end, word.end <= samples.count else { return nil }
                let scalars = Array(word.text.unicodeScalars)
                // The token less the punctuation around it; a token of punctuation alone is no word.
                guard let letters = ESpeakMarks.words(of: scalars).first else { continue }
                let text = String(String.UnicodeScalarView(scalars[letters]))
                let onset = HeardSound.nearestOnsetAfterSilence(
                    to: word.start,
                    in: max(previousEnd, word.start - reach)..<min(word.end, word.start + reach + 1),
                    of: samples,
                    quiet: quiet
                )
                let start =
                    onset
                    ?? ESpeakMarks.heard(from: word.start, before: word.end, in: samples, level: HeardSound.level).start
                var end = word.end
                while end > start + 1, !HeardSound.sounds(samples, end - 1) { end -= 1 }
                words.append(
                    SpeechMark(text: text, startFrame: Frames(Int64(start)), frameCount: Frames(Int64(end - start)))
                )
                previousEnd = end
            }
            guard words.count > first else { continue }
            let (opening, closing) = (words[first], words[words.count - 1])
            marks.append(
                SpeechMark(
                    text: sentence.text.trimmingCharacters(in: .whitespacesAndNewlines),
                    startFrame: opening.startFrame,
                    frameCount: closing.startFrame + closing.frameCount - opening.startFrame
                )
            )
        }
        return SpeechMarks(sampleRate: sampleRate, words: words, sentences: marks)
    }
}
