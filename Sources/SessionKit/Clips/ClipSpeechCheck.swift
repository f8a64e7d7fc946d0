import SessionTimeline

extension ClipPreparer {
    /// How many times a clip is synthesized in all before failing the speech check fails it.
    static let speechCheckTries = 3

    /// Runs the speech check (`--check-speech`) over the ready clips of `result`: each clip in the
    /// cache is transcribed and compared with its text. A clip that fails is synthesized again and
    /// checked again, up to ``speechCheckTries`` times in all; one that still fails (or that
    /// cannot be made again: offline) is a failed clip, with what was heard against its text, so
    /// that nothing is rendered from it. Clips from the cache are checked too: a cache entry
    /// swapped for another text's clip is caught and replaced.
    ///
    /// `result.speech` gets what the last check of each clip heard.
    /// - Throws: ``SessionError`` (`recognizerUnavailable`) when the recognizer cannot run;
    ///   `cancelled`.
    package func checkSpeech(
        of result: inout PreparedClips,
        with check: SpeechCheck,
        warn: @Sendable (String) -> Void = { _ in }
    ) async throws(SessionError) {
        let clock = ContinuousClock()
        let started = clock.now
        var heard: [String: (SpeechCheck.Finding?, String?)] = [:]
        var pending = result.entries.filter { entry in
            if case .ready? = result.states[entry.key] { true } else { false }
        }
        var tries = 1
        while !pending.isEmpty {
            let clips = pending.compactMap { entry -> SpeechCheck.Clip? in
                guard case .ready(let source)? = result.states[entry.key] else { return nil }
                return SpeechCheck.Clip(
                    span: RecognizerSpan(
                        path: entry.path,
                        frameCount: source.frameCount,
                        sampleRate: source.sampleRate
                    ),
                    text: entry.text
                )
            }
            var failing: [ClipCache.Entry] = []
            for (entry, finding) in zip(pending, try await check.check(clips)) {
                switch finding {
                case .success(let finding):
                    heard[entry.key] = (finding, finding.failure)
                    if finding.failure != nil { failing.append(entry) }
                case .failure(let error):
                    heard[entry.key] = (nil, "cannot be heard: \(error.description)")
                    failing.append(entry)
                }
            }
            guard !failing.isEmpty else { break }
            guard provider != nil, tries < Self.speechCheckTries else {
                for entry in failing {
                    let reason = heard[entry.key]?.1 ?? ""
                    result.states[entry.key] =
                        provider == nil
                        ? .unusable("fails the speech check: \(reason)")
                        : .failed("the voice did not say its text in \(tries) tries: \(reason)")
                }
                break
            }
            tries += 1
            for entry in failing {
                warn(
                    "The clip for \(quoted(entry.text)) (key \(entry.key)) fails the speech check: "
                        + "\(heard[entry.key]?.1 ?? ""); synthesizing it again (try \(tries) of \(Self.speechCheckTries))"
                )
            }
            let again = try await prepare(texts: failing.map(\.text), replacing: Set(failing.map(\.key)), warn: warn)
            for entry in failing {
                result.states[entry.key] = again.states[entry.key]
                result.marks[entry.key] = again.marks[entry.key]
            }
            result.synthesized += again.synthesized
            pending = failing.filter { entry in
                if case .ready? = result.states[entry.key] { true } else { false }
            }
        }
        var summary = SpeechCheckSummary()
        for entry in result.entries {
            if let (finding, _) = heard[entry.key], let finding { summary.add(finding, key: entry.key) }
        }
        result.speech = summary
        result.elapsed += clock.now - started
    }
}
