package import Foundation

/// A caption on screen: its lines, from its first word's first frame to its last word's last, and
/// each word's place (for players that highlight the word being spoken).
package struct CaptionCue: Sendable, Equatable {
    /// Where it appears and where it goes, in the output's frames.
    package var startFrame: Frames
    package var endFrame: Frames
    /// Its words as the script writes them (punctuation attached), each with its first frame, in
    /// order; ``lines`` says where the lines break.
    package var words: [(text: String, startFrame: Frames)]
    /// How many of ``words`` each line holds.
    package var lineWordCounts: [Int]

    /// Its lines, the words of each joined by spaces.
    package var lines: [String] {
        var lines: [String] = []
        var next = 0
        for count in lineWordCounts {
            lines.append(words[next..<(next + count)].map(\.text).joined(separator: " "))
            next += count
        }
        return lines
    }

    package static func == (left: CaptionCue, right: CaptionCue) -> Bool {
        left.startFrame == right.startFrame && left.endFrame == right.endFrame
            && left.lineWordCounts == right.lineWordCounts
            && left.words.map(\.text) == right.words.map(\.text)
            && left.words.map(\.startFrame) == right.words.map(\.startFrame)
    }
}

/// A timeline's speech as captions and transcripts: WebVTT (with each word's time, and the phases
/// as chapters), SubRip, and the Podcasting 2.0 JSON transcript, all from the words' frames
/// (``PlacedClip/words``), never guessed.
///
/// A cue is a sentence, or as much of one as fits two lines of 42 characters (lines break between
/// words; a longer sentence goes on in the next cue, a word longer than a line has one to
/// itself). Times are the output's frames rounded up to the millisecond, so that a cue or word
/// never shows before its first frame is heard.
package enum Captions {
    /// The longest line, in characters, and the most lines a cue has: the BBC's and Netflix's
    /// rules for subtitles, which Apple's podcast transcripts follow too.
    package static let maximumLineLength = 42
    package static let maximumLines = 2

    /// The spoken items that have no word timing (their engine gave none): captions leave them out.
    package static func itemsWithoutWords(in timeline: Timeline) -> [TimelineItem] {
        timeline.items.filter { $0.clip != nil && ($0.clip?.words?.isEmpty ?? true) }
    }

    /// What captions of `timeline` leave out, as a warning's words: `2 of 5 spoken items have no
    /// word timing (…) and are left out`; `nil` when every spoken item has its words.
    package static func leftOut(of timeline: Timeline) -> String? {
        let unmarked = itemsWithoutWords(in: timeline).count
        guard unmarked > 0 else { return nil }
        let spoken = timeline.items.filter { $0.clip != nil }.count
        return "\(unmarked) of \(spoken) spoken items have no word timing (clips whose voice gave none, "
            + "or that are not their text's speech) and are left out"
    }

    /// The cues of `timeline`'s speech, in order.
    package static func cues(of timeline: Timeline) -> [CaptionCue] {
        var cues: [CaptionCue] = []
        for item in timeline.items {
            guard let clip = item.clip, let words = clip.words, !words.isEmpty else { continue }
            let sentences =
                clip.sentences.flatMap { $0.isEmpty ? nil : $0 }
                ?? [SpeechMark(text: clip.text, startFrame: words[0].startFrame, frameCount: .zero)]
            for (index, sentence) in sentences.enumerated() {
                let end = index + 1 < sentences.count ? sentences[index + 1].startFrame : Frames(Int64.max)
                let inSentence = words.filter { $0.startFrame >= sentence.startFrame && $0.startFrame < end }
                guard !inSentence.isEmpty else { continue }
                cues += Self.cues(for: inSentence, shownAs: displayed(inSentence, in: sentence.text))
            }
        }
        return cues
    }

    /// Each of `words` as `text` shows it: from where the word is found to where the next is,
    /// trimmed, so that punctuation stays with its word; the word's own text where it is not found.
    static func displayed(_ words: [SpeechMark], in text: String) -> [String] {
        var found: [Range<String.Index>?] = []
        var cursor = text.startIndex
        for word in words {
            let range = text.range(of: word.text, range: cursor..<text.endIndex)
            found.append(range)
            if let range { cursor = range.upperBound }
        }
        return words.indices.map { index in
            guard let range = found[index] else { return words[index].text }
            let next = found[(index + 1)...].lazy.compactMap { $0 }.first?.lowerBound ?? text.endIndex
            let start = index == 0 ? text.startIndex : range.lowerBound
            let shown = text[start..<next].trimmingCharacters(in: .whitespacesAndNewlines)
            return shown.isEmpty ? words[index].text : shown
        }
    }

    /// `words` (shown as `shown`) filled into cues of at most ``maximumLines`` lines of
    /// ``maximumLineLength`` characters.
    private static func cues(for words: [SpeechMark], shownAs shown: [String]) -> [CaptionCue] {
        var cues: [CaptionCue] = []
        var cueWords: [(text: String, startFrame: Frames)] = []
        var lineCounts: [Int] = []
        var lineLength = 0
        var lastEnd = Frames.zero
        func close() {
            guard !cueWords.isEmpty else { return }
            cues.append(
                CaptionCue(
                    startFrame: cueWords[0].startFrame,
                    endFrame: lastEnd,
                    words: cueWords,
                    lineWordCounts: lineCounts
                )
            )
            (cueWords, lineCounts, lineLength) = ([], [], 0)
        }
        for (word, text) in zip(words, shown) {
            let length = text.count
            if lineCounts.isEmpty || lineLength + 1 + length > maximumLineLength {
                if lineCounts.count == maximumLines { close() }
                lineCounts.append(0)
                lineLength = length
            } else {
                lineLength += 1 + length
            }
            lineCounts[lineCounts.count - 1] += 1
            cueWords.append((text, word.startFrame))
            lastEnd = word.startFrame + word.frameCount
        }
        close()
        return cues
    }

    // MARK: Files

    /// The captions as WebVTT: a cue per ``cues(of:)``, each word after its cue's first preceded
    /// by its time as a timestamp tag (`<00:01:02.345>`), the text escaped as WebVTT requires.
    package static func webVTT(_ timeline: Timeline) -> String {
        let rate = timeline.sampleRate
        var text = "WEBVTT\n"
        for cue in cues(of: timeline) {
            text += "\n\(vttTime(cue.startFrame, rate)) --> \(vttTime(cue.endFrame, rate))\n"
            var next = 0
            var lines: [String] = []
            for count in cue.lineWordCounts {
                let words = cue.words[next..<(next + count)].map { word in
                    let escaped = escaped(word.text)
                    return word.startFrame == cue.startFrame ? escaped : "<\(vttTime(word.startFrame, rate))>\(escaped)"
                }
                lines.append(words.joined(separator: " "))
                next += count
            }
            text += lines.joined(separator: "\n") + "\n"
        }
        return text
    }

    /// The phases as WebVTT chapters (a `kind="chapters"` track): one cue per phase, named as
    /// the script names it.
    package static func chaptersWebVTT(_ timeline: Timeline) -> String {
        let rate = timeline.sampleRate
        var text = "WEBVTT\n"
        for phase in timeline.phases where phase.endFrame > phase.startFrame {
            text +=
                "\n\(vttTime(phase.startFrame, rate)) --> \(vttTime(phase.endFrame, rate))\n\(escaped(phase.name))\n"
        }
        return text
    }

    /// The captions as SubRip (`.srt`): numbered cues, `HH:MM:SS,mmm` times, no word times.
    package static func subRip(_ timeline: Timeline) -> String {
        let rate = timeline.sampleRate
        var text = ""
        for (index, cue) in cues(of: timeline).enumerated() {
            if index > 0 { text += "\n" }
            let (start, end) = (clock(cue.startFrame, rate, separator: ","), clock(cue.endFrame, rate, separator: ","))
            text += "\(index + 1)\n\(start) --> \(end)\n\(cue.lines.joined(separator: "\n"))\n"
        }
        return text
    }

    /// The words as a Podcasting 2.0 JSON transcript (`application/json`, version 1.0.0): one
    /// segment per word, its `startTime` and `endTime` in seconds (to the millisecond, rounded
    /// up), its `body` the word as the script shows it.
    package static func transcriptJSON(_ timeline: Timeline) -> Data {
        struct Segment: Encodable {
            var startTime: Double
            var endTime: Double
            var body: String
        }
        struct Transcript: Encodable {
            var version = "1.0.0"
            var segments: [Segment]
        }
        let rate = timeline.sampleRate
        var segments: [Segment] = []
        for cue in cues(of: timeline) {
            for (index, word) in cue.words.enumerated() {
                let end = index + 1 < cue.words.count ? cue.words[index + 1].startFrame : cue.endFrame
                segments.append(
                    Segment(
                        startTime: Double(milliseconds(word.startFrame, rate)) / 1_000,
                        endTime: Double(milliseconds(end, rate)) / 1_000,
                        body: word.text
                    )
                )
            }
        }
        return CanonicalJSON.encode(Transcript(segments: segments))
    }

    /// `frames` at `rate` in whole milliseconds, rounded up: never before the frame.
    static func milliseconds(_ frames: Frames, _ rate: SampleRate) -> Int64 {
        let hertz = Int64(rate.hertz)
        return (frames.count * 1_000 + hertz - 1) / hertz
    }

    /// `HH:MM:SS.mmm` (WebVTT's form, hours always written).
    static func vttTime(_ frames: Frames, _ rate: SampleRate) -> String {
        clock(frames, rate, separator: ".")
    }

    private static func clock(_ frames: Frames, _ rate: SampleRate, separator: String) -> String {
        let total = milliseconds(frames, rate)
        func two(_ value: Int64) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = String(total % 1_000 + 1_000).dropFirst()
        return "\(two(total / 3_600_000)):\(two(total / 60_000 % 60)):\(two(total / 1_000 % 60))\(separator)\(fraction)"
    }

    /// `text` with `&`, `<` and `>` as WebVTT's character references.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}

/// A captions file's format, chosen by its name's extension.
package enum CaptionFormat: String, Sendable, CaseIterable {
    /// WebVTT (`.vtt`), with each word's time.
    case webVTT = "vtt"
    /// SubRip (`.srt`).
    case subRip = "srt"
    /// The Podcasting 2.0 JSON transcript (`.json`), word by word.
    case transcriptJSON = "json"

    /// The format `path`'s extension names (letter case aside); `nil` for any other.
    package init?(path: String) {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = name.lastIndex(of: "."),
            let format = Self(rawValue: name[name.index(after: dot)...].lowercased())
        else { return nil }
        self = format
    }

    /// Where WebVTT captions written to `path` have their chapters: `NAME.chapters.vtt` beside
    /// `NAME.vtt`; `nil` for another format.
    package static func chaptersPath(forCaptionsAt path: String) -> String? {
        guard Self(path: path) == .webVTT else { return nil }
        return String(path.dropLast(".vtt".count)) + ".chapters.vtt"
    }

    /// `timeline`'s captions in this format.
    package func data(of timeline: Timeline) -> Data {
        switch self {
        case .webVTT: Data(Captions.webVTT(timeline).utf8)
        case .subRip: Data(Captions.subRip(timeline).utf8)
        case .transcriptJSON: Captions.transcriptJSON(timeline)
        }
    }
}
