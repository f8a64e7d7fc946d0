package import SessionTimeline

extension SessionVerifier {
    /// Adds the speech check to `report` (`verify --speech`): each spoken item's span of the file
    /// at `path` is transcribed and compared with the item's text; a clip that fails the check's
    /// rules, or cannot be heard, is a `speech` problem naming the item, and what was heard.
    ///
    /// The file's own sound is checked, not the clips in the cache: what a listener gets.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the recognizer cannot run;
    ///   (`unreadableTimeline`) when the timeline was not checked against the file (another
    ///   rate), so its spans would be wrong.
    package static func checkSpeech(
        of report: inout VerificationReport,
        timeline: Timeline,
        check: SpeechCheck
    ) async throws(SessionError) {
        guard report.checkedTimeline else {
            throw SessionError(
                .unreadableTimeline,
                "Cannot check the speech of \(report.path): the file does not match its timeline's rate and channels"
            )
        }
        let spoken = timeline.items.filter { $0.clip != nil && $0.frameCount > .zero }
        let clips = spoken.map { item in
            SpeechCheck.Clip(
                span: RecognizerSpan(
                    path: report.path,
                    startFrame: item.startFrame,
                    frameCount: item.frameCount,
                    sampleRate: timeline.sampleRate
                ),
                text: item.clip?.text ?? ""
            )
        }
        var summary = SpeechCheckSummary()
        var problems: [VerificationProblem] = []
        for (item, finding) in zip(spoken, try await check.check(clips)) {
            let reason: String
            switch finding {
            case .success(let finding):
                summary.add(finding, item: item.index, key: item.clip?.key)
                guard let failure = finding.failure else { continue }
                reason = failure
            case .failure(let error):
                reason = "cannot be heard: \(error.description)"
            }
            problems.append(
                VerificationProblem(
                    kind: .speech,
                    frame: item.startFrame,
                    seconds: timeline.sampleRate.seconds(of: item.startFrame),
                    itemIndex: item.index,
                    itemName: VerificationText.name(of: item),
                    clipKey: item.clip?.key,
                    message:
                        "\(VerificationText.item(item)) at \(VerificationText.place(item.startFrame, rate: timeline.sampleRate)) \(reason)"
                )
            )
        }
        report.speech = summary
        report.problems += problems
    }
}
