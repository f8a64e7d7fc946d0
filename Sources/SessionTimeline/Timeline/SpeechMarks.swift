/// A stretch of speech: a word or a sentence, where it starts and how long it lasts.
///
/// Its frames count from the start of what holds it: a clip's own audio, at the clip's rate, as
/// a speech engine reports it (``SpeechMarks``), or the output, at the output's rate, once the
/// clip is placed in a timeline (``PlacedClip/words``).
public struct SpeechMark: Sendable, Equatable, Codable {
    /// The word or sentence, as the script writes it.
    public var text: String
    /// Where it starts.
    public var startFrame: Frames
    /// How long it lasts.
    public var frameCount: Frames

    public init(text: String, startFrame: Frames, frameCount: Frames) {
        self.text = text
        self.startFrame = startFrame
        self.frameCount = frameCount
    }
}

/// Where the words and sentences of a clip are in its audio, as its speech engine said, in
/// frames at ``sampleRate`` from the clip's first frame.
public struct SpeechMarks: Sendable, Equatable, Codable {
    /// The rate the marks count in: the clip's own.
    public var sampleRate: SampleRate
    /// Every word, in order.
    public var words: [SpeechMark]
    /// Every sentence, in order.
    public var sentences: [SpeechMark]

    public init(sampleRate: SampleRate, words: [SpeechMark], sentences: [SpeechMark] = []) {
        self.sampleRate = sampleRate
        self.words = words
        self.sentences = sentences
    }

    /// Why these marks cannot be those of a clip of `frameCount` frames at `sampleRate`: a mark
    /// that starts before the clip, ends after it or before the one before it starts; `nil`
    /// when they can be.
    package func problem(forClipOf frameCount: Frames, at sampleRate: SampleRate) -> String? {
        guard sampleRate == self.sampleRate else {
            return "the marks count at \(self.sampleRate.hertz) Hz, the clip plays at \(sampleRate.hertz) Hz"
        }
        for (name, marks) in [("word", words), ("sentence", sentences)] {
            var previous = Frames.zero
            for (index, mark) in marks.enumerated() {
                guard mark.startFrame >= previous, mark.frameCount >= .zero,
                    mark.startFrame + mark.frameCount <= frameCount
                else {
                    return "\(name) \(index + 1) (\(quoted(mark.text, limit: 30))) at frames "
                        + "\(mark.startFrame.count)+\(mark.frameCount.count) is out of order or past the clip's \(frameCount.count)"
                }
                previous = mark.startFrame
            }
        }
        return nil
    }

    /// The marks of a clip placed at `start` in an output at `outputRate`: each mark's start and
    /// end converted as positions (``SampleRate/frames(converting:from:)``) and moved by `start`,
    /// so that a mark's length is the difference of its converted ends and adjacent marks never
    /// overlap or part.
    package func placed(at start: Frames, in outputRate: SampleRate) -> (words: [SpeechMark], sentences: [SpeechMark]) {
        func place(_ marks: [SpeechMark]) -> [SpeechMark] {
            marks.map { mark in
                let from = outputRate.frames(converting: mark.startFrame, from: sampleRate)
                let to = outputRate.frames(converting: mark.startFrame + mark.frameCount, from: sampleRate)
                return SpeechMark(text: mark.text, startFrame: start + from, frameCount: to - from)
            }
        }
        return (place(words), place(sentences))
    }
}
