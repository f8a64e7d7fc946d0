internal import SessionTimeline

/// The pauses a voice leaves inside one clip: between its sentences, and between its paragraphs
/// (text parted by a blank line). Guided speech wants them longer than a voice's own, and
/// putting them inside the clip keeps a segment one clip, placed as the script says.
///
/// Only Piper voices apply them (eSpeak and the servers pace speech themselves). Pauses that
/// differ from the defaults are part of a clip's cache key, so clips paced
/// differently never collide, and clips made with the defaults keep their keys.
public struct SpeechPacing: Sendable, Equatable, Hashable, Codable {
    /// The pause between sentences used unless one is chosen, in seconds: an unhurried reading.
    public static let defaultSentencePauseSeconds = 0.6
    /// The pause between paragraphs used unless one is chosen, in seconds.
    public static let defaultParagraphPauseSeconds = 1.5
    /// The pauses accepted, in seconds.
    package static let pauseRange: ClosedRange<Double> = 0...10

    /// The default pacing.
    public static let standard = SpeechPacing()

    /// The silence between two sentences of a paragraph, in seconds.
    public var sentencePauseSeconds: Double
    /// The silence between two paragraphs, in seconds.
    public var paragraphPauseSeconds: Double

    public init(
        sentencePauseSeconds: Double = Self.defaultSentencePauseSeconds,
        paragraphPauseSeconds: Double = Self.defaultParagraphPauseSeconds
    ) {
        self.sentencePauseSeconds = sentencePauseSeconds
        self.paragraphPauseSeconds = paragraphPauseSeconds
    }

    /// What is appended to the voice id in the cache key: empty for the defaults, else
    /// `;sentence-pause=0.8;paragraph-pause=1.5` (each written as Swift writes a `Double`).
    package var keySuffix: String {
        self == .standard ? "" : ";sentence-pause=\(sentencePauseSeconds);paragraph-pause=\(paragraphPauseSeconds)"
    }

    /// What a Piper clip's key adds for `text`: `;sentences=2` when ``SentenceSplitter`` parts it
    /// otherwise than at every full stop, `!`, `?` or `…` before a space, as Piper's own split did
    /// before (`Sit with Dr. Smith today.`): that clip sounds different now and must not be taken
    /// for the old one. Every other text is the same audio, under the same key as before.
    static func sentenceKeySuffix(for text: String) -> String {
        SentenceSplitter.sentences(of: text) == SentenceSplitter.sentencesAtEveryMark(of: text) ? "" : ";sentences=2"
    }

    /// The settings that cannot be used, as (which, rule); empty if both pauses are fine.
    var problems: [(setting: SettingProblem.Setting, rule: String)] {
        [(SettingProblem.Setting.sentencePause, sentencePauseSeconds), (.paragraphPause, paragraphPauseSeconds)]
            .compactMap { setting, seconds in
                Self.pauseRange.contains(seconds)
                    ? nil
                    : (
                        setting,
                        "\(seconds) is outside \(Self.pauseRange.lowerBound)…\(Self.pauseRange.upperBound) seconds"
                    )
            }
    }

    /// The pauses in frames at `sampleRate` (the voice's own rate), each rounded to the nearest frame.
    func frames(at sampleRate: SampleRate) -> (sentence: Frames, paragraph: Frames) {
        (
            sampleRate.frames(atSeconds: sentencePauseSeconds) ?? .zero,
            sampleRate.frames(atSeconds: paragraphPauseSeconds) ?? .zero
        )
    }
}
