/// The check that a voice said the script: each clip is transcribed by an offline recognizer
/// (``SpeechRecognizer``) and what it heard compared with the clip's text
/// (``SpeechComparison``), judged by ``SpeechCheckRules``. docs/speech-check.md says what it
/// catches, what it costs and where it is blind.
package struct SpeechCheck: Sendable {
    package let recognizer: SpeechRecognizer
    /// The recognizer that hears again each clip ``recognizer`` fails; the clip fails only if it
    /// fails that too. A small model mishears a synthetic voice now and then (tiny.en failed 5 of
    /// 55 eSpeak NG clips of the meditations); a larger one is slower, and needed only there.
    package let confirmer: SpeechRecognizer?
    package let rules: SpeechCheckRules

    package init(recognizer: SpeechRecognizer, rules: SpeechCheckRules = SpeechCheckRules()) {
        self.recognizer = recognizer
        self.confirmer = recognizer.installation.confirmingModel.map {
            SpeechRecognizer(installation: recognizer.installation, model: $0, threads: recognizer.threads)
        }
        self.rules = rules
    }

    /// One clip to check: where its sound is, and what it should say.
    package struct Clip: Sendable {
        package var span: RecognizerSpan
        package var text: String

        package init(span: RecognizerSpan, text: String) {
            self.span = span
            self.text = text
        }
    }

    /// What was heard of one clip and how it compares, or why it could not be heard.
    package struct Finding: Sendable {
        package var heard: [HeardWord]
        package var comparison: SpeechComparison
        /// Why the clip fails the rules; `nil` when it passes.
        package var failure: String?
    }

    /// Each clip's finding, in the order given.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the recognizer cannot run at all.
    package func check(_ clips: [Clip]) async throws(SessionError) -> [Result<Finding, SessionError>] {
        var findings = judge(clips, try await recognizer.transcribe(clips.map(\.span)))
        let failing = findings.indices.filter { index in
            if case .success(let finding) = findings[index], finding.failure == nil { false } else { true }
        }
        guard let confirmer, !failing.isEmpty else { return findings }
        let again = failing.map { clips[$0] }
        for (index, finding) in zip(failing, judge(again, try await confirmer.transcribe(again.map(\.span)))) {
            findings[index] = finding
        }
        return findings
    }

    /// What each answer heard of its clip, judged.
    private func judge(
        _ clips: [Clip],
        _ answers: [Result<[HeardWord], SessionError>]
    ) -> [Result<Finding, SessionError>] {
        zip(clips, answers).map { clip, answer in
            answer.map { heard in
                let comparison = SpeechComparison(text: clip.text, heard: heard.map(\.text))
                return Finding(heard: heard, comparison: comparison, failure: comparison.failure(under: rules))
            }
        }
    }
}

/// What the speech check found over a file or a session, for reports: how many clips and words
/// were heard, how many words differed, and how many clips failed.
package struct SpeechCheckSummary: Sendable, Equatable, Encodable {
    package var clips = 0
    package var words = 0
    package var errors = 0
    package var failedClips = 0
    /// Each clip heard, in order.
    package var items: [HeardClip] = []

    package init() {}

    /// One clip as the check heard it.
    package struct HeardClip: Sendable, Equatable, Codable {
        /// The timeline item's index, when the clip is an item of a rendered file.
        package var item: Int?
        package var key: String?
        package var words: Int
        package var errors: Int
        /// The text's words not heard (``SpeechComparison/unheardWords``).
        package var unheardWords: Int
        package var longestRun: Int
        package var wordErrorRate: Double
        package var failed: Bool
        /// What was heard, as the recognizer wrote it.
        package var heard: String

        package init(_ finding: SpeechCheck.Finding, item: Int? = nil, key: String? = nil) {
            let comparison = finding.comparison
            self.item = item
            self.key = key
            words = comparison.expected.count
            errors = comparison.errors
            unheardWords = comparison.unheardWords
            longestRun = comparison.longestRun
            wordErrorRate = (comparison.wordErrorRate * 1_000).rounded() / 1_000
            failed = finding.failure != nil
            heard = finding.heard.map(\.text).joined(separator: " ")
        }
    }

    /// Errors over words, to three places (0 with no words).
    package var wordErrorRate: Double {
        words == 0 ? 0 : (Double(errors) / Double(words) * 1_000).rounded() / 1_000
    }

    package mutating func add(_ finding: SpeechCheck.Finding, item: Int? = nil, key: String? = nil) {
        add(HeardClip(finding, item: item, key: key))
    }

    package mutating func add(_ clip: HeardClip) {
        items.append(clip)
        clips += 1
        words += clip.words
        errors += clip.errors
        if clip.failed { failedClips += 1 }
    }

    /// Adds `other`'s clips.
    package mutating func merge(_ other: SpeechCheckSummary) {
        clips += other.clips
        words += other.words
        errors += other.errors
        failedClips += other.failedClips
        items += other.items
    }

    /// `speech: 8 clips, 239 words, word error rate 0.021, 0 clips failed`.
    package var line: String {
        "speech: \(clips) clip\(clips == 1 ? "" : "s"), \(words) words, word error rate \(wordErrorRate), "
            + "\(failedClips) clip\(failedClips == 1 ? "" : "s") failed"
    }

    private enum CodingKeys: String, CodingKey {
        case clips, words, errors, wordErrorRate, failedClips, items
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(clips, forKey: .clips)
        try container.encode(words, forKey: .words)
        try container.encode(errors, forKey: .errors)
        try container.encode(wordErrorRate, forKey: .wordErrorRate)
        try container.encode(failedClips, forKey: .failedClips)
        try container.encode(items, forKey: .items)
    }
}
